// The built-in tools called directly, over a real Registry with the files provider (and a few fake
// providers for the cases files cannot produce): results, structured content, text renderings,
// every failure as an isError result with an actionable message, and argument checking.
import { utimesSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError, TooLargeError } from '../../src/core/errors.js';
import { Registry } from '../../src/core/registry.js';
import { toolSchemas, type Tool } from '../../src/core/tools.js';
import type { Provider } from '../../src/core/types.js';
import { sdkTemplateEngine } from '../../src/mcp/templates.js';
import { filesProvider, type FilesOptions } from '../../src/providers/files/index.js';
import {
  builtinTools,
  findResourcesTool,
  listResourcesTool,
  readResourceTool,
} from '../../src/tools/index.js';
import { fileUri, removeDir, tempDir, writeTree } from '../providers/helpers.js';
import { call, fakeContext, structured, textOf } from './helpers.js';

const OLD = new Date('2020-01-01T00:00:00Z');
const NEW = new Date('2025-06-01T12:00:00Z');

let root: string;
let other: string;
let registry: Registry;
let list: Tool;
let read: Tool;
let find: Tool;

const uri = (rel: string, base = root): string => fileUri(join(base, rel));

/** The files provider (its factory is typed as possibly async; it never is). */
const files = (options: FilesOptions): Provider => filesProvider(options) as Provider;
/** A files provider offering no templates at all (so no partial reads). */
const plainFiles = (options: FilesOptions): Provider => ({
  ...files(options),
  templates: () => [],
});

beforeAll(() => {
  root = tempDir();
  other = tempDir();
  writeTree(root, {
    'README.md': '# Readme\n',
    'notes.txt': 'plain\n',
    '.hidden.md': 'dotfile\n',
    'docs/guide.md': '# Guide\n',
    'docs/api/index.ts': 'export {};\n',
    'docs/api/types.ts': 'export type A = 1;\n',
    'src/api/server.ts': 'export const s = 1;\n',
    'src/main.TS': 'upper-case extension\n',
    'img/logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]),
    'img/photo.jpg': Buffer.from([0xff, 0xd8, 0xff, 0, 1]),
    'data/big.log': 'x'.repeat(2000),
  });
  writeTree(other, { 'elsewhere.md': 'other root\n' });
  for (const rel of [
    'README.md',
    'notes.txt',
    '.hidden.md',
    'docs/api/index.ts',
    'src/api/server.ts',
    'src/main.TS',
    'img/logo.png',
    'img/photo.jpg',
    'data/big.log',
  ]) {
    utimesSync(join(root, rel), OLD, OLD);
  }
  utimesSync(join(root, 'docs/guide.md'), NEW, NEW);
  utimesSync(join(root, 'docs/api/types.ts'), NEW, NEW);
  utimesSync(join(other, 'elsewhere.md'), NEW, NEW);
  registry = new Registry()
    .mount(plainFiles({ root, maxReadBytes: 1000 }))
    .mount(plainFiles({ root: other }));
  [list, read, find] = builtinTools(registry) as [Tool, Tool, Tool];
});

afterAll(async () => {
  await registry.close();
  removeDir(root);
  removeDir(other);
});

describe('the definitions', () => {
  it('are list_resources, read_resource and find_resources, read-only, with input and output schemas', () => {
    expect([list.name, read.name, find.name]).toEqual([
      'list_resources',
      'read_resource',
      'find_resources',
    ]);
    for (const tool of [list, read, find]) {
      expect(tool.annotations).toMatchObject({
        readOnlyHint: true,
        openWorldHint: false,
        idempotentHint: true,
      });
      expect(tool.description.length).toBeGreaterThan(100);
      const { inputSchema, outputSchema } = toolSchemas(tool);
      expect(inputSchema).toMatchObject({ type: 'object', additionalProperties: false });
      expect(outputSchema).toMatchObject({ type: 'object' });
    }
    expect(Object.keys(toolSchemas(list).inputSchema['properties'] as object)).toEqual([
      'cursor',
      'limit',
    ]);
    expect(toolSchemas(read).inputSchema['required']).toEqual(['uri']);
    expect(Object.keys(toolSchemas(find).inputSchema['properties'] as object)).toEqual([
      'name',
      'mimeType',
      'modifiedSince',
      'under',
      'limit',
      'cursor',
    ]);
  });

  it('refuse bad find options when built', () => {
    expect(() => findResourcesTool(registry, { scanLimit: 0 })).toThrow(/scanLimit/);
    expect(() => findResourcesTool(registry, { scanTimeMs: -1 })).toThrow(/scanTimeMs/);
  });
});

