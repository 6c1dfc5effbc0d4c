// A PostgreSQL statement whose columns are all of fixed-width types, and whose rows cannot pass the
// byte budget at their widest, is read without the wrapper's sizing (budget.ts postgresBoundedRows;
// the widths in postgres-types.ts). Pins that each width bounds the type's text under every session
// setting that changes it, on the real server (RESERVOIR_TEST_PG), that the choice falls where the
// bound says, and that a statement and a table page answer alike on either side of it.
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresBounded, postgresBoundedRows } from '../../src/providers/sql/budget.js';
import type { Dialect, TableInfo } from '../../src/providers/sql/dialect.js';
import { pgColumnsOfOids, pgColumnsOfTypes } from '../../src/providers/sql/postgres-types.js';
import { PG_URL, pgSchema, type PgSchema } from './sql-helpers.js';

const rowWidthOfOids = (oids: number[]) => pgColumnsOfOids(oids).rowWidth;
const rowWidthOfTypes = (types: string[]) => pgColumnsOfTypes(types).rowWidth;

const SCHEMA = `reservoir_pgwidths_${process.pid}_${Date.now().toString(36)}`;

/** Each fixed-width type at the values whose text is longest, in every spelling. */
const WIDEST: [type: string, values: string[]][] = [
  ['bool', ['true', 'false']],
  ['int2', ['-32768']],
  ['int4', ['-2147483648']],
  ['int8', ['-9223372036854775808']],
  ['oid', ['4294967295']],
  ['float4', ['-1.1754944e-38', '-3.4028235e+38', '-Infinity', 'NaN']],
  ['float8', ['-2.2250738585072014e-308', '-1.7976931348623157e+308', '-Infinity']],
  ['date', ['5874897-12-31', '4713-01-01 BC', '-infinity']],
  ['time', ['24:00:00', '23:59:59.999999']],
  ['time(3) with time zone', ['23:59:59.999-15:59:59']],
  ['timestamp', ['294276-12-31 23:59:59.999999', '4713-01-01 00:00:00.5 BC', '-infinity']],
  ['timestamptz', ['294276-12-30 23:59:59.999999+00', '4713-01-01 00:00:00.5 BC', '-infinity']],
  ['uuid', ['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11']],
];

/** The session settings that change how those types are spelt. */
const SETTINGS = [
  `SET DateStyle = 'ISO, MDY'; SET extra_float_digits = 1; SET TimeZone = 'UTC'`,
  `SET DateStyle = 'Postgres, DMY'; SET extra_float_digits = 3; SET TimeZone = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ+3'`,
  `SET DateStyle = 'SQL, DMY'; SET extra_float_digits = 0; SET TimeZone = 'America/Argentina/ComodRivadavia'`,
  `SET DateStyle = 'German'; SET extra_float_digits = -15; SET TimeZone = '<+0330123456789>-3:30'`,
];

describe.skipIf(PG_URL === undefined || PG_URL === '')('fixed-width reads on PostgreSQL', () => {
  let db: PgSchema | undefined;
  let raw: pg.Client;
  let dialect: Dialect;
  let tables: TableInfo[];

  beforeAll(async () => {
    db = await pgSchema(
      SCHEMA,
      `CREATE TABLE fixed (id int8 PRIMARY KEY, i2 int2, f8 float8, b bool, d date, ts timestamptz, u uuid);
      INSERT INTO fixed SELECT i, -32768 + i, -1.7976931348623157e+308 / i, i % 2 = 0,
        '4713-01-01 BC'::date + i, '294276-12-30 23:59:59.999999+00'::timestamptz - i * interval '1 day',
        'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11' FROM generate_series(1, 40) i;
      INSERT INTO fixed (id) VALUES (41);`,
    );
    ({ raw, dialect, tables } = db);
  });
  afterAll(async () => {
    await db?.close();
  });

  it('bounds each type’s text under every DateStyle, float digits and time zone, by OID and by name', async () => {
    for (const settings of SETTINGS) {
      await raw.query(settings);
      for (const [type, values] of WIDEST) {
        const result = await raw.query({
          text: `SELECT v, format_type(pg_typeof(v), NULL) AS name FROM (SELECT unnest($1::text[])::${type} AS v) AS t`,
          values: [values],
          rowMode: 'array',
        });
        const oid = result.fields[0]!.dataTypeID;
        for (const [text, name] of result.rows as [string, string][]) {
          const bytes = Buffer.byteLength(text);
          expect(bytes, `${type} ${text} (${settings})`).toBeLessThanOrEqual(
            rowWidthOfOids([oid])!,
          );
          expect(bytes, `${name} ${text}`).toBeLessThanOrEqual(rowWidthOfTypes([name])!);
        }
      }
      await raw.query('RESET ALL');
    }
  });

  it('has no width for a type whose text is unbounded, nor for a row with one such column', () => {
    // text, numeric, interval, json, an array of int4, bytea
    for (const oid of [25, 1700, 1186, 114, 1007, 17])
      expect(rowWidthOfOids([oid])).toBeUndefined();
    expect(rowWidthOfOids([23, 25])).toBeUndefined();
    for (const type of ['text', 'numeric(10,2)', 'interval', 'integer[]', 'character(4)', 'mood'])
      expect(rowWidthOfTypes([type])).toBeUndefined();
    expect(rowWidthOfOids([23, 20])).toBe(31);
    expect(rowWidthOfTypes(['integer', 'bigint'])).toBe(31);
  });

  it('sizes nothing where the rows cannot pass the budget at their widest, and wraps otherwise', () => {
    const inner = 'SELECT a, b FROM t';
    const within = postgresBoundedRows(inner, ['text', 'text'], 1000, 31, 32);
    expect(within).not.toMatch(/octet_length|sum\(/);
    expect(within).toContain(inner);
    const over = postgresBoundedRows(inner, ['text', 'text'], 1000, 31, 33);
    expect(over).toBe(postgresBounded(inner, ['text', 'text'], 1000));
    expect(postgresBoundedRows(inner, ['text', 'text'], 1000, undefined, 1)).toBe(over);
  });

  it('answers a statement and a table page alike whether the budget lets it skip the sizing or not', async () => {
    const sql = `SELECT id, i2, f8, b, d, ts, u FROM ${SCHEMA}.fixed ORDER BY id`;
    // 41 rows of at most 1 + 6 + 32 + … bytes: a budget of 1 MiB skips the sizing, 20,000 bytes
    // (over what they are, under what they could be) does not
    const skipped = await dialect.readOnlyQuery(sql, [], { ...LIMITS, maxBytes: 1 << 20 });
    const sized = await dialect.readOnlyQuery(sql, [], { ...LIMITS, maxBytes: 20_000 });
    expect(sized).toEqual(skipped);
    expect(skipped.rows).toHaveLength(41);
    expect(skipped.over).toBeUndefined();
    const capped = await dialect.readOnlyQuery(sql, [], {
      ...LIMITS,
      maxRows: 40,
      maxBytes: 1 << 20,
    });
    expect(capped.truncated).toBe(true);
    expect(capped.rows).toEqual(skipped.rows.slice(0, 40));
    const table = tables.find((t) => t.name === 'fixed')!;
    const pageSkipped = await dialect.rowsPage(table, undefined, { limit: 41, maxBytes: 1 << 20 });
    const pageSized = await dialect.rowsPage(table, undefined, { limit: 41, maxBytes: 20_000 });
    expect(pageSized).toEqual(pageSkipped);
    expect(pageSkipped.rows).toHaveLength(41);
  });
});

const LIMITS = { maxRows: 100, timeoutMs: 5000 };
