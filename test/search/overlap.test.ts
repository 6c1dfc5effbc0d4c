// A word in the names and in the texts of many files at once: each file is one hit, whether its
// name, its text or both matched, across pages of any size, with and without filters — the name
// matches are looked up once per search rather than once per text (which was quadratic).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/log.js';
import { Registry } from '../../src/core/registry.js';
import type { Provider } from '../../src/core/types.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { SearchService, type SearchRequest } from '../../src/search/service.js';
import { ctx, removeDir, tempDir, writeTree } from '../providers/helpers.js';

let root: string;
let state: string;
let registry: Registry;
let service: SearchService;
const expected = new Set<string>();

beforeAll(async () => {
  root = tempDir();
  state = tempDir('reservoir-state-');
  const tree: Record<string, string> = {};
  // Both name and text, text only, name only, and neither: the first three are hits.
  for (let i = 0; i < 400; i += 1) tree[`both/wombat-${i}.md`] = `wombat number ${i}\n`;
  for (let i = 0; i < 150; i += 1) tree[`text/note-${i}.md`] = `a wombat or ${i % 7} wombats\n`;
  for (let i = 0; i < 60; i += 1) tree[`name/wombat-only-${i}.md`] = `nothing to see ${i}\n`;
  for (let i = 0; i < 40; i += 1) tree[`other/x-${i}.md`] = `unrelated ${i}\n`;
  writeTree(root, tree);
  for (const rel of Object.keys(tree)) if (!rel.startsWith('other/')) expected.add(rel);
  registry = new Registry().mount(filesProvider({ root, watch: { settleMs: 10 } }) as Provider);
  service = new SearchService(registry, { stateDir: state }, silentLogger);
  await service.ready;
});

afterAll(async () => {
  await service.close();
  await registry.close();
  removeDir(root);
  removeDir(state);
});

async function everyPage(
  request: Omit<SearchRequest, 'limit' | 'cursor'>,
  limit: number,
): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await service.search(
      { ...request, limit, ...(cursor === undefined ? {} : { cursor }) },
      ctx(),
    );
    seen.push(...page.hits.map((h) => h.uri.slice(registry.providers()[0]!.root.length)));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return seen;
}

// Pages of 1 are 610 searches in a row: seconds alone, past the default 30 s beside a loaded suite
// on two cores, so these cases get a larger budget (a time limit, not a speed claim).
it.each([1, 7, 100, 1000])(
  'finds each of 610 matching files once, in pages of %i',
  async (limit) => {
    const seen = await everyPage({ query: 'wombat' }, limit);
    expect(new Set(seen).size).toBe(seen.length);
    expect(new Set(seen)).toEqual(expected);
  },
  180_000,
);

it('finds each matching file once under a filter, which takes the joined path', async () => {
  const seen = await everyPage(
    { query: 'wombat', under: `${registry.providers()[0]!.root}both/` },
    9,
  );
  expect(new Set(seen).size).toBe(seen.length);
  expect(seen.length).toBe(400);
  expect(seen.every((rel) => rel.startsWith('both/'))).toBe(true);
});
