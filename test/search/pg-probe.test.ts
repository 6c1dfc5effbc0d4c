// The two ways a PostgreSQL index finds a page of text matches give the same rows (RESERVOIR_TEST_PG;
// skipped with a message when unset): walking the texts in rank order through the rank index (a
// common word, or one found mostly in short texts) and the GIN index with a sort (a rare word, or one
// found only in the longest texts, where a walk comes back short). Read from any position, in pages
// of any size, for a caller of every document or of some of them, each page is the slice of the one
// ranking a single sorted statement over every match gives.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDoc } from '../../src/search/document.js';
import type { PgBackend } from '../../src/search/pg/backend.js';
import { PROBE_FIRST, textsPage } from '../../src/search/pg/probe.js';
import { numbered, TEXT_SCORE } from '../../src/search/pg/query.js';
import type { Tables } from '../../src/search/pg/schema.js';
import { sizeLexemes, smallestSizeSql } from '../../src/search/pg/sizes.js';
import type { Position, Row } from '../../src/search/rows.js';
import { scopeSql, type Scope } from '../../src/search/scope.js';
import { Segmenter } from '../../src/search/segment.js';
import { openPgIndex, PG_URL, searchRun, testSchema } from './backends.js';

const SCHEMA = testSchema();
const ROOT = 'file:///probe/';
const TEXTS = PROBE_FIRST * 3;
const ALIKE = PROBE_FIRST + 44;
const ALIKE_HELD = 6;
const segmenter = new Segmenter();
const ALL: Scope = { kind: 'all' };
const SOME: Scope = { kind: 'ranges', allow: [`${ROOT}a/`], deny: [`${ROOT}a/x`] };
let backend: PgBackend;
let client: pg.Client;
let tables: Tables;

async function read(query: string, scope: Scope, after?: Position, want = 400): Promise<Row[]> {
  const { rows } = await backend.matches(searchRun(query), scope, after, want, false);
  const found: Row[] = [];
  for await (const row of rows) {
    found.push(row);
    if (found.length === want) break;
  }
  return found;
}

/** Every text match of `word` in rank order, by one plain statement: the ranking pages must follow. */
async function ranking(word: string, scope: Scope): Promise<string[]> {
  const bounds = scopeSql(scope);
  const { rows } = await client.query<{ uri: string }>(
    `SELECT d.uri FROM ${tables.blobs} b JOIN ${tables.docs} d ON d.blob = b.id ` +
      `WHERE b.body @@ $1::tsquery AND NOT d.names @@ $1::tsquery ${numbered(bounds.sql, 2)} ` +
      `ORDER BY ${TEXT_SCORE}, b.id, d.id`,
    [`'${word}'`, ...bounds.params],
  );
  return rows.map((r) => r.uri);
}

