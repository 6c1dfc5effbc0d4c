// Pins what the byte budget of a PostgreSQL read counts and where it cuts, on the real server
// (RESERVOIR_TEST_PG; skipped with a message when unset), on every path that reads rows through
// the byte-bounded wrapper (budget.ts): a table page, a named query and a sql_query statement.
// A row's size is the bytes of the text its values are sent as — read here by a bare client that
// keeps each value's text as it came (no parsing) — summed over the row, a NULL counting nothing;
// the running total may reach the budget and not pass it. The wrapper itself, read by a bare
// client, sends no value of a row past the budget: such rows, and a row alone over it, arrive
// with every value blank.
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresBounded } from '../../src/providers/sql/budget.js';
import type { Dialect, QueryOutput, TableInfo } from '../../src/providers/sql/dialect.js';
import { PG_URL, pgSchema, type PgSchema } from './sql-helpers.js';

const SCHEMA = `reservoir_pgbudget_${process.pid}_${Date.now().toString(36)}`;

/** Columns of every kind the wrapper may size differently, and rows near their widest and NULL. */
const TYPED = `CREATE TABLE typed (
  id int PRIMARY KEY, i2 int2, i4 int4, i8 int8, f4 float4, f8 float8, b bool, o oid, n numeric,
  t text, vc varchar(12), bc char(8), bp bpchar, nm name, d date, tm time, ttz timetz, ts timestamp,
  tstz timestamptz, iv interval, u uuid, j json, jb jsonb, by bytea, arr int[], e mood)`;
const TYPED_ROWS = `INSERT INTO typed VALUES
  (1, -32768, -2147483648, -9223372036854775808, -1.1754944e-38, -2.2250738585072014e-308, true,
   4294967295, -12345678901234567890.000000001, 'héllo wörld', 'ünïcode', 'ab', 'ü  ', 'a name',
   '4713-01-01 BC', '23:59:59.999999', '23:59:59.999999-15:59', '294276-12-31 23:59:59.999999',
   '4713-01-01 00:00:00.5 BC', '-178000000 years -11 mons -2147483648 days -2562047788:00:54.775807',
   'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{"a": [1, 2]}', '{"é": "ü"}', '\\x00ff10', '{1,NULL,-3}', 'happy'),
  (2, 7, 42, 1, 1.5, 3.14159, false, 0, 0, '', 'x', 'abcdefgh', '', 'n', '2024-02-29', '00:00', '12:00+00',
   '2024-01-01 00:00', '2024-01-01 12:34:56.789+00', '1 day', 'ffffffff-ffff-ffff-ffff-ffffffffffff',
   '[]', '[]', '\\x', '{}', 'sad'),
  (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
   NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`;
const LIMITS = { maxRows: 100, timeoutMs: 5000 };

