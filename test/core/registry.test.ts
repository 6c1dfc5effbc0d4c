// Pins the Registry: merged keyset pagination across mounts (fake in-memory providers and real file
// roots) sees every item exactly once at any page size, mounts must not overlap, routing is by whole
// root prefix, unknown schemes and unserved URIs are NotFoundError, page sizes are range-checked,
// templates paginate too, stale or foreign cursors are InvalidCursorError, and the encoded read
// response is capped.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCursorCodec } from '../../src/core/cursor.js';
import {
  ConfigError,
  InvalidArgumentError,
  InvalidCursorError,
  InvalidUriError,
  TooLargeError,
} from '../../src/core/errors.js';
import { MAX_PAGE_SIZE, Registry, type ListPage } from '../../src/core/registry.js';
import type { ResourceInfo, ResourceTemplateInfo } from '../../src/core/types.js';
import { filesProvider } from '../../src/providers/files/index.js';
import {
  ctx,
  expectNotFound,
  fileUri,
  rejection,
  removeDir,
  tempDir,
  writeTree,
} from '../providers/helpers.js';
import { memoryProvider, templatesNamed } from './fakes.js';

const SECRET = 'registry test secret, comfortably over thirty-two bytes';
const PAGE_SIZES = [1, 2, 7, 1000];

async function listAll(
  registry: Registry,
  limit: number,
  binding?: string,
): Promise<{ items: ResourceInfo[]; pages: number }> {
  const items: ResourceInfo[] = [];
  let cursor: string | undefined;
  for (let pages = 1; pages < 100_000; pages += 1) {
    const page: ListPage<ResourceInfo> = await registry.listResources(cursor, ctx(), {
      limit,
      ...(binding === undefined ? {} : { binding }),
    });
    expect(page.items.length).toBeLessThanOrEqual(limit);
    items.push(...page.items);
    if (page.nextCursor === undefined) return { items, pages };
    cursor = page.nextCursor;
  }
  throw new Error('listing never ended');
}

function listAllTemplates(registry: Registry, limit: number): ResourceTemplateInfo[] {
  const items: ResourceTemplateInfo[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 10_000; i += 1) {
    const page = registry.listTemplates(cursor, { limit });
    expect(page.items.length).toBeLessThanOrEqual(limit);
    items.push(...page.items);
    if (page.nextCursor === undefined) return items;
    cursor = page.nextCursor;
  }
  throw new Error('template listing never ended');
}

function expectExactlyOnce(seen: string[], expected: string[]): void {
  expect(new Set(seen).size).toBe(seen.length);
  expect(seen).toEqual(expected);
}

