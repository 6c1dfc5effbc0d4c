// Pins the files templates end to end, through the real SDK client and the built CLI over stdio,
// in both protocol eras: both templates are listed; a URI expanded from `{+path}` reads the file;
// `?lines=` reads a slice at both ends, an empty text past the end, and refuses malformed ranges,
// binary files and other queries as invalid params; completion of `path` at the root, in a
// subdirectory, with no match, beyond 100 matches (honest total and hasMore), never for ignored
// paths or `..`; and 64 KiB hostile URIs all answer promptly with an error, the connection alive.
import { ProtocolError, ResourceNotFoundError, type Client } from '@modelcontextprotocol/client';
import { UriTemplate } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { Cleanup, connectStdio, ERAS } from '../helpers/clients.js';
import { dirUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';

const cleanup = new Cleanup();
let root: string;
let rootUri: string;

const TEN = Array.from({ length: 10 }, (_, i) => `line ${i + 1}\n`).join('');

beforeAll(async () => {
  await ensureBuilt();
  root = makeTempDir();
  cleanup.add(() => removeTree(root));
  const files: Record<string, string | Uint8Array> = {
    'ten.txt': TEN,
    'src/core/types.ts': 'export type A = 1;\n',
    'src/core/registry.ts': 'export class Registry {}\n',
    'src/cli/index.ts': 'main();\n',
    'src/config.ts': 'export {};\n',
    'with space/a b.md': '# spaced\n',
    'image.png': Buffer.from('89504e470d0a1a0a', 'hex'),
    '.gitignore': 'ignored/\n*.log\n',
    'ignored/secret.txt': 'no\n',
    'debug.log': 'no\n',
    '.git/HEAD': 'ref: refs/heads/main\n',
  };
  for (let i = 0; i < 130; i += 1) files[`many/f${String(i).padStart(3, '0')}.txt`] = `${i}\n`;
  writeTree(root, files);
  rootUri = dirUri(root);
});

afterAll(() => cleanup.run());

async function failure(promise: Promise<unknown>): Promise<ProtocolError> {
  const outcome = await promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  if (outcome.ok)
    throw new Error(`expected a failure, got ${JSON.stringify(outcome.value).slice(0, 200)}`);
  expect(outcome.error).toBeInstanceOf(ProtocolError);
  return outcome.error as ProtocolError;
}

describe.each(ERAS)('over stdio in the %s era', (era) => {
  let client: Client;

  beforeAll(async () => {
    client = (await connectStdio(era, [root], [], cleanup)).client;
  });

  const text = async (uri: string): Promise<string> => {
    const result = await client.readResource({ uri }, { cacheMode: 'bypass' });
    expect(result.contents).toHaveLength(1);
    const content = result.contents[0]!;
    if (!('text' in content)) throw new Error('expected text');
    expect(content.uri).toBe(uri);
    return content.text;
  };
  const complete = (value: string, template = `${rootUri}{+path}`) =>
    client.complete({
      ref: { type: 'ref/resource', uri: template },
      argument: { name: 'path', value },
    });

  it('lists the templates: line range, byte range, whole file, then the document template', async () => {
    const { resourceTemplates } = await client.listResourceTemplates(undefined, {
      cacheMode: 'bypass',
    });
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual([
      `${rootUri}{+path}{?lines}`,
      `${rootUri}{+path}{?bytes}`,
      `${rootUri}{+path}`,
      `${rootUri}{+path}{?as,pages,sheet,range,slides}`,
    ]);
    expect(resourceTemplates.map((t) => t.name)).toEqual([
      'file-lines',
      'file-bytes',
      'file',
      'file-document',
    ]);
    expect(resourceTemplates[0]!.description).toMatch(/lines=START-END/);
    for (const t of resourceTemplates.slice(0, 2))
      expect(Object.keys(t).sort()).toEqual([
        'description',
        'icons',
        'name',
        'title',
        'uriTemplate',
      ]);
    expect(resourceTemplates[3]!.mimeType).toBe('text/markdown');
  });

  it('reads a URI expanded from {+path}', async () => {
    const plain = new UriTemplate(`${rootUri}{+path}`);
    expect(await text(plain.expand({ path: 'ten.txt' }))).toBe(TEN);
    expect(await text(plain.expand({ path: 'src/core/types.ts' }))).toBe('export type A = 1;\n');
    expect(await text(plain.expand({ path: 'with space/a b.md' }))).toBe('# spaced\n');
  });

  it('reads line ranges at both ends, and empty text past the end', async () => {
    const ranged = new UriTemplate(`${rootUri}{+path}{?lines}`);
    const lines = (value: string): Promise<string> =>
      text(ranged.expand({ path: 'ten.txt', lines: value }));
    expect(await lines('1-1')).toBe('line 1\n');
    expect(await lines('1-3')).toBe('line 1\nline 2\nline 3\n');
    expect(await lines('10-10')).toBe('line 10\n');
    expect(await lines('9-')).toBe('line 9\nline 10\n');
    expect(await lines('8-100')).toBe('line 8\nline 9\nline 10\n');
    expect(await lines('11-')).toBe('');
    expect(await lines('5000-6000')).toBe('');
    expect(await lines('4')).toBe('line 4\n');
  });

  it.each(['0-1', '0', '3-2', '-0', 'abc', '1-x', '1.5'])(
    'refuses lines=%s as invalid params',
    async (value) => {
      const error = await failure(
        client.readResource({ uri: `${rootUri}ten.txt?lines=${value}` }, { cacheMode: 'bypass' }),
      );
      expect(error.code).toBe(-32602);
      expect(error.data).toMatchObject({ code: 'invalid_argument', argument: 'lines' });
    },
  );

  it('refuses a binary file and a directory as having no lines', async () => {
    for (const rel of ['image.png', 'src/']) {
      const error = await failure(
        client.readResource({ uri: `${rootUri}${rel}?lines=1-` }, { cacheMode: 'bypass' }),
      );
      expect(error.data).toMatchObject({ code: 'invalid_argument', argument: 'lines' });
    }
  });

  it('refuses any other query or fragment instead of ignoring it', async () => {
    for (const suffix of ['?x=1', '#top', '?lines=1-2&x=1', '?']) {
      const error = await failure(
        client.readResource({ uri: `${rootUri}ten.txt${suffix}` }, { cacheMode: 'bypass' }),
      );
      expect(error.code, suffix).toBe(-32602);
      expect(error.data, suffix).toMatchObject({ code: 'invalid_argument', argument: 'uri' });
    }
  });

  it('answers a range of an ignored, missing or escaping path exactly as not found', async () => {
    for (const rel of [
      'ignored/secret.txt',
      'debug.log',
      '.git/HEAD',
      'missing.txt',
      '%2e%2e/%2e%2e/etc/passwd',
      '..%2f..%2fetc%2fpasswd',
    ]) {
      const uri = `${rootUri}${rel}?lines=1-`;
      const error = await failure(client.readResource({ uri }, { cacheMode: 'bypass' }));
      expect(error, rel).toBeInstanceOf(ResourceNotFoundError);
    }
  });

  it('completes at the root: directories first, then files, no ignored or hidden entries', async () => {
    const { completion } = await complete('');
    expect(completion).toEqual({
      values: ['many/', 'src/', 'with space/', 'image.png', 'ten.txt'],
      total: 5,
      hasMore: false,
    });
  });

  it('completes in a subdirectory, for both templates', async () => {
    expect((await complete('src/')).completion.values).toEqual([
      'src/cli/',
      'src/core/',
      'src/config.ts',
    ]);
    expect((await complete('src/co')).completion.values).toEqual(['src/core/', 'src/config.ts']);
    expect((await complete('src/core/r', `${rootUri}{+path}{?lines}`)).completion.values).toEqual([
      'src/core/registry.ts',
    ]);
  });

  it('completes nothing when nothing matches', async () => {
    expect((await complete('src/zz')).completion).toEqual({ values: [], total: 0, hasMore: false });
  });

  it('caps beyond 100 matches with an honest total and hasMore', async () => {
    const { completion } = await complete('many/');
    expect(completion.values).toHaveLength(100);
    expect(completion.values[0]).toBe('many/f000.txt');
    expect(completion.total).toBe(130);
    expect(completion.hasMore).toBe(true);
  });

  it('never offers ignored paths or anything through ..', async () => {
    expect((await complete('i')).completion.values).toEqual(['image.png']);
    expect((await complete('ignored/')).completion.values).toEqual([]);
    expect((await complete('.')).completion.values).toEqual(['.gitignore']);
    expect((await complete('.git/')).completion.values).toEqual([]);
    for (const value of ['..', '../', '../../', 'src/../', '/etc/', '%2e%2e/']) {
      expect((await complete(value)).completion, value).toEqual({
        values: [],
        total: 0,
        hasMore: false,
      });
    }
  });

  it('answers 64 KiB hostile URIs promptly with an error, and keeps working', async () => {
    const fill = (s: string): string =>
      (rootUri + s.repeat(Math.ceil(65_536 / s.length))).slice(0, 65_535);
    const hostile = [
      fill('a/'),
      fill('%'),
      fill('%2e%2e/'),
      `${rootUri}x?lines=${'&'.repeat(65_536)}`.slice(0, 65_535),
      `${fill('?lines=a').slice(0, 65_534)}&`,
      fill('?lines=1-'),
      fill('#'),
    ];
    for (const uri of hostile) {
      // Each answers with a refusal (how fast: bench/sections/templates-hostile.mjs).
      const error = await failure(client.readResource({ uri }, { cacheMode: 'bypass' }));
      expect([-32602, -32002], `${uri.slice(rootUri.length, rootUri.length + 12)}…`).toContain(
        error.code,
      );
    }
    expect(await text(`${rootUri}ten.txt?lines=2-2`)).toBe('line 2\n');
  });
});
