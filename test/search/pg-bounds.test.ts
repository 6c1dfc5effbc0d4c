// Where a PostgreSQL index's text matches begin (RESERVOIR_TEST_PG; skipped with a message when
// unset): each lexeme's shortest text, kept by every write, bounds every query from below — a word
// exactly, words a text must all hold by the largest of theirs, OR by the smallest, a prefix by the
// shortest text of any word it begins — so a search walks from there. Writes lower a bound and
// never raise it; a text removed leaves it low, and the search still gives the one ranking.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDoc } from '../../src/search/document.js';
import type { PgBackend } from '../../src/search/pg/backend.js';
import { tsqueryOf } from '../../src/search/pg/lexemes.js';
import { inBudget, TEXT_SCORE } from '../../src/search/pg/query.js';
import type { Tables } from '../../src/search/pg/schema.js';
import { afterPrefix, lowestSizeSql, NO_TEXT } from '../../src/search/pg/sizes.js';
import { parseQuery } from '../../src/search/query.js';
import { Segmenter } from '../../src/search/segment.js';
import { openPgIndex, PG_URL, searchRun, testSchema } from './backends.js';

const SCHEMA = testSchema();
const ROOT = 'file:///bounds/';
const segmenter = new Segmenter();
let backend: PgBackend;
let client: pg.Client;
let tables: Tables;

/** A document of `words` padded to `size` bytes with a word no query asks for. */
function doc(name: string, words: string, size: number) {
  const text = `${words} ${'z'.repeat(Math.max(0, size - Buffer.byteLength(words) - 1))}`;
  return buildDoc({ uri: `${ROOT}${name}`, name }, ROOT, `s:${name}:${size}`, segmenter, {
    key: `uri:${ROOT}${name}`,
    text,
  });
}

async function bound(query: string): Promise<number> {
  const values: unknown[] = [];
  const { rows } = await client.query<{ bytes: number }>(
    lowestSizeSql(tables, parseQuery(query, segmenter).tree, values),
    values,
  );
  return rows[0]!.bytes;
}

/** The size of the shortest text matching `query`, by one plain statement; NO_TEXT when none does. */
async function shortest(query: string): Promise<number> {
  const { rows } = await client.query<{ bytes: number | null }>(
    `SELECT min(bytes) AS bytes FROM ${tables.blobs} WHERE body @@ $1::tsquery`,
    [tsqueryOf(parseQuery(query, segmenter).tree)],
  );
  return rows[0]!.bytes ?? NO_TEXT;
}

/** Every text match of `query` in rank order, by one plain statement. */
async function ranking(query: string): Promise<string[]> {
  const { rows } = await client.query<{ uri: string }>(
    `SELECT d.uri FROM ${tables.blobs} b JOIN ${tables.docs} d ON d.blob = b.id ` +
      `WHERE b.body @@ $1::tsquery AND NOT d.names @@ $1::tsquery ORDER BY ${TEXT_SCORE}, b.id, d.id`,
    [tsqueryOf(parseQuery(query, segmenter).tree)],
  );
  return rows.map((r) => r.uri);
}

async function search(query: string): Promise<string[]> {
  const { rows } = await backend.matches(searchRun(query), { kind: 'all' }, undefined, 1000, false);
  const found: string[] = [];
  for await (const row of rows) found.push(row.uri);
  return found;
}

