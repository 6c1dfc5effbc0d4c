// What a `sql_query` statement does to its pooled connection does not outlive it, on PostgreSQL
// (RESERVOIR_TEST_PG) and MariaDB (RESERVOIR_TEST_MYSQL), each skipped with a message when unset.
// One source with a pool of one connection: each statement that tries an escape (through a
// function the lexical guard does not know, so the database alone answers) is followed, on the same
// connection, by named queries — which run on the connection's session as it is, without the
// sql_query transaction — that try to write and to run past the timeout: the write is refused and
// the timeout holds. A statement that fails mid-way and a cancelled one leave the connection clean,
// and what a read-only session alone would let commit (large objects, notifications; on MariaDB a
// statement that makes itself writable) is held by the transaction every statement runs in.
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReservoirError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/log.js';
import { sqlProvider, type SqlProvider } from '../../src/providers/sql/index.js';
import { mysqlDialect } from '../../src/providers/sql/mysql.js';
import { postgresDialect } from '../../src/providers/sql/postgres.js';
import { ctx, rejection } from './helpers.js';
import { MYSQL_URL, mysqlConfigured, PG_URL, readJson } from './sql-helpers.js';
import { eventually } from '../helpers/eventually.js';

const suffix = `${process.pid}_${Date.now().toString(36)}`;
const LIMITS = { maxRows: 10, timeoutMs: 500, maxBytes: 1 << 20 };

/** The rows a named query answers with. */
const rowsOf = async (db: SqlProvider, name: string): Promise<unknown[][]> =>
  (await readJson<{ rows: unknown[][] }>(db, `db://reset/queries/${name}`)).rows;

/** The failure reading a named query answers with (its code and message). */
const failureOf = async (db: SqlProvider, name: string): Promise<ReservoirError> => {
  const error = await rejection(db.read(`db://reset/queries/${name}`, ctx()));
  expect(error).toBeInstanceOf(ReservoirError);
  return error as ReservoirError;
};

