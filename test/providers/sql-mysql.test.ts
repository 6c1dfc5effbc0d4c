// The SQL provider on MySQL / MariaDB (RESERVOIR_TEST_MYSQL; skipped with a message when unset,
// failing when set but unreachable). Everything runs in a database and a read-only user this file
// creates and drops: the provider contract, schema documents, keyset pages (composite, unique
// index, no key), honest types, named queries, completion, the grant refusal of a user that may
// write (root), and change detection by the CHECKSUM TABLE poll.
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReservoirError } from '../../src/core/errors.js';
import { InvalidArgumentError } from '../../src/core/errors.js';
import { sqlProvider, type SqlProvider } from '../../src/providers/sql/index.js';
import { testProvider } from './contract.js';
import { ctx, rejection } from './helpers.js';
import {
  MYSQL_URL,
  mysqlConfigured,
  readJson,
  waitUntil,
  walkRows,
  type RowsDoc,
} from './sql-helpers.js';

const suffix = `${process.pid}_${Date.now().toString(36)}`;
const DB = `reservoir_mysql_t_${suffix}`;
const USER = `reservoir_ro_${suffix}`.slice(0, 32);

const QUERIES = {
  by_name: {
    sql: 'SELECT id, name FROM users WHERE name = ?',
    params: [{ name: 'name', complete: 'users.name' }],
  },
  since: {
    sql: 'SELECT COUNT(*) AS n FROM users WHERE created >= ?',
    params: [{ name: 'from', type: 'date' as const }],
  },
  all_ids: { sql: 'SELECT id FROM users ORDER BY id' },
};

let admin: mysql.Connection;
let roUrl: string;
let rootUrl: string;
let bump = 0;

async function setUp(): Promise<void> {
  admin = await mysql.createConnection({
    uri: MYSQL_URL!,
    multipleStatements: true,
    charset: 'UTF8MB4_GENERAL_CI',
  });
  await admin.query(`CREATE DATABASE \`${DB}\` CHARACTER SET utf8mb4; USE \`${DB}\``);
  await admin.query(`
    CREATE TABLE users (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(40) NOT NULL, email VARCHAR(80) UNIQUE, created DATETIME(6) NOT NULL DEFAULT '2024-05-01 10:00:00.123456', KEY users_name (name));
    CREATE TABLE orders (user_id INT NOT NULL, n INT NOT NULL, total DECIMAL(10,2), PRIMARY KEY (user_id, n), FOREIGN KEY (user_id) REFERENCES users(id));
    CREATE TABLE events (code VARCHAR(10) NOT NULL, note VARCHAR(20), UNIQUE KEY events_code (code));
    CREATE TABLE loose (x INT, y TEXT);
    CREATE TABLE \`odd name/é\` (k VARCHAR(10) PRIMARY KEY, v BLOB, big BIGINT, u BIGINT UNSIGNED);
    CREATE TABLE typed (id INT PRIMARY KEY, d DECIMAL(30,10), b BIT(10), j JSON, ts TIMESTAMP(3) NULL, dt DATETIME, dz DATE, e VARCHAR(20) CHARACTER SET utf8mb4);
    INSERT INTO users (name, email) SELECT CONCAT('user', LPAD(seq, 2, '0')), CONCAT('u', seq, '@example.com') FROM seq_1_to_25;
    INSERT INTO orders SELECT u.seq, n.seq, u.seq * n.seq * 1.5 FROM seq_1_to_4 u, seq_1_to_3 n;
    INSERT INTO events SELECT CONCAT('e', seq), 'note' FROM seq_1_to_9;
    INSERT INTO loose SELECT seq, 'y' FROM seq_1_to_5;
    INSERT INTO \`odd name/é\` VALUES ('a,b', X'000102ff', 1152921504606846976, 18446744073709551615), ('c d', NULL, 7, 0);
  `);
  await admin.query(
    `SET SESSION sql_mode = REPLACE(@@sql_mode, 'STRICT_TRANS_TABLES', ''), time_zone = '+02:00'`,
  );
  await admin.query(
    `INSERT INTO typed VALUES (1, 12345678901234567890.0123456789, b'1000000001', '{"a": [1, "x"]}', '2024-05-01 12:00:00.250', '2024-05-01 12:00:00', '0000-00-00', '😀 émoji')`,
  );
  await admin.query(`SET SESSION sql_mode = DEFAULT, time_zone = DEFAULT`);
  await admin.query(
    `CREATE USER '${USER}'@'%'; GRANT SELECT, SHOW VIEW ON \`${DB}\`.* TO '${USER}'@'%'`,
  );
  const url = new URL(MYSQL_URL!);
  url.pathname = `/${DB}`;
  rootUrl = url.href;
  url.username = USER;
  url.password = '';
  roUrl = url.href;
}