describe('registry with in-memory providers', () => {
  const alpha = ['a1', 'a2', 'a3', 'a4', 'a5'];
  const beta = ['b1'];
  const gamma = Array.from({ length: 13 }, (_, i) => `g${String(i).padStart(2, '0')}`);
  const build = (options: ConstructorParameters<typeof Registry>[0] = {}): Registry =>
    new Registry(options)
      .mount(memoryProvider({ root: 'mem://alpha/', names: alpha }))
      .mount(memoryProvider({ root: 'mem://empty/', names: [] }))
      .mount(memoryProvider({ root: 'mem://beta/', names: beta }))
      .mount(memoryProvider({ root: 'mem://gamma/', names: gamma, maxPage: 3 }));
  const expected = [
    ...alpha.map((n) => `mem://alpha/${n}`),
    ...beta.map((n) => `mem://beta/${n}`),
    ...gamma.map((n) => `mem://gamma/${n}`),
  ];

  it('sees every item exactly once, in mount order, across mount boundaries at page sizes 1, 2, 7 and 1000', async () => {
    const registry = build();
    for (const limit of PAGE_SIZES) {
      const { items } = await listAll(registry, limit);
      expectExactlyOnce(
        items.map((i) => i.uri),
        expected,
      );
    }
  });

  it('fills each page across mounts, asking each provider only for the room left in the page', async () => {
    const a = memoryProvider({ root: 'mem://a/', names: ['1', '2', '3'] });
    const b = memoryProvider({ root: 'mem://b/', names: ['1', '2', '3'] });
    const registry = new Registry().mount(a).mount(b);
    const page = await registry.listResources(undefined, ctx(), { limit: 5 });
    expect(page.items.map((i) => i.uri)).toEqual([
      'mem://a/1',
      'mem://a/2',
      'mem://a/3',
      'mem://b/1',
      'mem://b/2',
    ]);
    expect(a.listCalls).toEqual([{ after: undefined, limit: 5 }]);
    expect(b.listCalls).toEqual([{ after: undefined, limit: 2 }]);
    expect(page.nextCursor).toBeDefined();
  });

  it('uses the configured default page size when the caller gives none', async () => {
    const registry = build({ pageSize: 4 });
    const page = await registry.listResources(undefined, ctx());
    expect(page.items).toHaveLength(4);
  });

  it('ends with no cursor when nothing is mounted or everything fits', async () => {
    expect(await new Registry().listResources(undefined, ctx())).toEqual({ items: [] });
    const page = await build().listResources(undefined, ctx(), { limit: 1000 });
    expect(page.nextCursor).toBeUndefined();
  });

  it('refuses overlapping roots in either order, but not roots that merely share a string prefix', () => {
    expect(() =>
      new Registry()
        .mount(memoryProvider({ root: 'mem://a/', names: [] }))
        .mount(memoryProvider({ root: 'mem://a/b/', names: [] })),
    ).toThrow(ConfigError);
    expect(() =>
      new Registry()
        .mount(memoryProvider({ root: 'mem://a/b/', names: [] }))
        .mount(memoryProvider({ root: 'mem://a/', names: [] })),
    ).toThrow(ConfigError);
    expect(() =>
      new Registry()
        .mount(memoryProvider({ root: 'mem://a/', names: [] }))
        .mount(memoryProvider({ root: 'mem://a/', names: [] })),
    ).toThrow(/overlaps/);
    expect(() =>
      new Registry()
        .mount(memoryProvider({ root: 'mem://a/', names: [] }))
        .mount(memoryProvider({ root: 'mem://ab/', names: [] })),
    ).not.toThrow();
  });

  it('refuses a root that is not in normalised form', () => {
    expect(() => new Registry().mount(memoryProvider({ root: 'MEM://a/', names: [] }))).toThrow(
      ConfigError,
    );
    expect(() =>
      new Registry().mount(memoryProvider({ root: 'file:///srv/./docs/', names: [] })),
    ).toThrow(/normalised/);
  });

  it('routes a URI to the mount whose root is its prefix, and a root without its slash to that root', async () => {
    const registry = new Registry()
      .mount(memoryProvider({ root: 'mem://a/', names: ['x'] }))
      .mount(memoryProvider({ root: 'mem://ab/', names: ['x'] }));
    expect(registry.route('mem://ab/x')?.root).toBe('mem://ab/');
    expect(registry.route('mem://a/x')?.root).toBe('mem://a/');
    expect(registry.route('mem://a')?.root).toBe('mem://a/');
    expect(registry.route('mem://abc/x')).toBeUndefined();
    const result = await registry.read('mem://ab/x', ctx());
    expect(result.contents[0]?.uri).toBe('mem://ab/x');
  });

  it('answers an unknown scheme, or a URI under no root, with NotFoundError', async () => {
    const registry = build();
    for (const uri of [
      'nope://alpha/a1',
      'http://alpha/a1',
      'mem://delta/a1',
      'mem://alph/a1',
      'file:///etc/passwd',
    ]) {
      await expectNotFound(registry.read(uri, ctx()), uri);
    }
    await expectNotFound(registry.read('mem://alpha/zz', ctx()), 'mem://alpha/zz');
  });

  it('answers a malformed URI with InvalidUriError rather than NotFoundError', async () => {
    for (const uri of ['', 'relative/path', 'mem://alpha/\u0001', 42]) {
      expect(await rejection(build().read(uri, ctx()))).toBeInstanceOf(InvalidUriError);
    }
  });

  it('refuses page sizes out of range with InvalidArgumentError', async () => {
    const registry = build();
    for (const limit of [0, -1, MAX_PAGE_SIZE + 1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      const error = await rejection(registry.listResources(undefined, ctx(), { limit }));
      expect(error, String(limit)).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).data).toMatchObject({ argument: 'limit' });
      expect(() => registry.listTemplates(undefined, { limit })).toThrow(InvalidArgumentError);
    }
    expect(() => new Registry({ pageSize: 0 })).toThrow(InvalidArgumentError);
    expect(() => new Registry({ pageSize: MAX_PAGE_SIZE + 1 })).toThrow(InvalidArgumentError);
    await expect(
      registry.listResources(undefined, ctx(), { limit: MAX_PAGE_SIZE }),
    ).resolves.toBeDefined();
  });

  it('paginates templates across mounts, every template exactly once at page sizes 1, 2, 7 and 1000', () => {
    const registry = new Registry()
      .mount(memoryProvider({ root: 'mem://t1/', names: [], templates: templatesNamed('one', 3) }))
      .mount(memoryProvider({ root: 'mem://t2/', names: [] }))
      .mount(
        memoryProvider({ root: 'mem://t3/', names: [], templates: templatesNamed('three', 5) }),
      );
    const expectedNames = [...templatesNamed('one', 3), ...templatesNamed('three', 5)].map(
      (t) => t.name,
    );
    for (const limit of PAGE_SIZES)
      expectExactlyOnce(
        listAllTemplates(registry, limit).map((t) => t.name),
        expectedNames,
      );
  });

  it('refuses a resources cursor on the templates list and the other way round', async () => {
    const registry = build();
    const resources = (await registry.listResources(undefined, ctx(), { limit: 1 })).nextCursor!;
    expect(() => registry.listTemplates(resources)).toThrow(InvalidCursorError);
    const templated = new Registry().mount(
      memoryProvider({ root: 'mem://t/', names: ['x'], templates: templatesNamed('t', 3) }),
    );
    const templates = templated.listTemplates(undefined, { limit: 1 }).nextCursor!;
    await expect(templated.listResources(templates, ctx())).rejects.toThrow(InvalidCursorError);
  });

  it('refuses a cursor pointing at a mount that is no longer mounted', async () => {
    const before = build({ cursorSecret: SECRET });
    let cursor: string | undefined;
    for (let i = 0; i < 100; i += 1) {
      const page = await before.listResources(cursor, ctx(), { limit: 2 });
      cursor = page.nextCursor;
      if (page.items.some((item) => item.uri.startsWith('mem://gamma/'))) break;
    }
    const after = new Registry({ cursorSecret: SECRET }).mount(
      memoryProvider({ root: 'mem://alpha/', names: alpha }),
    );
    const error = await rejection(after.listResources(cursor, ctx(), { limit: 2 }));
    expect(error).toBeInstanceOf(InvalidCursorError);
    expect((error as InvalidCursorError).data['reason']).toMatch(/no longer served/);
  });

  it('accepts a cursor from another registry only when both share the cursor secret', async () => {
    const one = build({ cursorSecret: SECRET });
    const cursor = (await one.listResources(undefined, ctx(), { limit: 3 })).nextCursor!;
    const rest = await build({ cursorSecret: SECRET }).listResources(cursor, ctx(), {
      limit: 1000,
    });
    expect(rest.items.map((i) => i.uri)).toEqual(expected.slice(3));
    await expect(build().listResources(cursor, ctx(), { limit: 1000 })).rejects.toThrow(
      InvalidCursorError,
    );
  });

  it('ties cursors to their binding', async () => {
    const registry = build();
    const { items } = await listAll(registry, 2, 'alice');
    expect(items.map((i) => i.uri)).toEqual(expected);
    const cursor = (await registry.listResources(undefined, ctx(), { limit: 2, binding: 'alice' }))
      .nextCursor!;
    await expect(
      registry.listResources(cursor, ctx(), { limit: 2, binding: 'bob' }),
    ).rejects.toThrow(InvalidCursorError);
    await expect(registry.listResources(cursor, ctx(), { limit: 2 })).rejects.toThrow(
      InvalidCursorError,
    );
  });

  it('refuses a correctly sealed cursor whose resume key its provider rejects', async () => {
    const registry = build({ cursorSecret: SECRET });
    const codec = createCursorCodec(SECRET);
    const bad = codec.encode({ list: 'resources', mount: 'mem://alpha/', after: 'bad\u0001key' });
    const error = await rejection(registry.listResources(bad, ctx()));
    expect(error).toBeInstanceOf(InvalidCursorError);
    expect((error as InvalidCursorError).data['reason']).toMatch(/not valid for its source/);
    const badOffset = codec.encode({ list: 'templates', mount: 'mem://alpha/', after: '0' });
    expect(() => registry.listTemplates(badOffset)).toThrow(InvalidCursorError);
  });

  it('refuses a read whose encoded response exceeds maxResponseBytes with TooLargeError (measure encoded)', async () => {
    const registry = new Registry({ maxResponseBytes: 4096 }).mount(
      memoryProvider({
        root: 'mem://big/',
        names: ['small', 'huge'],
        blobs: { small: 1000, huge: 8192 },
      }),
    );
    await expect(registry.read('mem://big/small', ctx())).resolves.toBeDefined();
    const error = await rejection(registry.read('mem://big/huge', ctx()));
    expect(error).toBeInstanceOf(TooLargeError);
    const data = (error as TooLargeError).data;
    expect(data).toMatchObject({ uri: 'mem://big/huge', limit: 4096, measure: 'encoded' });
    expect(data['size']).toBeGreaterThan(8192);
  });

  it('measures a text response by its real encoded size, so a text well under the cap is served', async () => {
    const text = 'a'.repeat(100_000);
    const provider = memoryProvider({ root: 'mem://text/', names: ['t'] });
    provider.read = async (uri) => ({ contents: [{ uri, mimeType: 'text/plain', text }] });
    const registry = new Registry({ maxResponseBytes: 200_000 }).mount(provider);
    const result = await registry.read('mem://text/t', ctx());
    expect(result.contents[0]).toMatchObject({ text });
  });

  it('counts JSON escaping when measuring a text response', async () => {
    // 120 001 characters, but every one of them takes at least 2 bytes once JSON-escaped.
    const text = `${'"'.repeat(60_000)}${'\n'.repeat(60_000)}\u0001`;
    const provider = memoryProvider({ root: 'mem://esc/', names: ['t'] });
    provider.read = async (uri) => ({ contents: [{ uri, text }] });
    const registry = new Registry({ maxResponseBytes: 200_000 }).mount(provider);
    const error = await rejection(registry.read('mem://esc/t', ctx()));
    expect(error).toBeInstanceOf(TooLargeError);
    expect((error as TooLargeError).data['measure']).toBe('encoded');
  });

  it('closes every provider once and unmounts them', async () => {
    const a = memoryProvider({ root: 'mem://a/', names: ['x'] });
    const b = memoryProvider({ root: 'mem://b/', names: ['x'] });
    const registry = new Registry().mount(a).mount(b);
    await registry.close();
    await registry.close();
    expect([a.closeCalls, b.closeCalls]).toEqual([1, 1]);
    expect(registry.providers()).toHaveLength(0);
  });
});