describe('list_resources', () => {
  it('returns a page of summaries with a text rendering, and the end of the list', async () => {
    const result = await call(list, {});
    expect(result.isError).toBeUndefined();
    const { resources, nextCursor } = structured(result);
    expect(nextCursor).toBeUndefined();
    expect(resources).toHaveLength(12);
    const readme = resources.find((r) => r.uri === uri('README.md'));
    // The description comes from the file's head, read within the page's budget or on a later page.
    expect(readme).toEqual({
      uri: uri('README.md'),
      name: 'README.md',
      title: 'README.md',
      mimeType: 'text/markdown',
      size: 9,
      lastModified: OLD.toISOString(),
      ...((readme as { description?: string } | undefined)?.description === undefined
        ? {}
        : { description: 'Readme' }),
    });
    const text = textOf(result);
    expect(text).toContain('12 resources:');
    expect(text).toContain(
      `- ${uri('README.md')} (text/markdown, 9 bytes, modified ${OLD.toISOString()})`,
    );
    expect(text).toContain('This is the end of the list.');
  });

  it('pages with limit and cursor, seeing every resource exactly once', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const result = await call(list, cursor === undefined ? { limit: 5 } : { limit: 5, cursor });
      const page = structured(result);
      expect(page.resources.length).toBeLessThanOrEqual(5);
      seen.push(...page.resources.map((r) => r.uri));
      if (page.nextCursor !== undefined)
        expect(textOf(result)).toContain(`cursor ${JSON.stringify(page.nextCursor)}`);
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor !== undefined);
    expect(pages).toBeGreaterThanOrEqual(3);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toHaveLength(12);
  });

  it('defaults to 100 per page', async () => {
    const big = tempDir();
    try {
      writeTree(
        big,
        Object.fromEntries(
          Array.from({ length: 130 }, (_, i) => [`f${String(i).padStart(3, '0')}.txt`, 'x']),
        ),
      );
      const r = new Registry().mount(files({ root: big }));
      const page = structured(await call(listResourcesTool(r)));
      expect(page.resources).toHaveLength(100);
      expect(page.nextCursor).toEqual(expect.any(String));
      await r.close();
    } finally {
      removeDir(big);
    }
  });

  it('says so when nothing is served', async () => {
    const result = await call(listResourcesTool(new Registry()));
    expect(structured(result)).toEqual({ resources: [] });
    expect(textOf(result)).toContain('This server serves no resources.');
  });

  it('answers a bad cursor with an isError result telling how to start again', async () => {
    for (const cursor of [
      'garbage',
      'abc.def',
      `find1.${Buffer.from('[null,0]').toString('base64url')}`,
    ]) {
      const result = await call(list, { cursor });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(
        /^Invalid cursor: .*Call list_resources again without a cursor to start from the beginning\.$/,
      );
    }
  });

  it('refuses schema-invalid arguments, naming each (an isError result at the edge)', async () => {
    for (const [args, argument] of [
      [{ limit: 0 }, 'limit'],
      [{ limit: 1001 }, 'limit'],
      [{ limit: 2.5 }, 'limit'],
      [{ cursor: '' }, 'cursor'],
      [{ cursor: 7 }, 'cursor'],
      [{ page: 2 }, 'page'],
    ] as const) {
      const error = await call(list, args).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).data['argument']).toBe(argument);
    }
  });
});