async function tearDown(): Promise<void> {
  if (admin === undefined) return;
  await admin.query(`DROP DATABASE IF EXISTS \`${DB}\``);
  await admin.query(`DROP USER IF EXISTS '${USER}'@'%'`);
  await admin.end();
}

function provider(extra: Record<string, unknown> = {}): SqlProvider {
  return sqlProvider({
    url: roUrl,
    name: 'mytest',
    queries: QUERIES,
    pageRows: 10,
    maxRows: 50,
    statementTimeoutMs: 500,
    pollIntervalMs: 100,
    ...extra,
  });
}

describe.skipIf(!mysqlConfigured())('sql provider on MySQL / MariaDB', () => {
  beforeAll(setUp);
  afterAll(tearDown);

  testProvider({
    name: 'sql (mysql)',
    setup: async () => {
      const p = provider();
      return {
        provider: p,
        // a real change: CHECKSUM TABLE moves only when a row's content does
        change: {
          uri: 'db://mytest/tables/events/rows',
          apply: async () =>
            void (await admin.query(`UPDATE \`${DB}\`.events SET note = ? WHERE code = 'e1'`, [
              `n${(bump += 1)}`,
            ])),
        },
        completion: {
          uriTemplate: 'db://mytest/tables/{table}/rows{?after,limit,format}',
          variable: 'table',
          value: 'us',
          expected: 'users',
        },
        knownUris: [
          'db://mytest/schema',
          'db://mytest/tables/users/rows',
          'db://mytest/tables/loose/rows',
          'db://mytest/tables/odd%20name%2F%C3%A9/rows',
          'db://mytest/queries/all_ids',
        ],
        missingUri: 'db://mytest/tables/nope/rows',
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
      const schema = await readJson<{ dialect: string; tables: Record<string, unknown>[] }>(
        db,
        'db://mytest/schema',
      );
      expect(schema.dialect).toBe('mysql');
      const byName = Object.fromEntries(schema.tables.map((t) => [t['name'], t]));
      expect(Object.keys(byName)).toEqual([
        'events',
        'loose',
        'odd name/é',
        'orders',
        'typed',
        'users',
      ]);
      expect(byName['users']!['columns']).toContainEqual({
        name: 'id',
        type: 'int(11)',
        nullable: false,
      });
      expect(byName['orders']!['pageKey']).toEqual(['user_id', 'n']);
      expect(byName['orders']!['foreignKeys']).toEqual([
        { columns: ['user_id'], table: 'users', references: ['id'] },
      ]);
      expect(byName['events']!['primaryKey']).toEqual([]);
      expect(byName['events']!['pageKey']).toEqual(['code']);
      expect(byName['loose']!['pageKey']).toBeNull();
      expect((byName['users']!['indexes'] as { name: string }[]).map((i) => i.name)).toEqual([
        'PRIMARY',
        'email',
        'users_name',
      ]);
    });

    it('pages by primary key, composite key and unique index, every row once, in JSON and CSV', async () => {
      expect(
        (await walkRows(db, 'db://mytest/tables/users/rows?limit=4')).rows.map((r) => r['id']),
      ).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
      const orders = await walkRows(db, 'db://mytest/tables/orders/rows?limit=5');
      expect(
        orders.rows
          .map((r) => `${String(r['user_id'])}/${String(r['n'])}/${String(r['total'])}`)
          .slice(0, 4),
      ).toEqual(['1/1/1.50', '1/2/3.00', '1/3/4.50', '2/1/3.00']);
      expect(orders.rows).toHaveLength(12);
      expect(
        (await walkRows(db, 'db://mytest/tables/events/rows?limit=2')).rows.map((r) => r['code']),
      ).toEqual(['e1', 'e2', 'e3', 'e4', 'e5', 'e6', 'e7', 'e8', 'e9']);
      const user = await readJson<RowsDoc>(db, 'db://mytest/tables/users/rows?limit=1');
      expect(user.rows[0]).toEqual({
        id: 1,
        name: 'user01',
        email: 'u1@example.com',
        created: '2024-05-01 10:00:00.123456',
      });
      const csv = await db.read('db://mytest/tables/users/rows?limit=2&format=csv', ctx());
      expect((csv.contents[0] as { text: string }).text).toBe(
        'id,name,email,created\r\n1,user01,u1@example.com,2024-05-01 10:00:00.123456\r\n2,user02,u2@example.com,2024-05-01 10:00:00.123456\r\n',
      );
      const second = JSON.parse((csv.contents[1] as { text: string }).text) as { next: string };
      expect(second.next).toMatch(/format=csv/);
    });

    it('gives honest types: DECIMAL and big BIGINT as strings, BIT and BLOB as base64, JSON text, UTC TIMESTAMP, zero dates, emoji', async () => {
      const odd = await readJson<RowsDoc>(db, 'db://mytest/tables/odd%20name%2F%C3%A9/rows');
      expect(odd.rows).toEqual([
        {
          k: 'a,b',
          v: { $base64: 'AAEC/w==' },
          big: '1152921504606846976',
          u: '18446744073709551615',
        },
        { k: 'c d', v: null, big: 7, u: 0 },
      ]);
      const typed = await readJson<RowsDoc>(db, 'db://mytest/tables/typed/rows');
      expect(typed.rows[0]).toEqual({
        id: 1,
        d: '12345678901234567890.0123456789',
        b: { $base64: Buffer.from([0x02, 0x01]).toString('base64') },
        j: '{"a": [1, "x"]}',
        ts: '2024-05-01 10:00:00.250',
        dt: '2024-05-01 12:00:00',
        dz: '0000-00-00',
        e: '😀 émoji',
      });
      const q = await db.query('SELECT e, CHAR_LENGTH(e) AS n FROM typed WHERE e = ?', [
        '😀 émoji',
      ]);
      expect(q.rows).toEqual([['😀 émoji', 7]]);
    });

    it('serves only a first page of a table without a stable key, and says so', async () => {
      const loose = await readJson<RowsDoc>(db, 'db://mytest/tables/loose/rows?limit=2');
      expect(loose).toMatchObject({ pageKey: null, count: 2, next: null });
      expect(loose.note).toMatch(/no primary key/);
      expect(
        await rejection(db.read('db://mytest/tables/loose/rows?after=WzFd', ctx())),
      ).toBeInstanceOf(InvalidArgumentError);
    });

    it('sees every existing row exactly once while rows are inserted between pages', async () => {
      const seen = await walkRows(db, 'db://mytest/tables/users/rows?limit=3', async () => {
        await admin.query(`INSERT INTO \`${DB}\`.users (name) VALUES ('late')`);
        await admin.query(
          `INSERT INTO \`${DB}\`.users (id, name) SELECT -COUNT(*) - 1, 'early' FROM \`${DB}\`.users WHERE id < 0`,
        );
      });
      const ids = seen.rows.map((r) => r['id'] as number);
      expect(new Set(ids).size).toBe(ids.length);
      for (let id = 1; id <= 25; id += 1) expect(ids.filter((x) => x === id)).toHaveLength(1);
      expect(ids.some((id) => id < 0)).toBe(false);
      await admin.query(`DELETE FROM \`${DB}\`.users WHERE id > 25 OR id < 0`);
    });

    it('runs named queries with bound, typed parameters', async () => {
      expect(
        (await readJson<{ rows: unknown[][] }>(db, 'db://mytest/queries/by_name?name=user07')).rows,
      ).toEqual([[7, 'user07']]);
      const injected = await readJson<{ rows: unknown[][] }>(
        db,
        `db://mytest/queries/by_name?name=${encodeURIComponent("' OR 1=1 -- ")}`,
      );
      expect(injected.rows).toEqual([]);
      expect(
        (await readJson<{ rows: unknown[][] }>(db, 'db://mytest/queries/since?from=2024-01-01'))
          .rows,
      ).toEqual([[25]]);
      const bad = await rejection(db.read('db://mytest/queries/since?from=soon', ctx()));
      expect((bad as InvalidArgumentError).data['argument']).toBe('from');
    });

    it('completes table names and a parameter from a column', async () => {
      const templates = db.templates();
      const rows = templates.find(
        (t) => t.uriTemplate === 'db://mytest/tables/{table}/rows{?after,limit,format}',
      )!;
      expect((await rows.complete!['table']!('o', {}, ctx())).values).toEqual([
        'odd name/é',
        'orders',
      ]);
      const byName = templates.find((t) => t.uriTemplate === 'db://mytest/queries/by_name{?name}')!;
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

  describe('grants', () => {
    it('runs sql_query as a user granted only SELECT', async () => {
      const db = provider({ queryTool: true });
      expect(await db.misconfigured()).toBeUndefined();
      expect(
        (await db.query('SELECT id, name FROM users WHERE id <= ? ORDER BY id', [2])).rows,
      ).toEqual([
        [1, 'user01'],
        [2, 'user02'],
      ]);
      await db.close();
    });

    it('refuses root (ALL PRIVILEGES) at start and per call, with the reason, unless allowed', async () => {
      const root = sqlProvider({ url: rootUrl, name: 'myroot', queryTool: true });
      expect(await root.misconfigured()).toMatch(
        /sql_query will not run as user root@.*ALL PRIVILEGES ON \*\.\*/,
      );
      const error = await rejection(root.query('SELECT 1'));
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as Error).message).toMatch(/ALL PRIVILEGES/);
      await root.close();
      const allowed = sqlProvider({
        url: rootUrl,
        name: 'myroot',
        queryTool: true,
        allowPrivilegedRole: true,
      });
      expect(await allowed.misconfigured()).toBeUndefined();
      expect((await allowed.query('SELECT 1 AS one')).rows).toEqual([[1]]);
      await allowed.close();
    });
  });

  describe('bounds', () => {
    it('stops a long statement at the time limit and answers the next one', async () => {
      const db = provider();
      // calls before it leave their connection reset and prepared again (in one statement): the
      // time limit, read-only mode and lexing modes hold on it as on a fresh one
      for (let i = 0; i < 3; i += 1)
        expect((await db.query('SELECT @@SESSION.tx_read_only, @@SESSION.time_zone')).rows).toEqual(
          [[1, '+00:00']],
        );
      const error = await rejection(
        db.query(
          'SELECT COUNT(*) FROM seq_1_to_100000 a, seq_1_to_100000 b WHERE a.seq + b.seq > 0',
        ),
      );
      expect((error as { code?: string }).code).toBe('timeout');
      expect((await db.query('SELECT 42 AS answer')).rows).toEqual([[42]]);
      await db.close();
    });

    it('stops a value over the result cap as its bytes arrive, before the row is whole, in sql_query and a named query', async () => {
      const cap = 1024 * 1024;
      const big = 15 * 1024 * 1024; // under the server's max_allowed_packet (16 MiB by default)
      const db = provider({
        maxResultBytes: cap,
        queries: { ...QUERIES, huge: { sql: `SELECT 1 AS id, REPEAT('x', ${big}) AS body` } },
      });
      const error = await rejection(db.query(`SELECT REPEAT('x', ${big}) AS body`));
      expect((error as ReservoirError).code).toBe('too_large');
      // "more than": the reader stopped before the value had arrived whole, so it never knew its size
      expect((error as Error).message).toMatch(
        new RegExp(
          `row 1 of db://mytest/ holds more than \\d+ bytes, over the ${cap}-byte result cap`,
        ),
      );
      expect((error as ReservoirError).data).toMatchObject({ limit: cap, measure: 'row' });
      expect(((error as ReservoirError).data as { size: number }).size).toBeLessThan(big);
      const named = await rejection(db.read('db://mytest/queries/huge', ctx()));
      expect((named as ReservoirError).code).toBe('too_large');
      expect((named as Error).message).toContain(`more than ${cap} bytes (the result cap`);
      // under the cap, the same shape of statement answers whole, and the connection serves again
      const small = await db.query(`SELECT REPEAT('x', ${cap - 100}) AS body`);
      expect((small.rows[0]![0] as string).length).toBe(cap - 100);
      await db.close();
    });

    it('caps rows and says the result was truncated', async () => {
      const db = provider();
      const result = await db.query('SELECT seq FROM seq_1_to_100000');
      expect(result.rowCount).toBe(50);
      expect(result.truncated).toBe(true);
      expect((await db.query('SELECT seq FROM seq_1_to_10', [], { maxRows: 3 })).rows).toEqual([
        [1],
        [2],
        [3],
      ]);
      await db.close();
    });
  });

  describe('change detection', () => {
    it('polls fingerprints: updated for the changed table only, list_changed for a new table, nothing left after', async () => {
      const db = provider();
      const updates: string[] = [];
      let listChanges = 0;
      const stopUsers = await db.watch('db://mytest/tables/users/rows', () =>
        updates.push('users'),
      );
      const stopOrders = await db.watch('db://mytest/tables/orders/schema', () =>
        updates.push('orders'),
      );
      const stopList = await db.onListChanged(() => (listChanges += 1));
      await admin.query(`UPDATE \`${DB}\`.users SET name = 'renamed' WHERE id = 3`);
      await waitUntil(() => updates.includes('users'), 'users updated');
      expect(updates).not.toContain('orders');
      await admin.query(`CREATE TABLE \`${DB}\`.appeared (id INT PRIMARY KEY)`);
      await waitUntil(() => listChanges > 0, 'list_changed');
      expect((await db.list(undefined, 100, ctx())).items.map((i) => i.uri)).toContain(
        'db://mytest/tables/appeared/rows',
      );
      stopUsers();
      stopOrders();
      stopList();
      await waitUntil(() => !db.watchStats().polling, 'polling stopped');
      expect(db.watchStats()).toEqual({
        watches: 0,
        listListeners: 0,
        polling: false,
        listening: false,
      });
      await admin.query(
        `UPDATE \`${DB}\`.users SET name = 'user03' WHERE id = 3; DROP TABLE \`${DB}\`.appeared`,
      );
      await db.close();
    });
  });
});
