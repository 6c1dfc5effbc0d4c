// What the PostgreSQL dialect learns of a statement's shape (its columns, for the byte-bounded
// wrapper) is kept for a few seconds per statement text, so a named query or sql_query call runs in
// one round trip. These prove a kept shape never outlives the columns it names: a column dropped
// between two reads is answered with the table as it is now, by a named query and by sql_query
// (whose retry needs a transaction of its own). RESERVOIR_TEST_PG; skipped when unset.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqlProvider, type SqlProvider } from '../../src/providers/sql/index.js';
import { ctx } from './helpers.js';
import { PG_URL, readJson } from './sql-helpers.js';

const SCHEMA = `reservoir_shapes_${process.pid}_${Date.now().toString(36)}`;

describe.skipIf(PG_URL === undefined || PG_URL === '')(
  'a PostgreSQL statement’s kept shape',
  () => {
    let admin: pg.Client;
    let provider: SqlProvider;

    beforeAll(async () => {
      admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      await admin.query(`CREATE SCHEMA ${SCHEMA}`);
      provider = sqlProvider({
        url: PG_URL!,
        schema: SCHEMA,
        name: 'shapes',
        queryTool: true,
        allowPrivilegedRole: true,
        queries: { everything: { sql: 'SELECT * FROM items ORDER BY id' } },
      });
    });

    afterAll(async () => {
      await provider?.close();
      await admin?.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
      await admin?.end();
    });

    const table = async (name: string): Promise<void> => {
      await admin.query(`DROP TABLE IF EXISTS ${SCHEMA}.items`);
      await admin.query(
        `CREATE TABLE ${SCHEMA}.items (id int PRIMARY KEY, name text, extra text); INSERT INTO ${SCHEMA}.items VALUES (1, '${name}', 'x'), (2, '${name}', 'y')`,
      );
    };

    it('answers a named query with the columns the table has now after one is dropped between reads', async () => {
      await table('named');
      const before = await readJson<{ columns: string[] }>(
        provider,
        'db://shapes/queries/everything',
      );
      expect(before.columns).toEqual(['id', 'name', 'extra']);
      await admin.query(`ALTER TABLE ${SCHEMA}.items DROP COLUMN extra`);
      const after = await readJson<{ columns: string[]; rows: unknown[][] }>(
        provider,
        'db://shapes/queries/everything',
      );
      expect(after.columns).toEqual(['id', 'name']);
      expect(after.rows).toEqual([
        [1, 'named'],
        [2, 'named'],
      ]);
    });

    it('answers sql_query with the columns the table has now after one is dropped between calls', async () => {
      await table('query');
      const sql = 'SELECT * FROM items WHERE id > $1 ORDER BY id';
      const before = await provider.query(sql, [0], { signal: ctx().signal });
      expect(before.columns).toEqual(['id', 'name', 'extra']);
      await admin.query(`ALTER TABLE ${SCHEMA}.items DROP COLUMN extra`);
      const after = await provider.query(sql, [0], { signal: ctx().signal });
      expect(after.columns).toEqual(['id', 'name']);
      expect(after.rows).toEqual([
        [1, 'query'],
        [2, 'query'],
      ]);
      // the retry's transaction ended like any other: the next call runs on a clean connection
      const again = await provider.query('SELECT current_setting($1) AS t', [
        'transaction_read_only',
      ]);
      expect(again.rows).toEqual([['on']]);
    });
  },
);
