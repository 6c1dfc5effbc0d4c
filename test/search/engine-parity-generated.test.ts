// Both index engines find the same documents for generated queries over generated texts
// (RESERVOIR_TEST_PG; skipped with a message when unset): engine-parity.test.ts names the cases
// one by one, this draws many of each kind from one seed — words of many scripts (marks kept,
// dropped or separating, capitals of every kind, full-width forms, digits of other scripts) joined
// by the separators the tokenizer splits on, searched as words, prefixes, phrases, OR, NOT and
// groups — so a spelling neither list thought of still meets both engines. (It found Greek,
// Cyrillic, Hangul, Devanagari and Arabic words the SQLite index could not find: unicode61.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../helpers/tree.js';
import { ctx, removeDir, tempDir, writeTree } from '../providers/helpers.js';
import { backends, closeServices, PG_URL, servicesOver, type EngineService } from './backends.js';

const BACKENDS = backends();
const LIMIT = 50;
const WORDS = [
  'budget',
  'Budget',
  'BUDGET',
  'retry',
  'retries',
  'cap',
  'naïve',
  'naive',
  'Straße',
  'strasse',
  'Ærø',
  'café',
  'CAFÉ',
  'x86_64',
  'snake_case',
  'v2',
  'v2.1',
  '3.14',
  '42',
  "don't",
  "o'neil",
  'ops@example.com',
  'api.example.org',
  'state-of-the-art',
  'e-mail',
  '资源',
  '订阅',
  '全文搜索',
  'Reservoir资源',
  'サーバー',
  '購読',
  'αβγ',
  'Ωmega',
  'ünïcödé',
  'İstanbul',
  'ǅemal',
  'ﬁle',
  'cafe\u0301',
  'ＡＢＣ',
  'abc',
  'ıi',
  'ΣΟΦΟΣ',
  'σοφος',
  'σοφός',
  '한국어',
  'ภาษาไทย',
  'مرحبا',
  'שלום',
  '١٢٣',
  'it’s',
  'co‐op',
  'x—y',
  'a\u00a0b',
  '👍ok',
  'zw\u200bj',
  'long'.repeat(70),
  'MiXeD',
  'ǆ',
];
const SEPARATORS = [' ', ' ', ' ', ', ', '. ', '-', '/', '_', '\n', ' (', ') ', ': ', '"', '\t'];
const DOCUMENTS = 90;
const QUERIES = 120;

const random = seededRandom(20261129);
const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;

function text(): string {
  const parts: string[] = [];
  const length = 3 + Math.floor(random() * 14);
  for (let i = 0; i < length; i += 1) parts.push(pick(WORDS), pick(SEPARATORS));
  return parts.join('');
}

/** A query of the language's every form, its words drawn from the same list (a few of them cut). */
function query(depth = 0): string {
  const word = (): string => {
    const w = pick(WORDS);
    return random() < 0.15 && [...w].length > 3
      ? `${[...w].slice(0, 2 + Math.floor(random() * 2)).join('')}*`
      : w;
  };
  const roll = random();
  if (depth > 1 || roll < 0.3) return word();
  if (roll < 0.45) return `"${pick(WORDS)} ${pick(WORDS)}"`;
  if (roll < 0.6) return `${query(depth + 1)} OR ${query(depth + 1)}`;
  if (roll < 0.72) return `${query(depth + 1)} -${word()}`;
  if (roll < 0.84) return `(${query(depth + 1)} OR ${word()}) ${word()}`;
  return `${query(depth + 1)} ${query(depth + 1)}`;
}

const files: Record<string, string> = {};
// every fifth file named by a word too: names and paths are searched as well
for (let i = 0; i < DOCUMENTS; i += 1)
  files[`d${i % 7}/${i % 5 === 0 ? `${pick(WORDS).slice(0, 40)}-` : ''}t${i}.txt`] = `${text()}\n`;
const queries = Array.from({ length: QUERIES }, () => query());

let root: string;
let services: EngineService[] = [];

describe.skipIf(PG_URL === '')('the SQLite and PostgreSQL engines, on generated texts', () => {
  beforeAll(async () => {
    root = tempDir();
    writeTree(root, files);
    services = await servicesOver(root, BACKENDS);
  });

  afterAll(async () => {
    await closeServices(services, BACKENDS);
    removeDir(root);
  });

  it('find the same documents for every query (all of them, where fewer than a page match)', async () => {
    const differ: string[] = [];
    let compared = 0;
    let answered = 0;
    for (const q of queries) {
      const found = await Promise.all(
        services.map(async ({ service }) => {
          try {
            return (await service.search({ query: q, limit: LIMIT }, ctx())).hits
              .map((h) => h.uri)
              .sort();
          } catch (error) {
            return [`refused: ${(error as Error).message}`];
          }
        }),
      );
      const [a, b] = found as [string[], string[]];
      if (a.length === LIMIT && b.length === LIMIT) continue;
      compared += 1;
      if (a.length > 0) answered += 1;
      if (JSON.stringify(a) !== JSON.stringify(b)) {
        const name = (u: string): string => decodeURIComponent(u).slice(`file://${root}/`.length);
        const only = (x: string[], y: string[]): string[] =>
          x
            .filter((u) => !y.includes(u))
            .map((u) => `${name(u)}=${JSON.stringify(files[name(u)])}`);
        differ.push(
          `${q} || sqlite only: ${only(a, b).join(' ; ')} || postgres only: ${only(b, a).join(' ; ')}`,
        );
      }
    }
    expect(differ).toEqual([]);
    // the comparison is of answers, not of empty ones
    expect(compared).toBeGreaterThan(QUERIES * 0.8);
    expect(answered).toBeGreaterThan(compared * 0.6);
  });
});