describe.skipIf(PG_URL === '')('the pages of text matches of a PostgreSQL index', () => {
  beforeAll(async () => {
    ({ backend, tables } = await openPgIndex(SCHEMA, ROOT));
    client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    const docs = [];
    for (let i = 0; i < TEXTS; i += 1) {
      // Sizes in no order of writing; "common" in every third text, "seldom" in every 97th,
      // "longest" in the 40 longest alone, "shortest" in the 40 shortest alone.
      const size = (i * 389) % TEXTS;
      const words = ['filler'];
      if (i % 3 === 0) words.push('common');
      if (i % 97 === 5) words.push('seldom');
      if (size >= TEXTS - 40) words.push('longest');
      if (size < 40) words.push('shortest');
      const text = `${words.join(' ')} ${'z'.repeat(size)}`;
      const path = `${i % 2 === 0 ? 'a' : 'b'}/${i % 5 === 0 ? 'x' : 'y'}${i}.md`;
      docs.push(
        buildDoc({ uri: `${ROOT}${path}`, name: `${i}.md` }, ROOT, `s:${i}`, segmenter, {
          key: `uri:${ROOT}${path}`,
          text,
        }),
      );
    }
    // ALIKE texts of one size, longer than every other, "alike" in the last ALIKE_HELD written: a
    // walk from that size meets none of them within its first PROBE_FIRST texts.
    for (let i = 0; i < ALIKE; i += 1) {
      const path = `${i % 2 === 0 ? 'a' : 'b'}/alike${i}.md`;
      docs.push(
        buildDoc({ uri: `${ROOT}${path}`, name: `alike${i}.md` }, ROOT, `s:a${i}`, segmenter, {
          key: `uri:${ROOT}${path}`,
          text: `${i >= ALIKE - ALIKE_HELD ? 'alike' : 'yyyyy'} filler ${'z'.repeat(TEXTS + 40)}`,
        }),
      );
    }
    await backend.writer.write(docs, []);
  });

  afterAll(async () => {
    await backend?.close();
    await client?.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
    await client?.end();
  });

  for (const [who, scope] of [
    ['every document', ALL],
    ['some documents', SOME],
  ] as const)
    for (const word of ['common', 'filler', 'seldom', 'longest', 'shortest', 'alike'])
      it(`gives "${word}" in the one ranking, from any position and in pages of any size, to a caller of ${who}`, async () => {
        const expected = await ranking(word, scope);
        expect(expected.length).toBeGreaterThan(0);
        expect((await read(word, scope)).map((r) => r.uri)).toEqual(expected.slice(0, 400));
        for (const want of [1, 3])
          expect((await read(word, scope, undefined, want)).map((r) => r.uri)).toEqual(
            expected.slice(0, want),
          );
        const all = await read(word, scope, undefined, TEXTS + ALIKE);
        expect(all.map((r) => r.uri)).toEqual(expected);
        const step = Math.max(1, Math.floor(all.length / 12));
        for (let at = 0; at < all.length; at += step) {
          const row = all[at]!;
          for (const want of [1, 21]) {
            const page = await read(word, scope, [row.score, row.blob, row.id], want);
            expect(page.map((r) => r.uri)).toEqual(expected.slice(at + 1, at + 1 + want));
          }
        }
      });
  it('finds the smallest size of a text holding a query from the size lexemes alone, from the size a walk reached (from a lower bound on), and none for a query no text holds', async () => {
    const smallest = async (
      query: string,
      walked: number,
      from = 0,
    ): Promise<number | undefined> => {
      await client.query('BEGIN; SET LOCAL enable_seqscan = off');
      try {
        const { rows } = await client.query<{ bytes: number }>(
          smallestSizeSql(tables, TEXT_SCORE),
          [query, walked, from],
        );
        return rows[0]?.bytes;
      } finally {
        await client.query('COMMIT');
      }
    };
    for (const query of ["'longest'", "'shortest'", "'seldom'", "'common'", "'seldom' | 'alike'"])
      for (const walked of [1, PROBE_FIRST, TEXTS - 20]) {
        const { rows } = await client.query<{ bytes: number | null }>(
          `SELECT min(bytes) AS bytes FROM ${tables.blobs} WHERE body @@ $1::tsquery AND bytes >= ` +
            `(SELECT bytes FROM ${tables.blobs} b ORDER BY ${TEXT_SCORE}, b.id OFFSET $2::integer - 1 LIMIT 1)`,
          [query, walked],
        );
        expect(await smallest(query, walked)).toBe(rows[0]?.bytes ?? undefined);
      }
    // From a size on (a lower bound of the matches): the walk counted from the first text that long.
    for (const [query, from] of [
      ["'common'", 200],
      ["'longest'", TEXTS - 100],
      ["'seldom' | 'alike'", 500],
    ] as const) {
      const { rows } = await client.query<{ bytes: number | null }>(
        `SELECT min(bytes) AS bytes FROM ${tables.blobs} WHERE body @@ $1::tsquery AND bytes >= ` +
          `(SELECT bytes FROM ${tables.blobs} b WHERE bytes >= $3 ORDER BY ${TEXT_SCORE}, b.id OFFSET $2::integer - 1 LIMIT 1)`,
        [query, 30, from],
      );
      expect(await smallest(query, 30, from)).toBe(rows[0]?.bytes ?? undefined);
    }
    expect(await smallest("'shortest'", TEXTS - 20)).toBeUndefined();
    expect(await smallest("'nowhere'", 1)).toBeUndefined();
    // A query a user writes never reaches the size lexemes (no token holds '#').
    // (Names such as 0.md match; no text does, though every text holds '#0.…'.)
    const found = await read('#0*', ALL);
    expect(found.length).toBeGreaterThan(0);
    expect(found.filter((row) => row.blob !== 0)).toEqual([]);
  });

  it('gives the first pages of words in long texts alone as the one ranking, run on every query', async () => {
    const pool = new pg.Pool({ connectionString: PG_URL, max: 1 });
    try {
      for (const scope of [ALL, SOME])
        for (const word of ['alike', 'longest', 'seldom', 'nowhere'])
          for (const page of [1, 3, 21]) {
            const expected = (await ranking(word, scope)).slice(0, page);
            const rows = await textsPage(
              pool,
              tables,
              searchRun(word),
              scopeSql(scope),
              undefined,
              page,
              0,
            );
            expect(rows.map((r) => r.uri)).toEqual(expected);
          }
    } finally {
      await pool.end();
    }
  });
});

describe('the size lexemes of a text', () => {
  it('name its size at every level of the 16-way tree, from the top down', () => {
    expect(sizeLexemes(1000)).toBe("'#5.0' '#4.0' '#3.0' '#2.3' '#1.3e' '#0.3e8'");
    expect(sizeLexemes(0)).toBe("'#5.0' '#4.0' '#3.0' '#2.0' '#1.0' '#0.0'");
  });

  it('count a text of 16 MiB or more as the largest size the tree holds (a lower bound of its size)', () => {
    const largest = "'#5.f' '#4.ff' '#3.fff' '#2.ffff' '#1.fffff' '#0.ffffff'";
    expect(sizeLexemes(16 ** 6 - 1)).toBe(largest);
    expect(sizeLexemes(2 ** 30)).toBe(largest);
  });
});

if (PG_URL === '')
  console.log(
    'RESERVOIR_TEST_PG is not set: the PostgreSQL page tests are skipped (e.g. RESERVOIR_TEST_PG=postgres://postgres@127.0.0.1:5432/test)',
  );
