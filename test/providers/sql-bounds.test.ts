// Pins the byte budget of the SQL provider on both databases (SQLite always; PostgreSQL with
// RESERVOIR_TEST_PG): a table page ends where the result cap does and its next link carries on, so
// walking the pages still yields every row once; a row alone over the cap is a too_large error
// naming its size; a named query over the cap is too_large, never a cut result; a statement that
// could reach around the wrapper (unbalanced parentheses) is refused; and the pool option is for
// PostgreSQL only.
import { join } from 'node:path';
import { loadSqliteDriver } from '../../src/core/sqlite-driver.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError, ReservoirError } from '../../src/core/errors.js';
import { sqlProvider, type SqlProvider } from '../../src/providers/sql/index.js';
import { ctx, rejection, removeDir, tempDir } from './helpers.js';
import { PG_URL, readJson, walkRows, type RowsDoc } from './sql-helpers.js';

const Database = loadSqliteDriver();

const CAP = 1024 * 1024;
const ROW = 300 * 1024; // three rows fit the cap, a fourth does not
const SCHEMA = `reservoir_bounds_${process.pid}_${Date.now().toString(36)}`;
const QUERIES = {
  everything: { sql: 'SELECT id, body FROM docs ORDER BY id' },
  small: { sql: 'SELECT id FROM docs ORDER BY id;' },
};

function checks(name: string, make: () => Promise<SqlProvider>, root: string): void {
  describe(`byte budget on ${name}`, () => {
    let provider: SqlProvider;
    beforeAll(async () => {
      provider = await make();
    });
    afterAll(async () => provider?.close());

    it('ends a table page where the result cap does and carries on through its next link, every row once', async () => {
      const first = await readJson<RowsDoc>(provider, `${root}tables/docs/rows`);
      expect(first.rows.map((r) => r['id'])).toEqual([1, 2, 3]);
      expect(first.next).not.toBeNull();
      const { rows } = await walkRows(provider, `${root}tables/docs/rows?limit=5`);
      expect(rows.map((r) => r['id'])).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(
        rows.every((r) => typeof r['body'] === 'string' && (r['body'] as string).length === ROW),
      ).toBe(true);
    });

    it('answers a row alone over the cap with too_large naming its size and the cap', async () => {
      const error = await rejection(provider.read(`${root}tables/huge/rows`, ctx()));
      expect(error).toBeInstanceOf(ReservoirError);
      expect((error as ReservoirError).code).toBe('too_large');
      expect((error as ReservoirError).data).toMatchObject({
        size: 5 * CAP + 1,
        limit: CAP,
        measure: 'row',
      });
      const result = await rejection(provider.query('SELECT id, body FROM huge'));
      expect((result as ReservoirError).message).toContain(
        `holds ${5 * CAP + 1} bytes, over the ${CAP}-byte result cap`,
      );
    });

    it('refuses a named query over the cap rather than cutting it, and runs one with a trailing semicolon', async () => {
      const error = await rejection(provider.read(`${root}queries/everything`, ctx()));
      expect((error as ReservoirError).code).toBe('too_large');
      expect((error as ReservoirError).data).toMatchObject({ limit: CAP, measure: 'bytes' });
      expect((await readJson(provider, `${root}queries/small`))['rowCount']).toBe(8);
    });

    it('marks a sql_query result cut at the byte budget as truncated, keeping the rows that fit', async () => {
      const result = await provider.query('SELECT id, body FROM docs ORDER BY id');
      expect(result.rows.map((r) => r[0])).toEqual([1, 2, 3]);
      expect(result.truncated).toBe(true);
    });

    it('refuses a statement whose parentheses do not balance, which could reach around the wrapper', async () => {
      for (const sql of ['SELECT 1) AS q, (SELECT 2', 'SELECT (1']) {
        const error = await rejection(provider.query(sql));
        expect(error, sql).toBeInstanceOf(InvalidArgumentError);
        expect((error as Error).message, sql).toMatch(
          /parentheses do not balance|unterminated|refused/,
        );
      }
    });
  });
}

let dir: string;
beforeAll(() => {
  dir = tempDir('reservoir-sql-bounds-');
});
afterAll(() => removeDir(dir));

checks(
  'SQLite',
  async () => {
    const path = join(dir, 'bounds.db');
    const db = new Database(path);
    db.exec(`CREATE TABLE docs (id INTEGER PRIMARY KEY, body TEXT NOT NULL);
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 8) INSERT INTO docs SELECT i, printf('%.*c', ${ROW}, 'a') FROM n;
      CREATE TABLE huge (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO huge VALUES (1, printf('%.*c', ${5 * CAP}, 'h'));`);
    db.close();
    return sqlProvider({ path, name: 'bounds', maxResultBytes: CAP, queries: QUERIES });
  },
  'db://bounds/',
);

describe.skipIf(PG_URL === undefined || PG_URL === '')('on PostgreSQL', () => {
  let admin: pg.Client;
  beforeAll(async () => {
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${SCHEMA}; SET search_path = ${SCHEMA};
      CREATE TABLE docs (id int PRIMARY KEY, body text NOT NULL); INSERT INTO docs SELECT i, repeat('a', ${ROW}) FROM generate_series(1, 8) i;
      CREATE TABLE huge (id int PRIMARY KEY, body text); INSERT INTO huge VALUES (1, repeat('h', ${5 * CAP}));
      CREATE TABLE shifting (id int PRIMARY KEY, a text, b text); INSERT INTO shifting VALUES (1, 'a', 'b');`);
  });
  it('reads a page again with the new columns when one was dropped after the schema was read', async () => {
    const provider = sqlProvider({
      url: PG_URL!,
      name: 'shift',
      schema: SCHEMA,
      allowPrivilegedRole: true,
    });
    try {
      expect((await readJson<RowsDoc>(provider, 'db://shift/tables/shifting/rows')).rows).toEqual([
        { id: 1, a: 'a', b: 'b' },
      ]);
      await admin.query(`ALTER TABLE ${SCHEMA}.shifting DROP COLUMN a`);
      expect((await readJson<RowsDoc>(provider, 'db://shift/tables/shifting/rows')).rows).toEqual([
        { id: 1, b: 'b' },
      ]);
    } finally {
      await provider.close();
    }
  });
  afterAll(async () => {
    await admin?.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    await admin?.end();
  });
  checks(
    'PostgreSQL',
    async () =>
      sqlProvider({
        url: PG_URL!,
        name: 'pgbounds',
        schema: SCHEMA,
        maxResultBytes: CAP,
        queries: QUERIES,
        allowPrivilegedRole: true,
        pool: { max: 2 },
      }),
    'db://pgbounds/',
  );
});

describe('pool option', () => {
  it('is refused on a SQLite source, naming the field', () => {
    expect(() => sqlProvider({ path: 'x.db', pool: { max: 2 } })).toThrow(
      /pool: is for PostgreSQL sources only/,
    );
    expect(() => sqlProvider({ url: 'postgres://h/db', pool: { max: 0 } })).toThrow(/pool\.max/);
  });
});
