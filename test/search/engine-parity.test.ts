// Both index engines find the same documents for the same query (RESERVOIR_TEST_PG; skipped with a
// message when unset): text PostgreSQL's own parsers would split differently — hyphens, e-mail
// addresses, hosts, paths, underscores, decimals, accents, CJK runs inside Latin text, Japanese
// kana — and every operator of the query language, searched on a SQLite index and a PostgreSQL
// index of one tree.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ctx, removeDir, tempDir, writeTree } from '../providers/helpers.js';
import { backends, closeServices, PG_URL, servicesOver, type EngineService } from './backends.js';

const BACKENDS = backends();
let root: string;
let services: EngineService[] = [];

const QUERIES = [
  'state-of-the-art',
  'state',
  '"state of the art"',
  'ops@example.com',
  'example',
  'api.example.org',
  'snake_case_name',
  'case',
  '3.14159',
  '14159',
  'naïve',
  'NAIVE',
  'Ærøskøbing',
  '资源',
  '订阅',
  '全文搜索',
  'Reservoir资源',
  '購読',
  'サーバー',
  'retr*',
  'con*',
  '"retry budget"',
  '"budget retry"',
  'retry OR ocelot',
  'budget -retry',
  'budget NOT (retry OR cap*)',
  '(alpha OR beta) gamma',
  'alpha*',
  'path:docs/ budget',
  'mime:text/markdown retry',
  'zebra',
  'uniquename*',
];

/**
 * Words of scripts whose letters carry marks the tokenizer keeps (й, ё, Greek accents), that are
 * themselves marks (Devanagari vowel signs, Arabic and Hebrew points), or that decompose (Hangul).
 */
const SCRIPT_WORDS = [
  'край',
  'ёлка',
  'σοφός',
  'Ἀθῆναι',
  '한국어',
  'हिन्दी',
  'مَرْحَبًا',
  'שָׁלוֹם',
  'Việt',
];

describe.skipIf(PG_URL === '')('the SQLite and PostgreSQL engines', () => {
  beforeAll(async () => {
    root = tempDir();
    writeTree(root, {
      'docs/art.md': 'A state-of-the-art design: the state of the art moves.\n',
      'docs/mail.txt': 'Write to ops@example.com or visit api.example.org/v1/index.html today.\n',
      'docs/code.ts': 'const snake_case_name = 3.14159; // retry budget\n',
      'docs/naive.md': 'A naïve approach in Ærøskøbing; the budget caps retries.\n',
      'docs/zh.md': '本系统支持资源订阅和全文搜索。Reservoir资源 are mixed.\n',
      'docs/ja.md': 'このサーバーはリソースを購読できます。\n',
      'docs/greek.md': 'alpha beta gamma; alphabet soup; budget\n',
      'notes/plain.txt': 'budget without the other word; configuration and config.\n',
      'src/uniquename-zebra.ts': 'export {};\n',
      'docs/scripts.md': `${SCRIPT_WORDS.join(', ')}.\n`,
    });
    services = await servicesOver(root, BACKENDS);
  });

  afterAll(async () => {
    await closeServices(services, BACKENDS);
    removeDir(root);
  });

  it.each(QUERIES)('find the same documents for %s', async (query) => {
    const found = await Promise.all(
      services.map(async ({ service }) =>
        (await service.search({ query, limit: 50 }, ctx())).hits.map((h) => h.uri).sort(),
      ),
    );
    expect(found[1]).toEqual(found[0]);
  });

  it.each(SCRIPT_WORDS)('each find %s, spelt as the text spells it', async (word) => {
    for (const { service } of services) {
      const { hits } = await service.search({ query: word, limit: 5 }, ctx());
      expect(hits.map((h) => h.uri)).toContain(`file://${root}/docs/scripts.md`);
    }
  });

  it('agree on at least one hit for most of these queries (the comparison is not of empty answers)', async () => {
    let answered = 0;
    for (const query of QUERIES)
      if ((await services[0]!.service.search({ query, limit: 5 }, ctx())).hits.length > 0)
        answered += 1;
    expect(answered).toBeGreaterThan(QUERIES.length - 5);
  });
});