describe('read_resource', () => {
  it('returns a text file as its text, a link to it, and its metadata as structured content', async () => {
    const result = await call(read, { uri: uri('README.md') });
    expect(result).toEqual({
      content: [
        { type: 'text', text: '# Readme\n' },
        {
          type: 'resource_link',
          uri: uri('README.md'),
          name: 'README.md',
          mimeType: 'text/markdown',
          size: 9,
        },
      ],
      structuredContent: {
        uri: uri('README.md'),
        contents: [{ uri: uri('README.md'), mimeType: 'text/markdown', encoding: 'text', size: 9 }],
      },
    });
  });

  it('returns an image as image content after a line saying what it is, and its decoded size', async () => {
    const result = await call(read, { uri: uri('img/logo.png') });
    expect(result.content).toEqual([
      { type: 'text', text: `${uri('img/logo.png')} is an image (image/png, 8 bytes).` },
      {
        type: 'image',
        mimeType: 'image/png',
        data: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]).toString('base64'),
      },
    ]);
    expect(result.structuredContent).toEqual({
      uri: uri('img/logo.png'),
      contents: [{ uri: uri('img/logo.png'), mimeType: 'image/png', encoding: 'base64', size: 8 }],
    });
    const jpg = await call(read, { uri: uri('img/photo.jpg') });
    expect((jpg.structuredContent as { contents: { size: number }[] }).contents[0]!.size).toBe(5);
    expect(jpg.content[1]).toMatchObject({ type: 'image', mimeType: 'image/jpeg' });
  });

  it('reads a directory as a JSON listing of its children', async () => {
    const dir = `${uri('docs')}/`;
    const result = await call(read, { uri: dir });
    expect(result.content[1]).toMatchObject({
      type: 'resource_link',
      uri: dir,
      mimeType: 'inode/directory',
    });
    expect(JSON.parse(textOf(result))).toEqual([
      { name: 'api', uri: `${uri('docs/api')}/`, kind: 'directory' },
      { name: 'guide.md', uri: uri('docs/guide.md'), kind: 'file', size: 8 },
    ]);
  });

  it('answers a missing resource, or one outside every root, with the same actionable isError result', async () => {
    for (const missing of [
      uri('nope.md'),
      'file:///etc/passwd',
      'https://example.com/x',
      `${uri('docs')}/../../etc/passwd`,
    ]) {
      const result = await call(read, { uri: missing });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toBe(
        `No resource at ${missing}. Use list_resources or find_resources to see what exists, and pass a URI exactly as they give it.`,
      );
    }
  });

  it('answers an invalid URI with what is wrong and the served roots', async () => {
    const result = await call(read, { uri: 'README.md' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('Invalid resource URI: the URI is relative');
    expect(textOf(result)).toContain(
      `served roots: ${registry.providers()[0]!.root}, ${registry.providers()[1]!.root}`,
    );
  });

  it('answers a file over the read cap with its size and the limit, and the byte range the source names when it lists no line template', async () => {
    const result = await call(read, { uri: uri('data/big.log') });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      `${uri('data/big.log')} is too large to read whole: it is 2000 bytes, over the limit of 1000 bytes. ` +
        `Read it in byte ranges instead: call read_resource with the URI ${uri('data/big.log')}?bytes=0-999 (bytes=START-END, 0-based and inclusive), then the following ranges, until you have what you need.`,
    );
  });

  it('says no partial read exists when the source names none', async () => {
    const bare: Provider = {
      name: 'bare',
      root: 'mem://bare/',
      list: async () => ({ items: [] }),
      read: async (target) => {
        throw new TooLargeError(target, 2000, 1000);
      },
    };
    const r = new Registry().mount(bare);
    expect(textOf(await call(readResourceTool(r), { uri: 'mem://bare/a.bin' }))).toBe(
      'mem://bare/a.bin is too large to read whole: it is 2000 bytes, over the limit of 1000 bytes. This source offers no way to read part of it.',
    );
  });

  it('points to the provider’s {?lines} template when it serves one', async () => {
    const files = plainFiles({ root, maxReadBytes: 1000 });
    const template = `${files.root}{+path}{?lines}`;
    const withLines: Provider = {
      ...files,
      templates: () => [
        { uriTemplate: `${files.root}{+path}{?other}`, name: 'other' },
        { uriTemplate: template, name: 'lines' },
      ],
    };
    const r = new Registry().mount(plainFiles({ root: other })).mount(withLines);
    const result = await call(readResourceTool(r), { uri: uri('data/big.log') });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      `${uri('data/big.log')} is too large to read whole: it is 2000 bytes, over the limit of 1000 bytes. ` +
        `If it is text, read it in parts instead: call read_resource with the URI ${uri('data/big.log')}?lines=1-500 (lines=START-END, 1-based and inclusive), ` +
        `then the following ranges, until you have what you need. (Partial reads follow the resource template ${template}.)`,
    );
    // Another root's files do not borrow this root's template.
    const third = tempDir();
    writeTree(third, { 'big.txt': 'y'.repeat(10) });
    const small = new Registry()
      .mount(plainFiles({ root: third, maxReadBytes: 5 }))
      .mount(withLines);
    expect(
      textOf(await call(readResourceTool(small), { uri: fileUri(join(third, 'big.txt')) })),
    ).toContain(`read_resource with the URI ${fileUri(join(third, 'big.txt'))}?bytes=0-4 `);
    removeDir(third);
    await Promise.all([r.close(), small.close()]);
  });

  it('finds the files provider’s own partial-read template, and the URI it suggests reads', async () => {
    const dir = tempDir();
    writeTree(dir, { 'lines.log': 'line\n'.repeat(1000), 'one-line.log': 'x'.repeat(5000) });
    const r = new Registry({ templateEngine: sdkTemplateEngine }).mount(
      files({ root: dir, maxReadBytes: 4000 }),
    );
    const tool = readResourceTool(r);
    try {
      const lines = fileUri(join(dir, 'lines.log'));
      const message = textOf(await call(tool, { uri: lines }));
      const suggested = /call read_resource with the URI (\S+) /.exec(message)?.[1];
      expect(suggested).toBe(`${lines}?lines=1-500`);
      const part = await call(tool, { uri: suggested });
      expect(part.isError).toBeUndefined();
      expect(part.content[0]).toEqual({ type: 'text', text: 'line\n'.repeat(500) });
      // Too many lines: ask for fewer. One 5000-byte line: no range can help.
      expect(textOf(await call(tool, { uri: `${lines}?lines=1-900` }))).toContain(
        'Ask for fewer lines',
      );
      const oneLine = textOf(
        await call(tool, { uri: `${fileUri(join(dir, 'one-line.log'))}?lines=1-1` }),
      );
      expect(oneLine).toContain('is too large to read whole');
      expect(oneLine).toContain(
        'That is a single line, so this part of the resource cannot be read through read_resource.',
      );
    } finally {
      await r.close();
      removeDir(dir);
    }
  });

  it('asks for fewer lines when a partial read is itself too large', async () => {
    const huge: Provider = {
      name: 'huge',
      root: 'mem://huge/',
      list: async () => ({ items: [] }),
      read: async (u) => {
        throw new TooLargeError(u, 5000, 1000);
      },
      templates: () => [{ uriTemplate: 'mem://huge/{+path}{?lines}', name: 'lines' }],
    };
    const r = new Registry().mount(huge);
    const result = await call(readResourceTool(r), { uri: 'mem://huge/a.log?lines=1-100000' });
    expect(textOf(result)).toContain(
      'mem://huge/a.log?lines=1-100000 is too large to read whole: it is 5000 bytes, over the limit of 1000 bytes. Ask for fewer lines',
    );
  });

  it('names the encoded size when the response cap is what refuses it', async () => {
    const r = new Registry({ maxResponseBytes: 500 }).mount(plainFiles({ root }));
    const result = await call(readResourceTool(r), { uri: uri('data/big.log') });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(
      /is too large to read whole: it is \d+ bytes once encoded for sending, over the limit of 500 bytes\./,
    );
    await r.close();
  });

  it('points a directory too large to list to find_resources', async () => {
    const r = new Registry().mount(files({ root, maxReadBytes: 20 }));
    const dir = `${uri('docs')}/`;
    const result = await call(readResourceTool(r), { uri: dir });
    expect(textOf(result)).toContain(`has too many entries to list in one read`);
    expect(textOf(result)).toContain(`Use find_resources with under=${JSON.stringify(dir)}`);
    await r.close();
  });

  it('refuses a missing or empty uri argument', async () => {
    for (const args of [{}, { uri: '' }, { uri: 3 }, { uri: 'file:///x', extra: true }]) {
      await expect(call(read, args)).rejects.toBeInstanceOf(InvalidArgumentError);
    }
  });
});