describe.skipIf(PG_URL === '')("a PostgreSQL index's lower bounds of where matches begin", () => {
  beforeAll(async () => {
    ({ backend, tables } = await openPgIndex(SCHEMA, ROOT));
    client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await backend.writer.write(
      [
        doc('a.md', 'retry', 100),
        doc('b.md', 'budget', 200),
        doc('c.md', 'retry budget', 300),
        doc('d.md', 'budget retry', 400),
        doc('e.md', 'configure', 500),
        doc('f.md', 'configured retry', 600),
        doc('g.md', '资源订阅', 700),
        // Two batches: the second's longer texts leave the first's bounds as they were.
        doc('h.md', 'retry budget configuration', 50),
      ],
      [],
    );
    await backend.writer.write([doc('i.md', 'retry budget', 900)], []);
  });

  afterAll(async () => {
    await backend?.close();
    await client?.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
    await client?.end();
  });

  it('bounds each kind of query by the shortest text that can match it, never above the shortest that does', async () => {
    const queries = [
      'retry',
      'budget',
      'configure',
      'retry budget',
      '"retry budget"',
      '"budget retry"',
      'retry OR configure',
      'budget -retry',
      'configur*',
      'configured*',
      '"retry budget" configur*',
      '订阅',
      'nowhere',
      'retry nowhere',
      'nowhere OR budget',
    ];
    const bounds = new Map<string, [number, number]>();
    for (const query of queries) {
      const [low, exact] = [await bound(query), await shortest(query)];
      bounds.set(query, [low, exact]);
      expect(low, query).toBeLessThanOrEqual(exact);
    }
    // Exact for one word, or a prefix; the largest of the words' for AND; the smallest for OR.
    expect(bounds.get('retry')).toEqual([50, 50]);
    expect(bounds.get('configure')).toEqual([500, 500]);
    expect(bounds.get('configur*')![0]).toBe(50);
    expect(bounds.get('configured*')![0]).toBe(600);
    expect(bounds.get('budget -retry')![0]).toBe(50);
    expect(bounds.get('nowhere')![0]).toBe(NO_TEXT);
    expect(bounds.get('retry nowhere')![0]).toBe(NO_TEXT);
    expect(bounds.get('nowhere OR budget')![0]).toBe(50);
    expect(bounds.get('订阅')).toEqual([700, 700]);
  });

  it('is lowered by a shorter text and left low when that text goes, and searches still give the one ranking', async () => {
    await backend.writer.write([doc('j.md', 'configure', 10)], []);
    expect(await bound('configure')).toBe(10);
    await backend.writer.write([doc('k.md', 'configure', 5000)], [`${ROOT}j.md`]);
    expect(await shortest('configure')).toBe(500);
    expect(await bound('configure')).toBe(10);
    for (const query of ['configure', 'configur*', 'retry budget', '"retry budget"', 'budget'])
      expect(await search(query), query).toEqual(await ranking(query));
    expect(await search('retry nowhere')).toEqual([]);
  });

  it("reads a page's statements from one snapshot: a text written between two of them is not seen by the second", async () => {
    const pool = new pg.Pool({ connectionString: PG_URL, max: 1 });
    const count = { text: `SELECT count(*)::int AS n FROM ${tables.blobs}`, values: [] };
    try {
      const [before, after] = await inBudget(pool, searchRun('retry'), async (statement) => {
        const first = await statement<{ n: number }>(count);
        await backend.writer.write([doc('l.md', 'retry', 20)], []);
        return [first[0]!.n, (await statement<{ n: number }>(count))[0]!.n];
      });
      expect(after).toBe(before);
      expect((await client.query<{ n: number }>(count)).rows[0]!.n).toBe(before + 1);
    } finally {
      await pool.end();
    }
  });
});

describe('the least string after every lexeme a prefix begins', () => {
  const before = (a: string, b: string): boolean => {
    const [x, y] = [[...a], [...b]];
    for (let i = 0; i < Math.min(x.length, y.length); i += 1) {
      const [p, q] = [x[i]!.codePointAt(0)!, y[i]!.codePointAt(0)!];
      if (p !== q) return p < q;
    }
    return x.length < y.length;
  };

  it('steps the last code point, over the surrogates, and drops a highest one', () => {
    expect(afterPrefix('configur')).toBe('configus');
    expect(afterPrefix('资源')).toBe('资溑');
    expect(afterPrefix('a\u{d7ff}')).toBe('a\u{e000}');
    expect(afterPrefix('ab\u{10ffff}')).toBe('ac');
  });

  it('sorts after every string the prefix begins and before every other string past it', () => {
    const prefixes = ['a', 'zz', '资', 'x\u{10ffff}', '\u{1f600}', 'q\u{d7ff}'];
    const tails = ['', 'a', '\u{10ffff}\u{10ffff}', '\u{ffff}', '\u{e000}'];
    for (const prefix of prefixes) {
      const end = afterPrefix(prefix);
      for (const tail of tails) expect(before(prefix + tail, end), prefix + tail).toBe(true);
      expect(before(prefix, end)).toBe(true);
      expect(before(end, `${end}a`)).toBe(true);
    }
  });
});

if (PG_URL === '')
  describe('lower bounds of a PostgreSQL index', () => {
    it.skip('RESERVOIR_TEST_PG is not set: these tests need a PostgreSQL server', () => {});
  });