describe('registry with real file roots', () => {
  let base: string;
  let registry: Registry;
  let expected: string[];

  beforeAll(async () => {
    base = tempDir('reservoir-registry-');
    const trees: Record<string, Record<string, string>> = {
      docs: {
        'a.md': 'a',
        'b/c.md': 'c',
        'b/d/e.md': 'e',
        'f.md': 'f',
        '.gitignore': 'skip.md\n',
        'skip.md': 'x',
      },
      'docs-2': { 'only.txt': 'only' },
      empty: {},
      src: Object.fromEntries(
        Array.from({ length: 11 }, (_, i) => [
          `mod${String(i).padStart(2, '0')}.ts`,
          `export const n = ${i};`,
        ]),
      ),
    };
    registry = new Registry();
    expected = [];
    for (const [name, files] of Object.entries(trees)) {
      const root = join(base, name);
      mkdirSync(root);
      writeTree(root, files);
      registry.mount(await filesProvider({ root }));
      const rels = Object.keys(files).filter((rel) => rel !== 'skip.md');
      // The walk order of each tree: depth-first, segment-wise.
      const order: Record<string, string[]> = {
        docs: ['.gitignore', 'a.md', 'b/c.md', 'b/d/e.md', 'f.md'],
      };
      expected.push(...(order[name] ?? rels.sort()).map((rel) => fileUri(join(root, rel))));
    }
    registry.mount(memoryProvider({ root: 'mem://after-files/', names: ['m1', 'm2'] }));
    expected.push('mem://after-files/m1', 'mem://after-files/m2');
  });

  afterAll(() => removeDir(base));

  it('sees every file exactly once across several roots and a fake mount at page sizes 1, 2, 7 and 1000', async () => {
    for (const limit of PAGE_SIZES) {
      const { items } = await listAll(registry, limit);
      expectExactlyOnce(
        items.map((i) => i.uri),
        expected,
      );
    }
  });

  it('reads through the registry from each root, and refuses a root nested inside a mounted one', async () => {
    const result = await registry.read(fileUri(join(base, 'docs-2', 'only.txt')), ctx());
    expect(result.contents[0]).toMatchObject({ text: 'only' });
    await expectNotFound(registry.read(fileUri(join(base, 'docs', 'skip.md')), ctx()));
    const nested = await filesProvider({ root: join(base, 'docs', 'b') });
    const outer = await filesProvider({ root: base });
    expect(() => registry.mount(nested)).toThrow(ConfigError);
    expect(() => new Registry().mount(nested).mount(outer)).toThrow(ConfigError);
  });
});