describe.skipIf(PG_URL === undefined || PG_URL === '')('the byte budget on PostgreSQL', () => {
  let db: PgSchema | undefined;
  /** A client that keeps every value as the text the server sent. */
  let raw: pg.Client;
  let dialect: Dialect;
  let tables: TableInfo[];
  /** Each row of `typed` by id: the bytes of its values' text as sent, id included. */
  const sent = new Map<number, number>();

  beforeAll(async () => {
    db = await pgSchema(
      SCHEMA,
      `CREATE TYPE mood AS ENUM ('happy', 'sad'); ${TYPED}; ${TYPED_ROWS};
      CREATE TABLE near (id int PRIMARY KEY, body text);
      INSERT INTO near SELECT i, repeat('x', 100 * i) FROM generate_series(1, 5) i;`,
    );
    ({ raw, dialect, tables } = db);
    const rows = await raw.query<string[]>({
      text: `SELECT * FROM ${SCHEMA}.typed ORDER BY id`,
      rowMode: 'array',
    });
    for (const row of rows.rows)
      sent.set(
        Number(row[0]),
        row.reduce((sum, value) => sum + (value === null ? 0 : Buffer.byteLength(value)), 0),
      );
  });
  afterAll(async () => {
    await db?.close();
  });

  const table = (name: string): TableInfo => tables.find((t) => t.name === name)!;

  /** `where` (a condition on id) read on each path with `maxBytes`: each path's answer. */
  const readAll = async (
    name: string,
    where: string,
    maxBytes: number,
  ): Promise<[string, { rows: unknown[][]; over?: QueryOutput['over'] }][]> => {
    const sql = `SELECT * FROM ${name} WHERE ${where} ORDER BY id`;
    const page = await dialect.rowsPage(table(name), undefined, { limit: 100, maxBytes });
    const pageIds = page.rows.map((r) => [r['id']]);
    return [
      ['table page', { rows: pageIds, over: page.over }],
      ['named query', await dialect.namedQuery(sql, [], { ...LIMITS, maxBytes })],
      ['sql_query', await dialect.readOnlyQuery(sql, [], { ...LIMITS, maxBytes })],
    ];
  };

  it('sizes each row as the bytes of its values as sent, of every type, a NULL as nothing', async () => {
    expect(sent.get(3)).toBe(1); // the NULL row: its id alone
    for (const id of [1, 2]) {
      // a budget one byte short of the row: it is alone over it, and its size is told
      const size = sent.get(id)!;
      const sql = `SELECT * FROM typed WHERE id = ${id}`;
      const named = await dialect.namedQuery(sql, [], { ...LIMITS, maxBytes: size - 1 });
      expect(named.rows, `row ${id}`).toEqual([]);
      expect(named.over, `row ${id}`).toEqual({
        row: 0,
        rowBytes: size,
        usedBytes: 0,
        budget: size - 1,
      });
      const query = await dialect.readOnlyQuery(sql, [], { ...LIMITS, maxBytes: size - 1 });
      expect(query.over?.rowBytes, `row ${id}`).toBe(size);
      // and exactly its size fits
      const fits = await dialect.namedQuery(sql, [], { ...LIMITS, maxBytes: size });
      expect([fits.rows.length, fits.over], `row ${id}`).toEqual([1, undefined]);
    }
  });

  it('measures a table page, a named query and sql_query alike: rows up to the budget, then the row that passes it', async () => {
    const [one, two, three] = [sent.get(1)!, sent.get(2)!, sent.get(3)!];
    // the running total reaches the budget exactly at the last row (the NULL row: its id alone)
    const budget = one + two + three;
    for (const [path, out] of await readAll('typed', 'true', budget)) {
      expect(
        out.rows.map((r) => Number(r[0])),
        path,
      ).toEqual([1, 2, 3]);
      expect(out.over, path).toBeUndefined();
    }
    for (const [path, out] of await readAll('typed', 'true', budget - 1)) {
      expect(
        out.rows.map((r) => Number(r[0])),
        path,
      ).toEqual([1, 2]);
      expect(out.over, path).toEqual({
        row: 2,
        rowBytes: three,
        usedBytes: one + two,
        budget: budget - 1,
      });
    }
  });

  it('cuts a result of text rows at the byte the budget ends, on every path', async () => {
    // row i holds its id (1 byte) and 100 * i bytes of text: 101, 201, 301, …
    for (const [path, out] of await readAll('near', 'true', 101 + 201 + 301)) {
      expect(
        out.rows.map((r) => Number(r[0])),
        path,
      ).toEqual([1, 2, 3]);
      expect(out.over, path).toMatchObject({ row: 3, rowBytes: 401, usedBytes: 603 });
    }
    // the largest budget a source may set, whose running total is summed as int8
    for (const [path, out] of await readAll('near', 'true', 2 ** 31 - 1)) {
      expect(
        out.rows.map((r) => Number(r[0])),
        path,
      ).toEqual([1, 2, 3, 4, 5]);
      expect(out.over, path).toBeUndefined();
    }
    for (const [path, out] of await readAll('near', 'true', 101 + 201 + 300)) {
      expect(out.over, path).toMatchObject({ row: 2, rowBytes: 301, usedBytes: 302 });
    }
  });

  it('sends no value of a row past the budget, nor of a row alone over it: they arrive blank, with their size', async () => {
    const inner = `SELECT id, body FROM ${SCHEMA}.near ORDER BY id`;
    const budget = 101 + 201 + 50;
    const rows = (
      await raw.query<unknown[]>({
        text: postgresBounded(inner, ['text', 'string'], budget),
        rowMode: 'array',
      })
    ).rows;
    // a row within the budget: its values, no size (the running total tells it); past it: its size
    expect(rows.map((r) => [r[0], typeof r[1], r[2] === null ? null : Number(r[2])])).toEqual([
      ['1', 'string', null],
      ['2', 'string', null],
      [null, 'object', 301],
      [null, 'object', 401],
      [null, 'object', 501],
    ]);
    expect(rows.slice(2).every((r) => r[1] === null)).toBe(true);
    // the running total: exact within the budget, past it from the row that passes it
    expect(rows.slice(0, 2).map((r) => Number(r[3]))).toEqual([101, 302]);
    expect(rows.slice(2).every((r) => Number(r[3]) > budget)).toBe(true);
    // a row alone over the budget arrives blank, and so does every row after it
    const alone = await raw.query<unknown[]>({
      text: postgresBounded(`${inner} DESC`, ['text', 'string'], 450),
      rowMode: 'array',
    });
    expect(alone.rows.map((r) => [r[0], r[1] === null, Number(r[2])])).toEqual([
      [null, true, 501],
      [null, true, 401],
      [null, true, 301],
      [null, true, 201],
      [null, true, 101],
    ]);
  });
});