describe('find_resources', () => {
  const found = async (args: Record<string, unknown>, tool = find): Promise<string[]> => {
    const result = await call(tool, args);
    expect(result.isError).toBeUndefined();
    const page = structured(result);
    expect(page.nextCursor).toBeUndefined();
    return page.resources.map((r) => r.uri).sort();
  };

  it('matches a slash-less glob against the name, dotfiles included, smart-case', async () => {
    expect(await found({ name: '*.md' })).toEqual(
      [
        uri('.hidden.md'),
        uri('README.md'),
        uri('docs/guide.md'),
        fileUri(join(other, 'elsewhere.md')),
      ].sort(),
    );
    expect(await found({ name: 'readme*' })).toEqual([uri('README.md')]);
    expect(await found({ name: 'Readme*' })).toEqual([]);
    expect(await found({ name: '*.ts' })).toEqual(
      [
        uri('docs/api/index.ts'),
        uri('docs/api/types.ts'),
        uri('src/api/server.ts'),
        uri('src/main.TS'),
      ].sort(),
    );
    expect(await found({ name: '*.TS' })).toEqual([uri('src/main.TS')]);
    expect(await found({ name: '*.{png,jpg}' })).toEqual([
      uri('img/logo.png'),
      uri('img/photo.jpg'),
    ]);
  });

  it('matches a glob with a slash against the path under the served root', async () => {
    expect(await found({ name: '**/api/*.ts' })).toEqual([
      uri('docs/api/index.ts'),
      uri('docs/api/types.ts'),
      uri('src/api/server.ts'),
    ]);
    expect(await found({ name: 'docs/**/*.md' })).toEqual([uri('docs/guide.md')]);
    expect(await found({ name: 'src/*' })).toEqual([uri('src/main.TS')]);
    expect(await found({ name: '**/*.md' })).toHaveLength(4);
  });

  it('filters by exact MIME type and by type wildcard, ignoring case', async () => {
    expect(await found({ mimeType: 'text/markdown' })).toHaveLength(4);
    expect(await found({ mimeType: 'image/*' })).toEqual([
      uri('img/logo.png'),
      uri('img/photo.jpg'),
    ]);
    expect(await found({ mimeType: 'IMAGE/PNG' })).toEqual([uri('img/logo.png')]);
    expect(await found({ mimeType: 'video/*' })).toEqual([]);
  });

  it('filters by modification time: a date-time or a bare date (midnight UTC), inclusive', async () => {
    const recent = [
      uri('docs/api/types.ts'),
      uri('docs/guide.md'),
      fileUri(join(other, 'elsewhere.md')),
    ].sort();
    expect(await found({ modifiedSince: '2025-01-01' })).toEqual(recent);
    expect(await found({ modifiedSince: NEW.toISOString() })).toEqual(recent);
    expect(await found({ modifiedSince: '2025-06-01T14:00:00+02:00' })).toEqual(recent);
    expect(await found({ modifiedSince: '2025-06-01T12:00:01Z' })).toEqual([]);
    expect(await found({ modifiedSince: '2019-12-31' })).toHaveLength(12);
  });

  it('filters by URI prefix, with or without the trailing slash, and not by string prefix alone', async () => {
    writeTree(root, { 'docs-old/legacy.md': 'old\n' });
    try {
      expect(await found({ under: `${uri('docs')}/` })).toEqual([
        uri('docs/api/index.ts'),
        uri('docs/api/types.ts'),
        uri('docs/guide.md'),
      ]);
      expect(await found({ under: uri('docs') })).toEqual([
        uri('docs/api/index.ts'),
        uri('docs/api/types.ts'),
        uri('docs/guide.md'),
      ]);
      expect(await found({ under: uri('docs-old') })).toEqual([uri('docs-old/legacy.md')]);
    } finally {
      removeDir(join(root, 'docs-old'));
    }
    expect(await found({ under: registry.providers()[1]!.root })).toEqual([
      fileUri(join(other, 'elsewhere.md')),
    ]);
  });

  it('stops scanning once past the mounts the prefix can be in', async () => {
    const many = tempDir();
    writeTree(many, Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`m${i}.md`, 'x'])));
    const r = new Registry().mount(files({ root })).mount(files({ root: many }));
    try {
      const page = structured(await call(findResourcesTool(r), { under: `${uri('docs')}/` }));
      // The first root's 11 resources, then the second root's first one ends the scan.
      expect(page).toMatchObject({ examined: 12 });
      expect(page.resources).toHaveLength(3);
    } finally {
      await r.close();
      removeDir(many);
    }
  });

  it('answers a prefix no source serves at once, naming the served roots', async () => {
    const result = await call(find, { under: 'https://example.com/' });
    expect(structured(result)).toEqual({ resources: [], examined: 0 });
    expect(textOf(result)).toContain('No served source has resources under https://example.com/');
    expect(textOf(result)).toContain(registry.providers()[0]!.root);
  });

  it('combines filters', async () => {
    expect(
      await found({
        name: '*.md',
        under: `${uri('docs')}/`,
        mimeType: 'text/markdown',
        modifiedSince: '2025-01-01',
      }),
    ).toEqual([uri('docs/guide.md')]);
    expect(await found({ name: '*.ts', modifiedSince: '2025-01-01' })).toEqual([
      uri('docs/api/types.ts'),
    ]);
    expect(
      await found({ name: '*.md', modifiedSince: '2025-01-01', under: uri('docs/api') }),
    ).toEqual([]);
  });

  it('with no filters finds everything', async () => {
    expect(await found({})).toHaveLength(12);
  });

  it('returns at most limit matches, and continues after the last one with the cursor', async () => {
    const all = await found({ name: '*.ts' });
    const seen: string[] = [];
    let cursor: string | undefined;
    let calls = 0;
    do {
      const result = await call(
        find,
        cursor === undefined ? { name: '*.ts', limit: 1 } : { name: '*.ts', limit: 1, cursor },
      );
      const page = structured(result);
      expect(page.resources.length).toBeLessThanOrEqual(1);
      if (page.nextCursor !== undefined) {
        expect(textOf(result)).toContain(
          `More matches may follow: call find_resources again with the same filters and cursor ${JSON.stringify(page.nextCursor)}`,
        );
      } else expect(textOf(result)).toContain('The search is complete.');
      seen.push(...page.resources.map((r) => r.uri));
      cursor = page.nextCursor;
      calls += 1;
    } while (cursor !== undefined);
    expect(seen.sort()).toEqual(all);
    expect(calls).toBeGreaterThanOrEqual(4);
  });

  it('resumes after the last match even when resources were added before it in the page', async () => {
    const first = structured(await call(find, { name: '*.ts', limit: 2 }));
    expect(first.resources).toHaveLength(2);
    writeTree(root, { 'a-new.ts': 'new\n' }); // sorts before everything in the page
    try {
      const rest = structured(
        await call(find, { name: '*.ts', limit: 50, cursor: first.nextCursor }),
      );
      const uris = rest.resources.map((r) => r.uri);
      for (const r of first.resources) expect(uris).not.toContain(r.uri);
      expect([...first.resources.map((r) => r.uri), ...uris].sort()).toEqual(
        [
          uri('docs/api/index.ts'),
          uri('docs/api/types.ts'),
          uri('src/api/server.ts'),
          uri('src/main.TS'),
        ].sort(),
      );
    } finally {
      removeDir(join(root, 'a-new.ts'));
    }
  });

  describe('bounded scanning', () => {
    let wide: string;
    let wideRegistry: Registry;

    beforeAll(() => {
      wide = tempDir();
      const tree: Record<string, string> = {};
      for (let i = 0; i < 1200; i += 1)
        tree[
          `d${String(Math.floor(i / 100)).padStart(2, '0')}/f${String(i).padStart(4, '0')}.txt`
        ] = 'x';
      tree['d11/zz-target.md'] = 'found me\n';
      tree['d00/aa-target.md'] = 'found me too\n';
      writeTree(wide, tree);
      wideRegistry = new Registry().mount(files({ root: wide }));
    });

    afterAll(async () => {
      await wideRegistry.close();
      removeDir(wide);
    });

    it('stops after scanLimit resources and continues from there, even with no match yet', async () => {
      const tool = findResourcesTool(wideRegistry, { scanLimit: 500 });
      const results: { count: number; examined: number; more: boolean; text: string }[] = [];
      const uris: string[] = [];
      let cursor: string | undefined;
      do {
        const result = await call(
          tool,
          cursor === undefined ? { name: '*.md' } : { name: '*.md', cursor },
        );
        const page = structured(result);
        uris.push(...page.resources.map((r) => r.uri));
        results.push({
          count: page.resources.length,
          examined: page.examined!,
          more: page.nextCursor !== undefined,
          text: textOf(result),
        });
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      expect(results.map((r) => r.examined)).toEqual([500, 500, 202]);
      expect(results.map((r) => r.count)).toEqual([1, 0, 1]);
      expect(results[1]!.text).toContain(
        'No matches in this call (name "*.md"; examined 500 resources).',
      );
      expect(results[1]!.text).toContain(
        'This call stopped after examining 500 resources; the search is not finished.',
      );
      expect(results[2]!.text).toContain('The search is complete.');
      expect(uris).toEqual([
        fileUri(join(wide, 'd00/aa-target.md')),
        fileUri(join(wide, 'd11/zz-target.md')),
      ]);
    });

    it('never examines more than scanLimit, even below one scan page', async () => {
      const tool = findResourcesTool(wideRegistry, { scanLimit: 120 });
      const uris: string[] = [];
      const examined: number[] = [];
      let cursor: string | undefined;
      do {
        const page = structured(
          await call(
            tool,
            cursor === undefined ? { name: '*target*' } : { name: '*target*', cursor },
          ),
        );
        uris.push(...page.resources.map((r) => r.uri));
        examined.push(page.examined!);
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      expect(examined.every((n) => n <= 120)).toBe(true);
      expect(examined.reduce((a, b) => a + b, 0)).toBe(1202);
      expect(uris).toEqual([
        fileUri(join(wide, 'd00/aa-target.md')),
        fileUri(join(wide, 'd11/zz-target.md')),
      ]);
    });

    it('resumes mid-page after a match limit, whatever the page size before it', async () => {
      const tool = findResourcesTool(wideRegistry, { scanLimit: 7 });
      const seen: string[] = [];
      let cursor: string | undefined;
      let calls = 0;
      do {
        const page = structured(
          await call(
            tool,
            cursor === undefined ? { name: 'f00*', limit: 3 } : { name: 'f00*', limit: 3, cursor },
          ),
        );
        seen.push(...page.resources.map((r) => r.uri));
        cursor = page.nextCursor;
        calls += 1;
      } while (cursor !== undefined && calls < 1000);
      expect(seen).toHaveLength(100);
      expect(new Set(seen).size).toBe(100);
    });

    it('stops after scanTimeMs, checked between pages', async () => {
      const tool = findResourcesTool(wideRegistry, { scanTimeMs: 0 });
      const page = structured(await call(tool, { name: 'nothing-matches' }));
      expect(page.examined).toBe(500);
      expect(page.nextCursor).toEqual(expect.any(String));
    });

    it('examines at most the default 20,000 resources per call and stops when the list ends', async () => {
      const page = structured(
        await call(findResourcesTool(wideRegistry), { name: 'nothing-matches' }),
      );
      expect(page).toEqual({ resources: [], examined: 1202 });
    });

    it('gives up promptly when the call is cancelled', async () => {
      const controller = new AbortController();
      controller.abort();
      await expect(
        call(findResourcesTool(wideRegistry), { name: '*' }, fakeContext(controller.signal)),
      ).rejects.toThrow();
    });
  });

  it('answers a bad cursor with an isError result telling how to start again', async () => {
    const listCursor = structured(await call(list, { limit: 1 })).nextCursor!;
    const forged = `find1.${Buffer.from(JSON.stringify(['forged.cursor', 0])).toString('base64url')}`;
    const bad = [
      'garbage',
      listCursor,
      'find1.!!!',
      `find1.${Buffer.from('[null,999]').toString('base64url')}`,
      forged,
    ];
    for (const cursor of bad) {
      const result = await call(find, { name: '*.md', cursor });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(
        /^Invalid cursor: .*Call find_resources again without a cursor to start from the beginning\.$/,
      );
    }
    expect(textOf(await call(find, { cursor: listCursor }))).toContain(
      'cursors from list_resources do not continue a search',
    );
  });

  it('answers an unusable glob or prefix with an isError result', async () => {
    const glob = await call(find, { name: '[abc' });
    expect(glob.isError).toBe(true);
    expect(textOf(glob)).toContain(`Invalid 'name' glob "[abc"`);
    const under = await call(find, { under: 'docs/' });
    expect(under.isError).toBe(true);
    expect(textOf(under)).toContain(`Invalid 'under': Invalid resource URI: the URI is relative`);
  });

  it('refuses schema-invalid arguments, naming each (an isError result at the edge)', async () => {
    for (const [args, argument] of [
      [{ limit: 0 }, 'limit'],
      [{ limit: 501 }, 'limit'],
      [{ mimeType: 'markdown' }, 'mimeType'],
      [{ mimeType: '*/*' }, 'mimeType'],
      [{ mimeType: 'text/plain; charset=utf-8' }, 'mimeType'],
      [{ modifiedSince: 'yesterday' }, 'modifiedSince'],
      [{ modifiedSince: '2025-13-45' }, 'modifiedSince'],
      [{ modifiedSince: '2025-01-01T10:00:00' }, 'modifiedSince'],
      [{ name: '' }, 'name'],
      [{ pattern: '*.md' }, 'pattern'],
    ] as const) {
      const error = await call(find, args).catch((e: unknown) => e);
      expect(error, JSON.stringify(args)).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).data['argument']).toBe(argument);
    }
  });
});
