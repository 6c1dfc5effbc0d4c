// search_resources through the real SDK client, over real stdio pipes (the built CLI) and a real
// HTTP socket, in both protocol eras: hits with snippets and one resource_link per hit, CJK and
// accented words, filters, paging, every bad input (an isError naming the argument the schema
// refuses, an isError saying what and where for a query the parser refuses), and list_resources/find_resources
// returning resource_link blocks too.
import { drawn } from '../helpers/snippet.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { Cleanup, connectTarget, label, spawnHttpServer, TARGETS } from '../helpers/clients.js';
import { dirUri, fileUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { textOf } from '../tools/helpers.js';

const cleanup = new Cleanup();
let root: string;
let httpUrl: string;

interface Hits {
  hits: {
    uri: string;
    name: string;
    title?: string;
    mimeType?: string;
    score: number;
    snippet: string;
    highlights: [number, number][];
    lastModified?: string;
  }[];
  nextCursor?: string;
  indexing?: { done: number; total: number };
}

beforeAll(async () => {
  await ensureBuilt();
  root = makeTempDir('reservoir-search-');
  cleanup.add(() => removeTree(root));
  writeTree(root, {
    'docs/retry.md': '# Retries\n\nThe retry budget is configured in config/retry.yaml.\n',
    'docs/pool.md': 'Connection pool sizing; no retries here.\n',
    'docs/cafe.txt': 'Le café ouvre à huit heures.\n',
    'docs/zh.md': '本系统支持资源订阅。\n',
    'src/budget.ts': 'export const retryBudget = 3; // retry budget\n',
    'notes/loud.md': 'A **zebra** 🦓 crossing, then the quiet okapi.\n',
  });
  const state = makeTempDir('reservoir-search-state-');
  cleanup.add(() => removeTree(state));
  httpUrl = (await spawnHttpServer([root], ['--state-dir', state], cleanup)).url;
});

afterAll(() => cleanup.run());

describe.each(TARGETS)('search_resources over $transport in the $era era', (target) => {
  let client: Client;
  const call = (args: Record<string, unknown>): Promise<CallToolResult> =>
    client.callTool({ name: 'search_resources', arguments: args }) as Promise<CallToolResult>;
  const hits = async (args: Record<string, unknown>): Promise<Hits> => {
    const result = await call(args);
    expect(result.isError ?? false, textOf(result)).toBe(false);
    return result.structuredContent as unknown as Hits;
  };
  const refused = async (args: Record<string, unknown>): Promise<string> => {
    const result = await call(args);
    expect(result.isError, JSON.stringify(result)).toBe(true);
    return textOf(result);
  };

  beforeAll(async () => {
    const state = makeTempDir('reservoir-search-state-');
    cleanup.add(() => removeTree(state));
    client = await connectTarget(
      target,
      { roots: [root], args: ['--state-dir', state], httpUrl },
      cleanup,
    );
    // A fresh state directory starts the first build on connect; a search during it answers with
    // what is indexed so far after waiting a second (`indexing` says so), which a loaded machine can
    // outrun. These tests are of answers from a built index: wait until an answer says it is one.
    for (;;) {
      const result = await call({ query: 'retry' });
      if ((result.structuredContent as unknown as Hits | undefined)?.indexing === undefined) break;
    }
  }, 120_000);

  it(`${label(target)}: is listed as a read-only tool with its arguments`, async () => {
    const tool = (await client.listTools()).tools.find((t) => t.name === 'search_resources');
    expect(tool?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(Object.keys(tool?.inputSchema.properties ?? {})).toEqual([
      'query',
      'limit',
      'cursor',
      'under',
      'mimeType',
      'source',
    ]);
    // Optional arguments are offered required but nullable, as strict hosts want (core/portable-schema.ts).
    expect(tool?.inputSchema.properties?.['limit']).toMatchObject({
      anyOf: [{ type: 'integer', minimum: 1, maximum: 100 }, { type: 'null' }],
    });
  });

  it(`${label(target)}: finds both files holding the words, with snippets, and one resource_link per hit`, async () => {
    const result = await call({ query: 'retry budget' });
    const data = result.structuredContent as unknown as Hits;
    expect(data.hits.map((h) => h.uri).sort()).toEqual([
      fileUri(root, 'docs/retry.md'),
      fileUri(root, 'src/budget.ts'),
    ]);
    for (const hit of data.hits) {
      expect(drawn(hit)).toMatch(/⟦retry⟧/i);
      expect(hit.score).toBeGreaterThan(0);
    }
    const links = result.content.filter((block) => block.type === 'resource_link');
    expect(links).toEqual(
      data.hits.map((h) =>
        expect.objectContaining({ type: 'resource_link', uri: h.uri, name: h.name }),
      ),
    );
    expect(textOf(result)).toContain('2 resources match "retry budget"');
  });

  it(`${label(target)}: matches accents either way and Chinese by word`, async () => {
    expect((await hits({ query: 'CAFE' })).hits.map((h) => h.name)).toEqual(['cafe.txt']);
    expect((await hits({ query: 'café' })).hits.map((h) => h.name)).toEqual(['cafe.txt']);
    expect((await hits({ query: '订阅' })).hits.map((h) => h.name)).toEqual(['zh.md']);
    expect(drawn((await hits({ query: '资源' })).hits[0]!)).toContain('⟦资源⟧');
  });

  it(`${label(target)}: gives the match as ranges into a plain snippet, so the text's own ** is no mark`, async () => {
    const result = await call({ query: 'okapi' });
    const [hit] = (result.structuredContent as unknown as Hits).hits;
    expect(hit?.snippet).toBe('A **zebra** 🦓 crossing, then the quiet okapi.');
    // Offsets count UTF-16 code units: the emoji before the match takes two.
    expect(hit?.highlights).toEqual([[40, 45]]);
    expect(textOf(result)).toContain(
      '\n   A **zebra** 🦓 crossing, then the quiet okapi.\n   match: "okapi"',
    );
    const bold = (await hits({ query: 'zebra' })).hits[0]!;
    expect(bold.snippet.slice(bold.highlights[0]![0], bold.highlights[0]![1])).toBe('zebra');
  });

  it(`${label(target)}: applies filters in the query and as arguments`, async () => {
    expect((await hits({ query: 'retry path:src/' })).hits.map((h) => h.name)).toEqual([
      'budget.ts',
    ]);
    expect(
      (await hits({ query: 'retr*', mimeType: 'text/markdown' })).hits.map((h) => h.name).sort(),
    ).toEqual(['pool.md', 'retry.md']);
    expect(
      (await hits({ query: 'retry', under: `${dirUri(root)}src/` })).hits.map((h) => h.name),
    ).toEqual(['budget.ts']);
  });

  it(`${label(target)}: pages with a cursor, seeing each hit once`, async () => {
    const first = await hits({ query: 'retr*', limit: 2 });
    expect(first.hits).toHaveLength(2);
    const second = await hits({ query: 'retr*', limit: 2, cursor: first.nextCursor });
    expect(second.nextCursor).toBeUndefined();
    const all = [...first.hits, ...second.hits].map((h) => h.uri);
    expect(new Set(all).size).toBe(all.length);
    expect(all).toHaveLength(3);
  });

  it(`${label(target)}: answers a query the parser refuses with an isError saying what and where`, async () => {
    expect(await refused({ query: '' })).toBe(
      "Invalid 'query': the query is empty: give at least one word (at column 1).",
    );
    expect(await refused({ query: 'x'.repeat(1001) })).toContain(
      'the query is 1001 characters long; the limit is 1000',
    );
    expect(await refused({ query: '*' })).toContain(
      'a wildcard needs at least one letter or digit before it',
    );
    expect(await refused({ query: 'retry "budget' })).toContain(
      'this quote is never closed (at column 7)',
    );
    expect(await refused({ query: 'colour:red' })).toContain(
      'unknown filter colour: (the filters are path:, mime:, source:)',
    );
    expect(await refused({ query: 'retry', source: 'nope' })).toContain(
      'no indexed source is named "nope"',
    );
  });

  it(`${label(target)}: refuses a forged cursor and a cursor of another query`, async () => {
    const first = await hits({ query: 'retr*', limit: 1 });
    expect(await refused({ query: 'retr*', cursor: 'forged.cursor' })).toMatch(
      /^Invalid cursor: not a cursor this server issued/,
    );
    expect(await refused({ query: 'budget', cursor: first.nextCursor })).toMatch(
      /^Invalid cursor: cursor belongs to another list/,
    );
  });

  it(`${label(target)}: answers a limit out of range with an isError result naming it`, async () => {
    for (const limit of [0, 101, 1.5]) {
      const result = await call({ query: 'retry', limit });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain("Invalid argument 'limit' for search_resources");
    }
  });

  it(`${label(target)}: list_resources and find_resources return resource_link blocks too`, async () => {
    for (const [name, args] of [
      ['list_resources', { limit: 3 }],
      ['find_resources', { name: '*.md' }],
    ] as const) {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      const listed = (result.structuredContent as { resources: { uri: string; name: string }[] })
        .resources;
      expect(listed.length).toBeGreaterThan(0);
      expect(result.content.filter((b) => b.type === 'resource_link')).toEqual(
        listed.map((r) =>
          expect.objectContaining({ type: 'resource_link', uri: r.uri, name: r.name }),
        ),
      );
    }
  });
});

describe('turning search off', () => {
  it('offers no search_resources with --no-search, or with search.enabled: false in the config file', async () => {
    const state = makeTempDir('reservoir-search-state-');
    cleanup.add(() => removeTree(state));
    const off = await connectTarget(
      { transport: 'stdio', era: '2026' },
      { roots: [root], args: ['--no-search', '--state-dir', state] },
      cleanup,
    );
    expect((await off.listTools()).tools.map((t) => t.name)).toEqual([
      'find_resources',
      'list_resources',
      'read_resource',
    ]);
    const config = join(state, 'reservoir.yaml');
    writeFileSync(
      config,
      [
        'sources:',
        '  - type: files',
        `    root: ${JSON.stringify(root)}`,
        'server:',
        '  logLevel: warn',
        'search:',
        '  enabled: false',
        '',
      ].join('\n'),
    );
    const configured = await connectTarget(
      { transport: 'stdio', era: '2025' },
      { roots: [], args: ['--config', config, '--state-dir', state] },
      cleanup,
    );
    expect((await configured.listTools()).tools.map((t) => t.name)).not.toContain(
      'search_resources',
    );
  });
});