describe.skipIf(PG_URL === undefined || PG_URL === '')(
  'sql_query on PostgreSQL leaves its connection as it found it',
  () => {
    const SCHEMA = `sqlfast_reset_${suffix}`;
    let admin: pg.Client;
    let db: SqlProvider;
    const source = (statementTimeoutMs: number): SqlProvider =>
      sqlProvider({
        url: PG_URL!,
        schema: SCHEMA,
        name: 'reset',
        queryTool: true,
        allowPrivilegedRole: true,
        statementTimeoutMs,
        pool: { max: 1 },
        queries: {
          write: { sql: 'SELECT writer()' },
          sleep: { sql: `SELECT sleeper(${(statementTimeoutMs / 1000) * 4})` },
          session: {
            sql: "SELECT pg_backend_pid(), current_setting('default_transaction_read_only'), current_setting('statement_timeout'), (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid())::int",
          },
        },
      });

    beforeAll(async () => {
      admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      await admin.query(`CREATE SCHEMA ${SCHEMA}; SET search_path = ${SCHEMA};
      CREATE TABLE t (id int);
      CREATE FUNCTION writer() RETURNS int LANGUAGE sql AS $$ INSERT INTO t VALUES (1) RETURNING id $$;
      CREATE FUNCTION sleeper(s float8) RETURNS int LANGUAGE sql AS $$ SELECT 1 FROM pg_sleep(s) $$;
      CREATE FUNCTION setting(n text, v text) RETURNS text LANGUAGE sql AS $$ SELECT set_config(n, v, false) $$;
      CREATE FUNCTION setting_then_fail() RETURNS int LANGUAGE sql AS
        $$ SELECT set_config('default_transaction_read_only', 'off', false); SELECT 1 / 0 $$;
      CREATE FUNCTION locker() RETURNS void LANGUAGE sql AS $$ SELECT pg_advisory_lock(424242) $$;
      CREATE FUNCTION blob() RETURNS oid LANGUAGE sql AS $$ SELECT lo_from_bytea(0, '${SCHEMA}'::bytea) $$;
      CREATE FUNCTION shout() RETURNS void LANGUAGE sql AS $$ SELECT pg_notify('${SCHEMA}', 'from sql_query') $$;`);
      db = source(500);
    });

    afterAll(async () => {
      await db?.close();
      await admin?.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
      await admin?.end();
    });

    /** The one pooled connection is read-only, keeps its timeout, holds no lock, and is the same backend. */
    const expectClean = async (pid?: unknown, on = db, timeout = '500ms'): Promise<unknown> => {
      const [row] = await rowsOf(on, 'session');
      expect(row!.slice(1)).toEqual(['on', timeout, 0]);
      if (pid !== undefined) expect(row![0]).toBe(pid);
      expect((await failureOf(on, 'write')).message).toMatch(/read-only transaction/);
      if (on === db) expect((await failureOf(on, 'sleep')).code).toBe('timeout');
      expect((await admin.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.t`)).rows).toEqual([
        { n: 0 },
      ]);
      return row![0];
    };

    it('resets what a statement set for the session before the connection serves again', async () => {
      for (const [name, value] of [
        ['default_transaction_read_only', 'off'],
        ['statement_timeout', '0'],
        ['search_path', 'pg_catalog'],
      ]) {
        const pid = (await rowsOf(db, 'session'))[0]![0];
        const result = await db.query('SELECT setting($1, $2)', [name, value]);
        expect(result.rows).toEqual([[value]]);
        await expectClean(pid);
      }
    });

    it('cannot make its own transaction writable', async () => {
      const error = await rejection(
        db.query("SELECT setting('transaction_read_only', 'off'), writer()"),
      );
      expect((error as Error).message).toMatch(/read-write mode must be set before any query/);
      await expectClean();
    });

    it('leaves the connection clean after a statement that fails mid-way', async () => {
      const error = await rejection(db.query('SELECT setting_then_fail()'));
      expect((error as Error).message).toMatch(/division by zero/);
      await expectClean();
    });

    it('releases a session advisory lock the statement took', async () => {
      await db.query('SELECT locker()');
      await expectClean();
      const got = await admin.query<{ got: boolean }>('SELECT pg_try_advisory_lock(424242) AS got');
      expect(got.rows[0]!.got).toBe(true);
      await admin.query('SELECT pg_advisory_unlock(424242)');
    });

    it('commits nothing a read-only autocommit statement would: large objects and notifications roll back', async () => {
      const count = `SELECT count(*)::int AS n FROM pg_largeobject WHERE data = '${SCHEMA}'::bytea`;
      await db.query('SELECT blob()');
      expect((await admin.query(count)).rows).toEqual([{ n: 0 }]);
      const heard: string[] = [];
      admin.on('notification', (n) => heard.push(String(n.payload)));
      await admin.query(`LISTEN ${SCHEMA}`);
      await db.query('SELECT shout()');
      await admin.query(`NOTIFY ${SCHEMA}, 'marker'`);
      await eventually(() => heard.includes('marker'), 'the marker notification');
      expect(heard).toEqual(['marker']);
      await admin.query(`UNLISTEN ${SCHEMA}`);
      await expectClean();
    });

    it('stops a cancelled statement, discards its connection and answers the next call clean', async () => {
      const slow = source(20_000);
      const controller = new AbortController();
      const running = rejection(
        slow.query('SELECT sleeper(30)', [], { signal: controller.signal }),
      );
      const sleeping = async (): Promise<number> =>
        (
          await admin.query(
            "SELECT 1 FROM pg_stat_activity WHERE query LIKE '%sleeper(30)%' AND state = 'active' AND pid <> pg_backend_pid()",
          )
        ).rowCount ?? 0;
      await eventually(async () => (await sleeping()) === 1, 'the statement to run');
      controller.abort();
      expect(((await running) as Error).name).toMatch(/Abort/);
      try {
        await eventually(async () => (await sleeping()) === 0, 'the statement to stop');
        await expectClean(undefined, slow, '20s');
      } finally {
        await slow.close();
      }
    });

    it('answers the rows before the reset, which still runs before the next call (below the provider)', async () => {
      const dialect = postgresDialect({
        url: PG_URL!,
        schema: SCHEMA,
        statementTimeoutMs: 500,
        allowPrivilegedRole: true,
        poolMax: 1,
        logger: silentLogger,
      });
      try {
        await dialect.readOnlyQuery("SELECT setting('statement_timeout', '0')", [], LIMITS);
        const after = await dialect.readOnlyQuery(
          "SELECT current_setting('statement_timeout'), current_setting('default_transaction_read_only')",
          [],
          LIMITS,
        );
        expect(after.rows).toEqual([['500ms', 'on']]);
      } finally {
        await dialect.close();
      }
    });
  },
);

describe.skipIf(!mysqlConfigured())(
  'sql_query on MariaDB leaves its connection as it found it',
  () => {
    const DB = `sqlfast_reset_${suffix}`;
    let admin: mysql.Connection;
    let url: string;
    let db: SqlProvider;
    const source = (statementTimeoutMs: number): SqlProvider =>
      sqlProvider({
        url,
        name: 'reset',
        queryTool: true,
        allowPrivilegedRole: true,
        statementTimeoutMs,
        pool: { max: 1 },
        queries: {
          write: { sql: 'INSERT INTO t VALUES (1)' },
          sleep: { sql: `SELECT SLEEP(${(statementTimeoutMs / 1000) * 4}) AS s` },
          session: {
            sql: 'SELECT CONNECTION_ID() AS id, @@SESSION.tx_read_only AS ro, @@SESSION.max_statement_time AS limit_s, @secret AS secret, IS_FREE_LOCK(?) AS free',
            params: [{ name: 'lock', type: 'string' }],
          },
        },
      });

    beforeAll(async () => {
      admin = await mysql.createConnection({ uri: MYSQL_URL!, multipleStatements: true });
      await admin.query(`CREATE DATABASE \`${DB}\`; USE \`${DB}\`;
      CREATE TABLE t (id INT);
      CREATE FUNCTION writable() RETURNS INT BEGIN SET SESSION tx_read_only = 0; RETURN 1; END;
      CREATE FUNCTION untimed() RETURNS INT BEGIN SET SESSION max_statement_time = 0; RETURN 1; END;
      CREATE FUNCTION remember() RETURNS INT BEGIN SET @secret = 'kept'; RETURN 1; END;
      CREATE FUNCTION locker() RETURNS INT BEGIN RETURN GET_LOCK('${DB}', 0); END;
      CREATE FUNCTION then_fail() RETURNS INT BEGIN SET SESSION tx_read_only = 0;
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'failed mid-way'; RETURN 1; END;
      CREATE FUNCTION sleeper(s DOUBLE) RETURNS INT BEGIN DO SLEEP(s); RETURN 1; END;`);
      const u = new URL(MYSQL_URL!);
      u.pathname = `/${DB}`;
      url = u.href;
      db = source(500);
    });

    afterAll(async () => {
      await db?.close();
      await admin?.query(`DROP DATABASE IF EXISTS \`${DB}\``);
      await admin?.end();
    });

    const connectionId = async (): Promise<unknown> =>
      (await readJson<{ rows: unknown[][] }>(db, `db://reset/queries/session?lock=${DB}`))
        .rows[0]![0];

    const expectClean = async (id?: unknown, on = db, limit = 0.5): Promise<unknown> => {
      const { rows } = await readJson<{ rows: unknown[][] }>(
        on,
        `db://reset/queries/session?lock=${DB}`,
      );
      const row = rows[0]!;
      expect(row.slice(1)).toEqual([1, limit, null, 1]);
      if (id !== undefined) expect(row[0]).toBe(id);
      expect((await failureOf(on, 'write')).message).toMatch(/READ ONLY/);
      if (on === db) {
        // MariaDB answers a SLEEP cut by max_statement_time with 1 rather than an error
        const slept = await rowsOf(on, 'sleep').catch((error: unknown) => error);
        if (Array.isArray(slept)) expect(slept).toEqual([[1]]);
        else expect((slept as ReservoirError).code).toBe('timeout');
      }
      const [[count]] = await admin.query<mysql.RowDataPacket[]>(
        `SELECT COUNT(*) AS n FROM \`${DB}\`.t`,
      );
      expect(count!['n']).toBe(0);
      return row[0];
    };

    it('resets what a statement set for the session before the connection serves again', async () => {
      for (const fn of ['writable', 'untimed', 'remember', 'locker']) {
        const id = await connectionId();
        expect((await db.query(`SELECT ${fn}()`)).rows).toEqual([[1]]);
        await expectClean(id);
      }
    });

    it('leaves the connection clean after a statement that fails mid-way', async () => {
      const error = await rejection(db.query('SELECT then_fail()'));
      expect((error as Error).message).toMatch(/failed mid-way/);
      await expectClean();
    });

    it('holds a statement that makes itself writable, which a read-only session alone lets write', async () => {
      const dialect = mysqlDialect({
        url,
        statementTimeoutMs: 500,
        allowPrivilegedRole: true,
        poolMax: 1,
        logger: silentLogger,
      });
      try {
        const error = await rejection(
          dialect.readOnlyQuery(
            'SET STATEMENT tx_read_only = 0 FOR INSERT INTO t VALUES (2)',
            [],
            LIMITS,
          ),
        );
        expect((error as Error).message).toMatch(/READ ONLY/);
      } finally {
        await dialect.close();
      }
      await expectClean();
    });

    it('stops a cancelled statement, discards its connection and answers the next call clean', async () => {
      const slow = source(20_000);
      const controller = new AbortController();
      const running = rejection(
        slow.query('SELECT sleeper(31)', [], { signal: controller.signal }),
      );
      const sleeping = async (): Promise<number> =>
        (
          await admin.query<mysql.RowDataPacket[]>(
            // a function's statement is listed as it runs inside it
            "SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE '%NAME_CONST(''s'',31)%' AND ID <> CONNECTION_ID()",
          )
        )[0].length;
      await eventually(async () => (await sleeping()) === 1, 'the statement to run');
      controller.abort();
      expect(((await running) as Error).name).toMatch(/Abort/);
      try {
        await eventually(async () => (await sleeping()) === 0, 'the statement to stop');
        await expectClean(undefined, slow, 20);
      } finally {
        await slow.close();
      }
    });
  },
);
