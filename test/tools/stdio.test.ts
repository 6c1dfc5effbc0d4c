// The built-in tools through the real SDK client over real stdio pipes (the built CLI, spawned), in
// both protocol eras: tools/list shows the four (search_resources: see test/search/) with schemas and annotations; each tool's happy
// path; list_resources paging over a few hundred files sees each exactly once; find_resources by
// every filter, combined, and continued; every failure is an isError result with its message,
// arguments the input schema refuses too (naming the argument); unknown tools are -32602 errors;
// `--no-tools` offers none.
import { utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ProtocolError, type CallToolResult, type Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { Cleanup, connectStdio, ERAS, listAllPages } from '../helpers/clients.js';
import {
  buildNestedTree,
  dirUri,
  fileUri,
  makeTempDir,
  removeTree,
  writeTree,
} from '../helpers/tree.js';
import { structured, textOf, type Listed } from './helpers.js';

const NESTED = 300;
const MAX_READ = 4096;
const OLD = new Date('2021-03-04T05:06:07Z');
const NEW = new Date('2025-07-08T09:10:11Z');

const cleanup = new Cleanup();
let root: string;
/** Every file's URI, as resources/list shows them. */
let everything: string[];

beforeAll(async () => {
  await ensureBuilt();
  root = makeTempDir();
  cleanup.add(() => removeTree(root));
  const nested = buildNestedTree(join(root, 'tree'), NESTED, 30, 4);
  writeTree(root, {
    'README.md': '# Reservoir fixture\n',
    'docs/guide.md': '# Guide\n',
    'docs/api/index.ts': 'export {};\n',
    'src/api/server.ts': 'export const server = 1;\n',
    'img/logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    'data/big.log': 'line\n'.repeat(1000),
  });
  for (const rel of nested) utimesSync(join(root, 'tree', ...rel.split('/')), OLD, OLD);
  for (const rel of [
    'README.md',
    'docs/api/index.ts',
    'src/api/server.ts',
    'img/logo.png',
    'data/big.log',
  ])
    utimesSync(join(root, rel), OLD, OLD);
  utimesSync(join(root, 'docs/guide.md'), NEW, NEW);
});

afterAll(() => cleanup.run());

/** The error a call rejected with (fails the test if it resolved). */
async function failure(promise: Promise<unknown>): Promise<ProtocolError> {
  const outcome = await promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  if (outcome.ok)
    throw new Error(`expected a failure, got ${JSON.stringify(outcome.value).slice(0, 300)}`);
  expect(outcome.error).toBeInstanceOf(ProtocolError);
  return outcome.error as ProtocolError;
}

describe.each(ERAS)('over stdio in the %s era', (era) => {
  let client: Client;
  let stderr: () => string;
  const callTool = (name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> =>
    client.callTool({ name, arguments: args }) as Promise<CallToolResult>;
  const ok = async (
    name: string,
    args: Record<string, unknown> = {},
  ): Promise<{ result: CallToolResult; data: Listed }> => {
    const result = await callTool(name, args);
    expect(result.isError ?? false, textOf(result)).toBe(false);
    return { result, data: structured(result) };
  };
  const toolError = async (name: string, args: Record<string, unknown>): Promise<string> => {
    const result = await callTool(name, args);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    return textOf(result);
  };

  beforeAll(async () => {
    ({ client, stderr } = await connectStdio(
      era,
      [root],
      ['--max-read-bytes', String(MAX_READ)],
      cleanup,
    ));
    everything = (await listAllPages(client)).flatMap((page) => page.resources.map((r) => r.uri));
  });

  afterAll(() => expect(stderr()).toBe(''));

  it('lists the four tools with their descriptions, schemas and read-only annotations', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      'find_resources',
      'list_resources',
      'read_resource',
      'search_resources',
    ]);
    for (const tool of tools) {
      expect(tool.description?.length).toBeGreaterThan(100);
      expect(tool.inputSchema).toMatchObject({ type: 'object', additionalProperties: false });
      expect(tool.outputSchema).toMatchObject({ type: 'object' });
      expect(tool.annotations).toEqual({
        title: tool.title,
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      });
    }
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    // Optional arguments are offered required but nullable, as strict hosts want (core/portable-schema.ts).
    expect(byName['list_resources']!.inputSchema.properties).toMatchObject({
      cursor: { anyOf: [{ type: 'string' }, { type: 'null' }] },
      limit: { anyOf: [{ type: 'integer', minimum: 1, maximum: 1000 }, { type: 'null' }] },
    });
    expect(byName['read_resource']!.inputSchema).toMatchObject({
      required: ['uri'],
      properties: { uri: { type: 'string' } },
    });
    expect(Object.keys(byName['find_resources']!.inputSchema.properties ?? {})).toEqual([
      'name',
      'mimeType',
      'modifiedSince',
      'under',
      'limit',
      'cursor',
    ]);
    expect(byName['find_resources']!.inputSchema.properties?.['limit']).toMatchObject({
      anyOf: [{ maximum: 500 }, { type: 'null' }],
    });
    expect(byName['list_resources']!.outputSchema).toMatchObject({ required: ['resources'] });
  });

  it('list_resources returns a page with summaries and a text rendering', async () => {
    const { result, data } = await ok('list_resources', { limit: 3 });
    expect(data.resources).toHaveLength(3);
    expect(data.nextCursor).toEqual(expect.any(String));
    for (const r of data.resources) {
      // A description when the file's head gives one (front matter, a heading, a first line).
      expect(r).toEqual({
        uri: expect.any(String),
        name: expect.any(String),
        title: expect.any(String),
        mimeType: expect.any(String),
        size: expect.any(Number),
        lastModified: expect.any(String),
        ...('description' in r ? { description: expect.any(String) } : {}),
      });
    }
    const text = textOf(result);
    expect(text).toContain('3 resources:');
    for (const r of data.resources) expect(text).toContain(`- ${r.uri} (`);
    expect(text).toContain(`call list_resources with cursor ${JSON.stringify(data.nextCursor)}`);
  });

  it('list_resources paging over a few hundred files sees each exactly once, as resources/list does', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let calls = 0;
    do {
      const { data } = await ok(
        'list_resources',
        cursor === undefined ? { limit: 37 } : { limit: 37, cursor },
      );
      expect(data.resources.length).toBeLessThanOrEqual(37);
      seen.push(...data.resources.map((r) => r.uri));
      cursor = data.nextCursor;
      calls += 1;
    } while (cursor !== undefined);
    expect(everything).toHaveLength(NESTED + 6);
    expect(seen).toEqual(everything);
    expect(new Set(seen).size).toBe(seen.length);
    expect(calls).toBe(Math.ceil((NESTED + 6) / 37));
  });

  it('read_resource returns a text file as its text, an image as image content', async () => {
    const text = await callTool('read_resource', { uri: fileUri(root, 'README.md') });
    expect(text.isError ?? false).toBe(false);
    expect(text.content).toEqual([
      { type: 'text', text: '# Reservoir fixture\n' },
      {
        type: 'resource_link',
        uri: fileUri(root, 'README.md'),
        name: 'README.md',
        mimeType: 'text/markdown',
        size: 20,
      },
    ]);
    expect(text.structuredContent).toEqual({
      uri: fileUri(root, 'README.md'),
      contents: [
        { uri: fileUri(root, 'README.md'), mimeType: 'text/markdown', encoding: 'text', size: 20 },
      ],
    });
    const png = await callTool('read_resource', { uri: fileUri(root, 'img/logo.png') });
    expect(png.content).toEqual([
      { type: 'text', text: `${fileUri(root, 'img/logo.png')} is an image (image/png, 8 bytes).` },
      {
        type: 'image',
        mimeType: 'image/png',
        data: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).toString('base64'),
      },
    ]);
    const dir = await callTool('read_resource', { uri: dirUri(root, 'docs') });
    const listing = JSON.parse(textOf(dir)) as { name: string }[];
    expect(listing.map((c) => c.name)).toEqual(['api', 'guide.md']);
  });

  describe('find_resources', () => {
    const find = async (args: Record<string, unknown>): Promise<string[]> => {
      const { data } = await ok('find_resources', args);
      expect(data.nextCursor).toBeUndefined();
      return data.resources.map((r) => r.uri);
    };

    it('by name glob: the file name without a slash, the path under the root with one', async () => {
      expect(await find({ name: '*.md' })).toEqual([
        fileUri(root, 'README.md'),
        fileUri(root, 'docs/guide.md'),
      ]);
      expect(await find({ name: 'readme*' })).toEqual([fileUri(root, 'README.md')]);
      expect(await find({ name: '**/api/*.ts' })).toEqual([
        fileUri(root, 'docs/api/index.ts'),
        fileUri(root, 'src/api/server.ts'),
      ]);
      expect(await find({ name: 'tree/d000/s01/*' })).toHaveLength(30);
    });

    it('by MIME type, exact or wildcard', async () => {
      expect(await find({ mimeType: 'image/png' })).toEqual([fileUri(root, 'img/logo.png')]);
      expect(await find({ mimeType: 'image/*' })).toEqual([fileUri(root, 'img/logo.png')]);
      expect((await find({ mimeType: 'text/plain', limit: 500 })).length).toBe(NESTED + 1); // and data/big.log
    });

    it('by modification time', async () => {
      expect(await find({ modifiedSince: '2025-01-01' })).toEqual([fileUri(root, 'docs/guide.md')]);
      expect(await find({ modifiedSince: '2025-07-08T09:10:11Z' })).toEqual([
        fileUri(root, 'docs/guide.md'),
      ]);
      expect(await find({ modifiedSince: '2025-07-08T09:10:12Z' })).toEqual([]);
    });

    it('by URI prefix', async () => {
      expect(await find({ under: dirUri(root, 'docs') })).toEqual([
        fileUri(root, 'docs/api/index.ts'),
        fileUri(root, 'docs/guide.md'),
      ]);
      expect(await find({ under: dirUri(root, 'tree/d000/s02'), limit: 500 })).toHaveLength(30);
    });

    it('by all the filters combined', async () => {
      expect(
        await find({
          name: '*.md',
          mimeType: 'text/markdown',
          modifiedSince: '2025-01-01',
          under: dirUri(root, 'docs'),
        }),
      ).toEqual([fileUri(root, 'docs/guide.md')]);
      expect(await find({ name: '*.ts', under: dirUri(root, 'docs') })).toEqual([
        fileUri(root, 'docs/api/index.ts'),
      ]);
      expect(await find({ name: 'f0001*.txt', under: dirUri(root, 'tree') })).toHaveLength(10);
    });

    it('continues a search with its cursor, each match exactly once', async () => {
      const seen: string[] = [];
      let cursor: string | undefined;
      let calls = 0;
      do {
        const { result, data } = await ok(
          'find_resources',
          cursor === undefined
            ? { name: '*.txt', limit: 70 }
            : { name: '*.txt', limit: 70, cursor },
        );
        expect(data.resources.length).toBeLessThanOrEqual(70);
        if (data.nextCursor !== undefined)
          expect(textOf(result)).toContain(`cursor ${JSON.stringify(data.nextCursor)}`);
        seen.push(...data.resources.map((r) => r.uri));
        cursor = data.nextCursor;
        calls += 1;
      } while (cursor !== undefined);
      expect(calls).toBe(5);
      expect(seen).toEqual(everything.filter((uri) => uri.endsWith('.txt')));
    });
  });

  describe('failures are isError results a model can act on', () => {
    it('a missing resource', async () => {
      const uri = fileUri(root, 'nope.md');
      expect(await toolError('read_resource', { uri })).toBe(
        `No resource at ${uri}. Use list_resources or find_resources to see what exists, and pass a URI exactly as they give it.`,
      );
    });

    it('a path outside the root looks exactly the same', async () => {
      expect(await toolError('read_resource', { uri: 'file:///etc/passwd' })).toMatch(
        /^No resource at file:\/\/\/etc\/passwd\. Use list_resources/,
      );
    });

    it('a relative URI', async () => {
      expect(await toolError('read_resource', { uri: 'README.md' })).toContain(
        'the URI is relative',
      );
    });

    it('a file over the read cap, pointing to the partial-read template when there is one', async () => {
      const uri = fileUri(root, 'data/big.log');
      const { resourceTemplates } = await client.listResourceTemplates();
      const lines = resourceTemplates.find((t) => t.uriTemplate.endsWith('{?lines}'));
      const message = await toolError('read_resource', { uri });
      expect(message).toContain(
        `${uri} is too large to read whole: it is 5000 bytes, over the limit of ${MAX_READ} bytes.`,
      );
      if (lines === undefined)
        expect(message).toContain('This source offers no way to read part of it.');
      else {
        expect(message).toContain(`call read_resource with the URI ${uri}?lines=1-500`);
        expect(message).toContain(lines.uriTemplate);
        // Following the advice works.
        const part = await callTool('read_resource', { uri: `${uri}?lines=1-500` });
        expect(part.isError ?? false).toBe(false);
        expect(part.content[0]).toEqual({ type: 'text', text: 'line\n'.repeat(500) });
      }
    });

    it('bad cursors, for both listing tools', async () => {
      expect(await toolError('list_resources', { cursor: 'not-a-cursor' })).toMatch(
        /^Invalid cursor: .* Call list_resources again without a cursor/,
      );
      expect(await toolError('find_resources', { cursor: 'not-a-cursor' })).toMatch(
        /^Invalid cursor: .* Call find_resources again without a cursor/,
      );
      const { data } = await ok('list_resources', { limit: 1 });
      expect(await toolError('find_resources', { cursor: data.nextCursor })).toContain(
        'cursors from list_resources do not continue a search',
      );
    });

    it('an unusable glob', async () => {
      expect(await toolError('find_resources', { name: '[abc' })).toContain(
        `Invalid 'name' glob "[abc"`,
      );
    });

    it('and the connection keeps working after them all', async () => {
      const { data } = await ok('list_resources', { limit: 1 });
      expect(data.resources).toHaveLength(1);
    });
  });

  describe('protocol errors (-32602) for unknown tools', () => {
    it('an unknown tool', async () => {
      const error = await failure(callTool('delete_everything', {}));
      expect(error.code).toBe(-32602);
      expect(error.message).toContain(`unknown tool 'delete_everything'`);
    });
  });

  describe('arguments the input schema refuses: isError results naming the argument', () => {
    it.each([
      ['list_resources', { limit: 0 }, 'limit'],
      ['list_resources', { limit: 'ten' }, 'limit'],
      ['list_resources', { page: 2 }, 'page'],
      ['read_resource', {}, 'uri'],
      ['read_resource', { uri: 42 }, 'uri'],
      ['find_resources', { limit: 501 }, 'limit'],
      ['find_resources', { mimeType: 'markdown' }, 'mimeType'],
      ['find_resources', { modifiedSince: 'last week' }, 'modifiedSince'],
    ])('%s with %j names %s', async (name, args, argument) => {
      const result = await callTool(name, args);
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toBeUndefined();
      expect(textOf(result)).toContain(`Invalid argument '${argument}' for ${name}`);
      expect(textOf(result)).toContain(`Call ${name} again`);
    });

    it('an unknown argument is named, with the arguments the tool takes', async () => {
      const result = await callTool('read_resource', { uri: fileUri(root, 'README.md'), path: 1 });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain(
        "Invalid argument 'path' for read_resource: not an argument of read_resource (it takes uri)",
      );
    });
  });
});

describe.each(ERAS)('with --no-tools, in the %s era', (era) => {
  it('offers no tools, and calling one is an unknown tool', async () => {
    const { client } = await connectStdio(era, [root], ['--no-tools'], cleanup);
    expect((await client.listTools()).tools).toEqual([]);
    const error = await failure(client.callTool({ name: 'list_resources', arguments: {} }));
    expect(error.code).toBe(-32602);
    expect(error.message).toContain(`unknown tool 'list_resources'`);
    // Resources are still served.
    expect((await client.listResources()).resources.length).toBe(NESTED + 6);
  });
});

// Kept last: a file written after the fixture, to show list_resources reports what is there now.
describe('a file added while connected', () => {
  it('is found by the next find_resources', async () => {
    const { client } = await connectStdio('2025', [root], [], cleanup);
    writeFileSync(join(root, 'late.md'), 'late\n');
    const result = (await client.callTool({
      name: 'find_resources',
      arguments: { name: 'late.md' },
    })) as CallToolResult;
    expect(structured(result).resources.map((r) => r.uri)).toEqual([fileUri(root, 'late.md')]);
  });
});
