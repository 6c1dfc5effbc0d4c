// The SQL provider on PostgreSQL (RESERVOIR_TEST_PG; skipped with a message when unset, failing
// when set but unreachable). Everything runs in a schema and a login role this file creates and
// drops: the provider contract, schema documents, keyset pages (composite, unique-index,
// microsecond timestamps, no key, rows inserted between pages), named queries, completion, every
// refused statement — through the tool path and again below the lexical check, proving the database
// itself holds and is unchanged — the timeout, the row cap, the privileged-role refusal, change
// detection by polling and by LISTEN/NOTIFY, and recovery after the provider's connections are
// terminated.
import { existsSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { InvalidArgumentError, ReservoirError, UnavailableError } from '../../src/core/errors.js';
import { sqlProvider, type SqlProvider } from '../../src/providers/sql/index.js';
import { postgresDialect } from '../../src/providers/sql/postgres.js';
import { silentLogger } from '../../src/core/log.js';
import { testProvider } from './contract.js';
import { ctx, expectNotFound, rejection } from './helpers.js';
import { eventually, eventuallyAccepted } from '../helpers/eventually.js';
import { PG_URL, readJson, waitUntil, walkRows, type RowsDoc } from './sql-helpers.js';

const suffix = `${process.pid}_${Date.now().toString(36)}`;
const SCHEMA = `reservoir_test_${suffix}`;
const ROLE = `reservoir_ro_${suffix}`;
const CHANNEL = `reservoir_chan_${suffix}`;
const PWNED = `/tmp/reservoir-pwned-${suffix}`;

const QUERIES = {
  by_name: {
    sql: 'SELECT id, name FROM users WHERE name = $1',
    params: [{ name: 'name', complete: 'users.name' }],
  },
  since: {
    sql: 'SELECT count(*)::int AS n FROM users WHERE created >= $1::timestamptz',
    params: [{ name: 'from', type: 'date' as const }],
  },
  all_ids: { sql: 'SELECT id FROM users ORDER BY id' },
};

let admin: pg.Client;
let roleUrl: string;
let dblink: boolean;

async function setUp(): Promise<void> {
  admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect(); // set but unreachable: this throws and every test fails
  await admin.query(`CREATE SCHEMA ${SCHEMA}`);
  await admin.query(`SET search_path = ${SCHEMA}`);
  await admin.query(`
    CREATE TABLE users (id serial PRIMARY KEY, name text NOT NULL, email text UNIQUE, created timestamptz NOT NULL DEFAULT '2024-05-01 10:00:00.123456+00');
    CREATE INDEX users_name ON users (name);
    CREATE TABLE orders (user_id int NOT NULL REFERENCES users(id), n int NOT NULL, total numeric(10,2), PRIMARY KEY (user_id, n));
    CREATE TABLE events (code text NOT NULL UNIQUE, note text);
    CREATE TABLE ticks (at timestamp(6) PRIMARY KEY);
    CREATE TABLE loose (x int, y text);
    CREATE TABLE "odd name/é" (k text PRIMARY KEY, v bytea, big bigint);
    CREATE SEQUENCE counter;
    INSERT INTO users (name, email) SELECT 'user' || lpad(i::text, 2, '0'), 'u' || i || '@example.com' FROM generate_series(1, 25) i;
    INSERT INTO orders SELECT u, n, u * n * 1.5 FROM generate_series(1, 4) u, generate_series(1, 3) n;
    INSERT INTO events SELECT 'e' || i, 'note' FROM generate_series(1, 9) i;
    INSERT INTO ticks SELECT '2024-01-01 00:00:00'::timestamp + i * interval '1 microsecond' FROM generate_series(1, 7) i;
    INSERT INTO loose SELECT i, 'y' FROM generate_series(1, 5) i;
    INSERT INTO "odd name/é" VALUES ('a,b', '\\x000102ff', 1152921504606846976), ('c d', NULL, 7);
  `);
  await admin.query(`CREATE ROLE ${ROLE} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE`);
  await admin.query(
    `GRANT USAGE ON SCHEMA ${SCHEMA} TO ${ROLE}; GRANT SELECT ON ALL TABLES IN SCHEMA ${SCHEMA} TO ${ROLE}`,
  );
  const installed = await admin.query("SELECT 1 FROM pg_extension WHERE extname = 'dblink'");
  dblink =
    installed.rowCount === 0 &&
    (await admin.query("SELECT 1 FROM pg_available_extensions WHERE name = 'dblink'")).rowCount ===
      1;
  if (dblink) await admin.query(`CREATE EXTENSION dblink SCHEMA ${SCHEMA}`);
  const url = new URL(PG_URL!);
  url.username = ROLE;
  url.password = '';
  roleUrl = url.href;
}

async function tearDown(): Promise<void> {
  if (admin === undefined) return;
  await admin
    .query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '${ROLE}'`)
    .catch(() => undefined);
  await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
  // A terminated backend may still hold the role for a moment: retry until it lets go.
  await eventually(
    async () => (await admin.query(`DROP ROLE IF EXISTS ${ROLE}`), true),
    `dropping role ${ROLE}`,
    { stepMs: 50 },
  );
  await admin.end();
}

/** Writes through a short-lived connection: its statistics are flushed when it ends. */
async function write(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await client.query(`SET search_path = ${SCHEMA}`);
  await client.query(sql);
  await client.end();
}

function provider(extra: Record<string, unknown> = {}): SqlProvider {
  return sqlProvider({
    url: roleUrl,
    schema: SCHEMA,
    name: 'pgtest',
    queries: QUERIES,
    pageRows: 10,
    maxRows: 50,
    statementTimeoutMs: 500,
    pollIntervalMs: 100,
    ...extra,
  });
}

describe.skipIf(PG_URL === undefined || PG_URL === '')('sql provider on PostgreSQL', () => {
  beforeAll(setUp);
  afterAll(tearDown);

  testProvider({
    name: 'sql (postgres)',
    setup: async () => {
      const p = provider();
      return {
        provider: p,
        // an update to the same value changes no row other tests count, yet moves the table's fingerprint
        change: {
          uri: 'db://pgtest/tables/events/rows',
          apply: () => write("UPDATE events SET note = note WHERE code = 'e1'"),
        },
        completion: {
          uriTemplate: 'db://pgtest/tables/{table}/rows{?after,limit,format}',
          variable: 'table',
          value: 'us',
          expected: 'users',
        },
        knownUris: [
          'db://pgtest/schema',
          'db://pgtest/tables/users/rows',
          'db://pgtest/tables/loose/rows',
          'db://pgtest/tables/odd%20name%2F%C3%A9/rows',
          'db://pgtest/queries/all_ids',
        ],
        missingUri: 'db://pgtest/tables/nope/rows',
        cleanup: () => p.close(),
      };
    },
  });

  describe('resources', () => {
    let db: SqlProvider;
    beforeAll(() => {
      db = provider();
    });
    afterAll(() => db.close());

    it('serves the schema: columns, keys, page keys, indexes, foreign keys', async () => {
      const schema = await readJson<{
        dialect: string;
        schema: string;
        tables: Record<string, unknown>[];
      }>(db, 'db://pgtest/schema');
      expect(schema).toMatchObject({ dialect: 'postgres', schema: SCHEMA });
      const byName = Object.fromEntries(schema.tables.map((t) => [t['name'], t]));
      expect(Object.keys(byName)).toEqual([
        'events',
        'loose',
        'odd name/é',
        'orders',
        'ticks',
        'users',
      ]);
      expect(byName['users']!['columns']).toContainEqual({
        name: 'id',
        type: 'integer',
        nullable: false,
        default: expect.stringMatching(/nextval/),
      });
      expect(byName['orders']!['pageKey']).toEqual(['user_id', 'n']);
      expect(byName['orders']!['foreignKeys']).toEqual([
        { columns: ['user_id'], table: 'users', references: ['id'] },
      ]);
      expect(byName['events']!['primaryKey']).toEqual([]);
      expect(byName['events']!['pageKey']).toEqual(['code']);
      expect(byName['loose']!['pageKey']).toBeNull();
      expect((byName['users']!['indexes'] as { name: string }[]).map((i) => i.name)).toEqual([
        'users_email_key',
        'users_name',
        'users_pkey',
      ]);
    });

    it('pages by primary key, composite key, unique index and microsecond timestamps, every row once', async () => {
      expect(
        (await walkRows(db, 'db://pgtest/tables/users/rows?limit=4')).rows.map((r) => r['id']),
      ).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
      const orders = await walkRows(db, 'db://pgtest/tables/orders/rows?limit=5');
      expect(
        orders.rows
          .map((r) => `${String(r['user_id'])}/${String(r['n'])}/${String(r['total'])}`)
          .slice(0, 4),
      ).toEqual(['1/1/1.50', '1/2/3.00', '1/3/4.50', '2/1/3.00']);
      expect(orders.rows).toHaveLength(12);
      expect(
        (await walkRows(db, 'db://pgtest/tables/events/rows?limit=2')).rows.map((r) => r['code']),
      ).toEqual(['e1', 'e2', 'e3', 'e4', 'e5', 'e6', 'e7', 'e8', 'e9']);
      const ticks = await walkRows(db, 'db://pgtest/tables/ticks/rows?limit=1');
      expect(ticks.rows.map((r) => r['at'])).toEqual(
        Array.from({ length: 7 }, (_, i) => `2024-01-01 00:00:00.00000${i + 1}`),
      );
      const odd = await readJson<RowsDoc>(db, 'db://pgtest/tables/odd%20name%2F%C3%A9/rows');
      expect(odd.rows).toEqual([
        { k: 'a,b', v: { $base64: 'AAEC/w==' }, big: '1152921504606846976' },
        { k: 'c d', v: null, big: 7 },
      ]);
      const user = await readJson<RowsDoc>(db, 'db://pgtest/tables/users/rows?limit=1');
      expect(user.rows[0]).toEqual({
        id: 1,
        name: 'user01',
        email: 'u1@example.com',
        created: '2024-05-01 10:00:00.123456+00',
      });
    });

    it('serves only a first page of a table without a stable key, and says so', async () => {
      const loose = await readJson<RowsDoc>(db, 'db://pgtest/tables/loose/rows?limit=2');
      expect(loose).toMatchObject({ pageKey: null, count: 2, next: null });
      expect(loose.note).toMatch(/no primary key/);
      const error = await rejection(db.read('db://pgtest/tables/loose/rows?after=WzFd', ctx()));
      expect(error).toBeInstanceOf(InvalidArgumentError);
    });

    it('sees every existing row exactly once while rows are inserted between pages', async () => {
      const seen = await walkRows(db, 'db://pgtest/tables/users/rows?limit=3', async () => {
        await admin.query(`INSERT INTO ${SCHEMA}.users (name) VALUES ('late')`);
        await admin.query(
          `INSERT INTO ${SCHEMA}.users (id, name) VALUES ((SELECT -count(*) - 1 FROM ${SCHEMA}.users WHERE id < 0), 'early')`,
        );
      });
      const ids = seen.rows.map((r) => r['id'] as number);
      expect(new Set(ids).size).toBe(ids.length);
      for (let id = 1; id <= 25; id += 1) expect(ids.filter((x) => x === id)).toHaveLength(1);
      expect(ids.some((id) => id < 0)).toBe(false);
      await admin.query(`DELETE FROM ${SCHEMA}.users WHERE id > 25 OR id < 0`);
    });

    it('runs named queries with bound, typed parameters', async () => {
      expect(
        (await readJson<{ rows: unknown[][] }>(db, 'db://pgtest/queries/by_name?name=user07')).rows,
      ).toEqual([[7, 'user07']]);
      const injected = await readJson<{ rows: unknown[][] }>(
        db,
        `db://pgtest/queries/by_name?name=${encodeURIComponent("'; DROP TABLE users; --")}`,
      );
      expect(injected.rows).toEqual([]);
      expect(
        (await readJson<{ rows: unknown[][] }>(db, 'db://pgtest/queries/since?from=2024-01-01'))
          .rows,
      ).toEqual([[25]]);
      const bad = await rejection(db.read('db://pgtest/queries/since?from=soon', ctx()));
      expect(bad).toBeInstanceOf(InvalidArgumentError);
      expect((bad as InvalidArgumentError).data['argument']).toBe('from');
    });

    it('completes table names and a parameter from a column', async () => {
      const templates = db.templates!();
      const rows = templates.find(
        (t) => t.uriTemplate === 'db://pgtest/tables/{table}/rows{?after,limit,format}',
      )!;
      expect((await rows.complete!['table']!('o', {}, ctx())).values).toEqual([
        'odd name/é',
        'orders',
      ]);
      const byName = templates.find((t) => t.uriTemplate === 'db://pgtest/queries/by_name{?name}')!;
      expect((await byName.complete!['name']!('user2', {}, ctx())).values).toEqual([
        'user20',
        'user21',
        'user22',
        'user23',
        'user24',
        'user25',
      ]);
    });
  });

  describe('the read-only query path', () => {
    let db: SqlProvider;
    beforeAll(() => {
      db = provider();
    });
    afterAll(() => db.close());

    const snapshot = async (): Promise<string> => {
      const tables = await admin.query(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = '${SCHEMA}' ORDER BY 1`,
      );
      const counts = await admin.query(
        `SELECT (SELECT count(*) FROM ${SCHEMA}.users) u, (SELECT count(*) FROM ${SCHEMA}.orders) o, (SELECT string_agg(name, ',' ORDER BY id) FROM ${SCHEMA}.users) names`,
      );
      const sequence = await admin.query(`SELECT last_value, is_called FROM ${SCHEMA}.counter`);
      const objects = await admin.query('SELECT count(*) FROM pg_largeobject_metadata');
      const columns = await admin.query(
        `SELECT count(*) FROM information_schema.columns WHERE table_schema = '${SCHEMA}'`,
      );
      return JSON.stringify([
        tables.rows,
        counts.rows,
        sequence.rows,
        objects.rows,
        columns.rows,
        existsSync(PWNED),
      ]);
    };

    it('runs a read with bound parameters', async () => {
      const result = await db.query('SELECT id, name FROM users WHERE id <= $1 ORDER BY id', [2]);
      expect(result).toMatchObject({
        columns: ['id', 'name'],
        rows: [
          [1, 'user01'],
          [2, 'user02'],
        ],
        rowCount: 2,
        truncated: false,
      });
    });

    const REFUSED: [string, string][] = [
      ['stacked statements', `SELECT 1; COMMIT; DROP TABLE ${SCHEMA}.users`],
      ['insert', `INSERT INTO ${SCHEMA}.users (name) VALUES ('x')`],
      ['update', `UPDATE ${SCHEMA}.users SET name = 'x'`],
      ['delete', `DELETE FROM ${SCHEMA}.users`],
      [
        'data-modifying CTE',
        `WITH d AS (DELETE FROM ${SCHEMA}.users RETURNING id) SELECT * FROM d`,
      ],
      ['drop', `DROP TABLE ${SCHEMA}.users`],
      ['create', `CREATE TABLE ${SCHEMA}.x (y int)`],
      ['alter', `ALTER TABLE ${SCHEMA}.users ADD COLUMN z int`],
      ['truncate', `TRUNCATE ${SCHEMA}.users`],
      ['select into', `SELECT * INTO ${SCHEMA}.copy FROM ${SCHEMA}.users`],
      ['row locks', `SELECT * FROM ${SCHEMA}.users FOR UPDATE`],
      ['pg_sleep over the timeout', 'SELECT pg_sleep(5)'],
      ['pg_terminate_backend', 'SELECT pg_terminate_backend(__ADMIN_PID__)'],
      ['set_config(…, false)', "SELECT set_config('default_transaction_read_only', 'off', false)"],
      ['nextval', `SELECT nextval('${SCHEMA}.counter')`],
      ['lo_import', "SELECT lo_import('/etc/hostname')"],
      [
        'dblink',
        `SELECT * FROM ${SCHEMA}.dblink_exec('dbname=' || current_database(), 'DROP TABLE ${SCHEMA}.users')`,
      ],
      ['COPY … TO PROGRAM', `COPY (SELECT 1) TO PROGRAM 'touch ${PWNED}'`],
      ['pg_read_file', "SELECT pg_read_file('/etc/passwd')"],
      ['advisory locks', 'SELECT pg_advisory_lock(4242)'],
    ];

    for (const [what, template] of REFUSED) {
      it(`refuses ${what} and leaves the database unchanged`, async () => {
        const pid = (await admin.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!
          .pid;
        const sql = template.replace('__ADMIN_PID__', String(pid));
        const before = await snapshot();
        const error = await rejection(db.query(sql));
        expect(error, sql).toBeInstanceOf(ReservoirError);
        expect(['invalid_argument', 'timeout']).toContain((error as ReservoirError).code);
        expect(await snapshot()).toBe(before);
        expect((await admin.query('SELECT 1 AS ok')).rows).toEqual([{ ok: 1 }]);
      });
    }

    it('is held by the database itself when the lexical check is bypassed', async () => {
      const dialect = postgresDialect({
        url: roleUrl,
        schema: SCHEMA,
        statementTimeoutMs: 500,
        allowPrivilegedRole: false,
        logger: silentLogger,
      });
      const pid = (await admin.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!
        .pid;
      const before = await snapshot();
      const outcomes: Record<string, string> = {};
      for (const [what, template] of REFUSED) {
        const sql = template.replace('__ADMIN_PID__', String(pid));
        try {
          await dialect.readOnlyQuery(sql, [], { maxRows: 10, timeoutMs: 500, maxBytes: 1 << 20 });
          outcomes[what] = 'ran';
        } catch (error) {
          outcomes[what] = (error as { kind?: string }).kind ?? 'error';
        }
      }
      if (!dblink) delete outcomes['dblink'];
      // Everything fails at the database, except three that run harmlessly: set_config and the
      // advisory lock die with the per-call connection (proved below), nothing else is changed.
      const ran = Object.entries(outcomes)
        .filter(([, o]) => o === 'ran')
        .map(([w]) => w);
      expect(ran.sort()).toEqual(['advisory locks', 'set_config(…, false)']);
      expect(outcomes['pg_sleep over the timeout']).toBe('timeout');
      expect(outcomes['stacked statements']).toBe('refused');
      expect(await snapshot()).toBe(before);
      // the reset behind each statement released it: once it ran (the answer does not wait for it)
      await eventuallyAccepted(
        async () =>
          (await admin.query<{ got: boolean }>('SELECT pg_try_advisory_lock(4242) AS got')).rows[0]!
            .got,
        (got) => got,
        'the advisory lock a statement took to be released by its reset',
      );
      await admin.query('SELECT pg_advisory_unlock(4242)');
      const after = await dialect.readOnlyQuery(
        "SELECT current_setting('default_transaction_read_only')",
        [],
        { maxRows: 1, timeoutMs: 500, maxBytes: 1 << 20 },
      );
      expect(after.rows).toEqual([['on']]);
      await dialect.close();
    });

    it('stops a long statement at the timeout and answers the next one', async () => {
      // A billion rows take far longer than the timeout: a timeout error is the timeout firing.
      const error = await rejection(
        db.query('SELECT count(*) FROM generate_series(1, 1000000000)'),
      );
      expect((error as ReservoirError).code).toBe('timeout');
      expect((await db.query('SELECT 42 AS answer')).rows).toEqual([[42]]);
    });

    it('caps rows through a portal and says the result was truncated', async () => {
      const result = await db.query('SELECT i FROM generate_series(1, 100000) i');
      expect(result.rowCount).toBe(50);
      expect(result.truncated).toBe(true);
      expect(
        (await db.query('SELECT i FROM generate_series(1, 10) i', [], { maxRows: 3 })).rows,
      ).toEqual([[1], [2], [3]]);
    });

    it('refuses to run as a superuser unless allowed', async () => {
      const root = sqlProvider({ url: PG_URL!, schema: SCHEMA, name: 'pgroot' });
      const error = await rejection(root.query('SELECT 1'));
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as Error).message).toMatch(/superuser/);
      await root.close();
      const allowed = sqlProvider({
        url: PG_URL!,
        schema: SCHEMA,
        name: 'pgroot',
        allowPrivilegedRole: true,
      });
      expect((await allowed.query('SELECT 1 AS one')).rows).toEqual([[1]]);
      await allowed.close();
    });

    it('refuses to run as a role with write grants unless allowed, naming the tables', async () => {
      await admin.query(`GRANT INSERT ON ${SCHEMA}.events TO ${ROLE}`);
      try {
        const writer = sqlProvider({ url: roleUrl, schema: SCHEMA, name: 'pgwriter' });
        const error = await rejection(writer.query('SELECT 1'));
        expect(error).toBeInstanceOf(InvalidArgumentError);
        expect((error as Error).message).toContain(`(write grants on ${SCHEMA}.events)`);
        await writer.close();
        const allowed = sqlProvider({
          url: roleUrl,
          schema: SCHEMA,
          name: 'pgwriter',
          allowPrivilegedRole: true,
        });
        expect((await allowed.query('SELECT 1 AS one')).rows).toEqual([[1]]);
        await allowed.close();
      } finally {
        await admin.query(`REVOKE INSERT ON ${SCHEMA}.events FROM ${ROLE}`);
      }
    });

    it('keeps the write-grant scan for the running source, and judges memberships on every call', async () => {
      const reader = sqlProvider({ url: roleUrl, schema: SCHEMA, name: 'pgkept' });
      expect((await reader.query('SELECT 1 AS one')).rows).toEqual([[1]]);
      await admin.query(`GRANT INSERT ON ${SCHEMA}.events TO ${ROLE}`);
      try {
        // The running source trusts its scan (a write grant is of no use in its READ ONLY transactions)...
        expect((await reader.query('SELECT 2 AS two')).rows).toEqual([[2]]);
        // ...a source built now (a reload that changes it, a restart) scans again and refuses...
        const rebuilt = sqlProvider({ url: roleUrl, schema: SCHEMA, name: 'pgkept' });
        expect(((await rejection(rebuilt.query('SELECT 1'))) as Error).message).toContain(
          `(write grants on ${SCHEMA}.events)`,
        );
        await rebuilt.close();
        // ...and a privileged membership granted since is refused on the running source's next call.
        await admin.query(`GRANT pg_read_server_files TO ${ROLE}`);
        const refused = await rejection(reader.query('SELECT 3'));
        expect(refused).toBeInstanceOf(InvalidArgumentError);
        expect((refused as Error).message).toContain('pg_read_server_files');
      } finally {
        await admin.query(
          `REVOKE INSERT ON ${SCHEMA}.events FROM ${ROLE}; REVOKE pg_read_server_files FROM ${ROLE}`,
        );
        await reader.close();
      }
    });
  });

  describe('change detection', () => {
    it('polls fingerprints: updated for the changed table only, list_changed for a new table, nothing left after', async () => {
      const db = provider();
      const updates: string[] = [];
      let listChanges = 0;
      const stopUsers = await db.watch!('db://pgtest/tables/users/rows', () =>
        updates.push('users'),
      );
      const stopOrders = await db.watch!('db://pgtest/tables/orders/schema', () =>
        updates.push('orders'),
      );
      const stopList = await db.onListChanged!(() => (listChanges += 1));
      await write("INSERT INTO users (name) VALUES ('watched')");
      await waitUntil(() => updates.includes('users'), 'users updated');
      // A second users write is the marker: by its update, a poll has run past the first write.
      await write("INSERT INTO users (name) VALUES ('marker')");
      await waitUntil(
        () => updates.filter((u) => u === 'users').length >= 2,
        'users updated again (the marker)',
      );
      expect(updates).not.toContain('orders');
      await write('CREATE TABLE appeared (id int PRIMARY KEY)');
      await waitUntil(() => listChanges > 0, 'list_changed');
      expect((await db.list(undefined, 100, ctx())).items.map((i) => i.uri)).toContain(
        'db://pgtest/tables/appeared/rows',
      );
      stopUsers();
      stopOrders();
      stopList();
      await waitUntil(() => !db.watchStats().polling, 'polling to stop');
      expect(db.watchStats()).toEqual({
        watches: 0,
        listListeners: 0,
        polling: false,
        listening: false,
      });
      await write("DELETE FROM users WHERE name IN ('watched', 'marker'); DROP TABLE appeared");
      await db.close();
    });

    it('follows LISTEN/NOTIFY on the configured channel, reconnecting it when its connection is terminated', async () => {
      const db = provider({ notifyChannel: CHANNEL, pollIntervalMs: 60_000 });
      const updates: string[] = [];
      const stop = await db.watch!('db://pgtest/tables/users/rows', () => updates.push('users'));
      expect(db.watchStats()).toMatchObject({ listening: true, polling: false });
      // NOTIFYs arrive in order: had 'orders' fired the users watch, it would show before 'users'.
      await admin.query(`NOTIFY ${CHANNEL}, 'orders'`);
      await admin.query(`NOTIFY ${CHANNEL}, 'users'`);
      await waitUntil(() => updates.length === 1, 'a notified update');
      expect(updates).toEqual(['users']);
      await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '${ROLE}' AND query LIKE 'LISTEN%'`,
      );
      // Until the listener is back, a NOTIFY reaches no one: keep sending until one is heard.
      await eventually(
        async () => (await admin.query(`NOTIFY ${CHANNEL}, ''`), updates.length >= 2),
        'an update after the listener reconnected',
        { stepMs: 100 },
      );
      stop();
      const listeners = async (): Promise<number> =>
        (
          await admin.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = '${ROLE}' AND query LIKE 'LISTEN%'`,
          )
        ).rows[0]!.n;
      await eventually(async () => (await listeners()) === 0, 'the LISTEN connection to close');
      await db.close();
    });
  });

  describe('availability', () => {
    it('recovers without a restart after its connections are terminated', async () => {
      const db = provider();
      expect((await readJson<RowsDoc>(db, 'db://pgtest/tables/users/rows?limit=1')).count).toBe(1);
      const killed = await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '${ROLE}'`,
      );
      expect(killed.rowCount).toBeGreaterThan(0);
      // Reads fail as unavailable (nothing else) until the pool reconnects, then answer.
      const failures: unknown[] = [];
      await eventually(
        async () =>
          (
            await readJson<RowsDoc>(db, 'db://pgtest/tables/users/rows?limit=1').catch(
              (error: unknown) => void failures.push(error),
            )
          )?.count === 1,
        'a read to answer after the connections were terminated',
        { stepMs: 50 },
      );
      for (const failure of failures) expect(failure).toBeInstanceOf(UnavailableError);
      await db.close();
    });

    it('fails only its own resources with UnavailableError while the server cannot be reached', async () => {
      const down = sqlProvider({ url: 'postgres://nobody@127.0.0.1:1/none', name: 'down' });
      expect(await rejection(down.ready())).toBeInstanceOf(UnavailableError);
      // Past the first backoff (250 ms) on a fake clock, so this read tries to connect again.
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 1_000 });
      const error = await rejection(down.read('db://down/schema', ctx())).finally(() =>
        vi.useRealTimers(),
      );
      expect(error).toBeInstanceOf(UnavailableError);
      expect((error as UnavailableError).message).toMatch(/db:\/\/down\/schema.*cannot answer/);
      // during the backoff the next call fails fast, without a connection attempt
      expect(await rejection(down.read('db://down/tables/x/rows', ctx()))).toBeInstanceOf(
        UnavailableError,
      );
      expect(await rejection(down.query('SELECT 1'))).toBeInstanceOf(UnavailableError);
      const up = provider();
      await up.ready();
      expect((await readJson<RowsDoc>(up, 'db://pgtest/tables/users/rows?limit=1')).count).toBe(1);
      await Promise.all([down.close(), up.close()]);
      await expectNotFound(up.read('db://pgtest/nothing', ctx()));
    });
  });
});
