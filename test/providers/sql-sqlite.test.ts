// The SQL provider on SQLite: the provider contract, schema documents, keyset pages (composite,
// rowid and odd names; rows inserted between pages), CSV, named queries with typed parameters,
// completion, the read-only query path (refusals, timeout by killing the child, row cap), change
// detection, and the file going away and coming back.
import { mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { loadSqliteDriver } from '../../src/core/sqlite-driver.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError, ReservoirError, UnavailableError } from '../../src/core/errors.js';
import { sqlProvider, type SqlProvider } from '../../src/providers/sql/index.js';
import { testProvider } from './contract.js';
import { ctx, expectNotFound, rejection, removeDir, tempDir } from './helpers.js';
import { readJson, waitUntil, walkRows, type RowsDoc } from './sql-helpers.js';

const Database = loadSqliteDriver();

const QUERIES = {
  by_name: {
    sql: 'SELECT id, name FROM users WHERE name = ?1',
    description: 'Users with one name',
    params: [{ name: 'name', complete: 'users.name' }],
  },
  heavy: {
    sql: 'SELECT id FROM users WHERE id >= ? AND id < ? ORDER BY id',
    params: [
      { name: 'lo', type: 'integer' as const },
      { name: 'hi', type: 'integer' as const },
    ],
  },
  all_users: { sql: 'SELECT id FROM users ORDER BY id' },
  count_to: {
    sql: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?) SELECT x FROM c',
    params: [{ name: 'n', type: 'integer' as const }],
  },
  flags: {
    sql: 'SELECT ?1 AS b, ?2 AS d, ?3 AS kind',
    params: [
      { name: 'b', type: 'boolean' as const },
      { name: 'd', type: 'date' as const, default: '2024-01-01' },
      { name: 'kind', values: ['a', 'b'], required: false },
    ],
  },
};

function createDatabase(path: string, users = 25): void {
  const db = new Database(path);
  db.exec(`
    CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT UNIQUE, created TEXT);
    CREATE INDEX users_name ON users (name);
    CREATE TABLE orders (user_id INTEGER NOT NULL REFERENCES users(id), n INTEGER NOT NULL, total REAL, PRIMARY KEY (user_id, n)) WITHOUT ROWID;
    CREATE TABLE notes (body TEXT);
    CREATE TABLE "odd name/é" (k TEXT PRIMARY KEY NOT NULL, v BLOB, big INTEGER);
  `);
  const insert = db.prepare('INSERT INTO users (id, name, email, created) VALUES (?, ?, ?, ?)');
  for (let i = 1; i <= users; i += 1)
    insert.run(i, `user${String(i).padStart(2, '0')}`, `u${i}@example.com`, '2024-05-01');
  const order = db.prepare('INSERT INTO orders VALUES (?, ?, ?)');
  for (let u = 1; u <= 4; u += 1) for (let n = 1; n <= 3; n += 1) order.run(u, n, u * n * 1.5);
  const note = db.prepare('INSERT INTO notes VALUES (?)');
  for (let i = 0; i < 7; i += 1) note.run(`note ${i}`);
  db.prepare('INSERT INTO "odd name/é" VALUES (?, ?, ?)').run(
    'a,b',
    Buffer.from([0, 1, 2, 255]),
    2n ** 60n,
  );
  db.prepare('INSERT INTO "odd name/é" VALUES (?, ?, ?)').run('c d', null, 7);
  db.close();
}

function fixture(
  dir: string,
  extra: Partial<Parameters<typeof sqlProvider>[0]> = {},
): { provider: SqlProvider; path: string } {
  const path = join(dir, 'app.db');
  createDatabase(path);
  return { provider: sqlProvider({ path, queries: QUERIES, pollIntervalMs: 50, ...extra }), path };
}

testProvider({
  name: 'sql (sqlite)',
  setup: async () => {
    const dir = tempDir('reservoir-sql-');
    const { provider, path } = fixture(dir, { pageRows: 10 });
    let added = 0;
    return {
      provider,
      change: {
        uri: 'db://app/tables/users/rows',
        apply: () => {
          const db = new Database(path);
          db.prepare('INSERT INTO users (name) VALUES (?)').run(`added ${(added += 1)}`);
          db.close();
        },
      },
      completion: {
        uriTemplate: 'db://app/tables/{table}/rows{?after,limit,format}',
        variable: 'table',
        value: 'us',
        expected: 'users',
      },
      knownUris: [
        'db://app/schema',
        'db://app/tables/users/rows',
        'db://app/tables/odd%20name%2F%C3%A9/rows',
        'db://app/queries/all_users',
      ],
      missingUri: 'db://app/tables/nope/rows',
      cleanup: async () => {
        await provider.close();
        removeDir(dir);
      },
    };
  },
});

describe('sql provider on SQLite', () => {
  let dir: string;
  let provider: SqlProvider;
  let path: string;

  beforeAll(() => {
    dir = tempDir('reservoir-sql-');
    ({ provider, path } = fixture(dir, { pageRows: 10, maxRows: 50, statementTimeoutMs: 500 }));
  });
  afterAll(async () => {
    await provider.close();
    removeDir(dir);
  });

  it('serves the whole schema with columns, keys, indexes and foreign keys', async () => {
    const schema = await readJson<{
      dialect: string;
      tables: Record<string, unknown>[];
      queries: { name: string }[];
    }>(provider, 'db://app/schema');
    expect(schema.dialect).toBe('sqlite');
    expect(schema.tables.map((t) => t['name'])).toEqual(['notes', 'odd name/é', 'orders', 'users']);
    const users = schema.tables.find((t) => t['name'] === 'users')!;
    expect(users['primaryKey']).toEqual(['id']);
    expect(users['pageKey']).toEqual(['id']);
    expect(users['columns']).toContainEqual({ name: 'name', type: 'TEXT', nullable: false });
    expect((users['indexes'] as { name: string }[]).map((i) => i.name)).toContain('users_name');
    const orders = schema.tables.find((t) => t['name'] === 'orders')!;
    expect(orders['pageKey']).toEqual(['user_id', 'n']);
    expect(orders['foreignKeys']).toEqual([
      { columns: ['user_id'], table: 'users', references: ['id'] },
    ]);
    expect(schema.tables.find((t) => t['name'] === 'notes')!['pageKey']).toEqual(['rowid']);
    expect(schema.queries.map((q) => q.name)).toEqual(Object.keys(QUERIES));
  });

  it('serves one table’s schema, and NotFoundError for a table that does not exist', async () => {
    const orders = await readJson(provider, 'db://app/tables/orders/schema');
    expect(orders['name']).toBe('orders');
    expect(orders['rowsUri']).toBe('db://app/tables/orders/rows');
    await expectNotFound(
      provider.read('db://app/tables/missing/schema', ctx()),
      'db://app/tables/missing/schema',
    );
    await expectNotFound(provider.read('db://app/other', ctx()), 'db://app/other');
  });

  it('lists the schema, one entry per table and the queries without required parameters', async () => {
    const page = await provider.list(undefined, 100, ctx());
    expect(page.items.map((i) => i.uri)).toEqual([
      'db://app/schema',
      'db://app/tables/notes/rows',
      'db://app/tables/odd%20name%2F%C3%A9/rows',
      'db://app/tables/orders/rows',
      'db://app/tables/users/rows',
      'db://app/queries/all_users',
    ]);
  });

  it('pages rows by primary key, each page linking the next, every row once', async () => {
    const first = await readJson<RowsDoc>(provider, 'db://app/tables/users/rows');
    expect(first.count).toBe(10);
    expect(first.rows[0]).toEqual({
      id: 1,
      name: 'user01',
      email: 'u1@example.com',
      created: '2024-05-01',
    });
    expect(first.next).toMatch(/^db:\/\/app\/tables\/users\/rows\?after=[A-Za-z0-9_-]+$/);
    const all = await walkRows(provider, 'db://app/tables/users/rows?limit=4');
    expect(all.rows.map((r) => r['id'])).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    expect(all.pages).toBe(7);
  });

  it('pages a composite key, a hidden rowid and an oddly named table', async () => {
    const orders = await walkRows(provider, 'db://app/tables/orders/rows?limit=5');
    expect(orders.rows.map((r) => `${String(r['user_id'])}/${String(r['n'])}`)).toEqual([
      '1/1',
      '1/2',
      '1/3',
      '2/1',
      '2/2',
      '2/3',
      '3/1',
      '3/2',
      '3/3',
      '4/1',
      '4/2',
      '4/3',
    ]);
    const notes = await walkRows(provider, 'db://app/tables/notes/rows?limit=2');
    expect(notes.rows).toEqual(Array.from({ length: 7 }, (_, i) => ({ body: `note ${i}` })));
    const odd = await readJson<RowsDoc>(
      provider,
      'db://app/tables/odd%20name%2F%C3%A9/rows?limit=1',
    );
    expect(odd.rows).toEqual([
      { k: 'a,b', v: { $base64: 'AAEC/w==' }, big: '1152921504606846976' },
    ]);
    const rest = await readJson<RowsDoc>(provider, odd.next!);
    expect(rest.rows).toEqual([{ k: 'c d', v: null, big: 7 }]);
    expect(rest.next).toBeNull();
  });

  it('sees every existing row exactly once while rows are inserted between pages', async () => {
    const writer = new Database(path);
    let next = 1000;
    const seen = await walkRows(provider, 'db://app/tables/users/rows?limit=3', () => {
      // one row before everything read so far, one inside the unread range, one past the end
      writer.prepare('INSERT INTO users (id, name) VALUES (?, ?)').run(-next, 'early');
      writer.prepare('INSERT INTO users (id, name) VALUES (?, ?)').run(next, 'late');
      next += 1;
    });
    writer.close();
    const ids = seen.rows.map((r) => r['id'] as number);
    expect(new Set(ids).size).toBe(ids.length);
    for (let id = 1; id <= 25; id += 1) expect(ids.filter((x) => x === id)).toHaveLength(1);
    expect(ids.some((id) => id < 0)).toBe(false); // keys before the position are never revisited
  });

  it('refuses a limit over the row cap and a forged position, with clear errors', async () => {
    const over = await rejection(provider.read('db://app/tables/users/rows?limit=51', ctx()));
    expect(over).toBeInstanceOf(InvalidArgumentError);
    expect((over as InvalidArgumentError).data).toMatchObject({ argument: 'limit', max: 50 });
    for (const bad of ['junk!', 'WzEsMl0', Buffer.from('[{"x":1}]').toString('base64url')]) {
      const error = await rejection(
        provider.read(`db://app/tables/users/rows?after=${bad}`, ctx()),
      );
      expect(error, bad).toBeInstanceOf(InvalidArgumentError);
    }
    expect(
      await rejection(provider.read('db://app/tables/users/rows?sort=name', ctx())),
    ).toBeInstanceOf(InvalidArgumentError);
    expect(
      await rejection(provider.read('db://app/tables/users/rows?limit=2&limit=3', ctx())),
    ).toBeInstanceOf(InvalidArgumentError);
    expect(await rejection(provider.read('db://app/schema?x=1', ctx()))).toBeInstanceOf(
      InvalidArgumentError,
    );
  });

  it('serves a page as CSV with its next link beside it', async () => {
    const result = await provider.read(
      'db://app/tables/odd%20name%2F%C3%A9/rows?format=csv',
      ctx(),
    );
    const [csv, meta] = result.contents as { text: string; mimeType: string }[];
    expect(csv!.mimeType).toBe('text/csv');
    expect(csv!.text).toBe(
      'k,v,big\r\n"a,b","{""$base64"":""AAEC/w==""}",1152921504606846976\r\nc d,,7\r\n',
    );
    expect(JSON.parse(meta!.text)).toEqual({ table: 'odd name/é', count: 2, next: null });
    const paged = await provider.read('db://app/tables/users/rows?format=csv&limit=20', ctx());
    expect(JSON.parse((paged.contents[1] as { text: string }).text).next).toMatch(
      /limit=20&format=csv$/,
    );
  });

  it('runs named queries with every parameter bound and typed', async () => {
    const byName = await readJson<{ rows: unknown[][]; params: unknown }>(
      provider,
      'db://app/queries/by_name?name=user03',
    );
    expect(byName.rows).toEqual([[3, 'user03']]);
    // an injection attempt is only a value that matches nothing
    const injected = await readJson<{ rows: unknown[][] }>(
      provider,
      `db://app/queries/by_name?name=${encodeURIComponent("x' OR '1'='1")}`,
    );
    expect(injected.rows).toEqual([]);
    const flags = await readJson<{ rows: unknown[][]; params: unknown }>(
      provider,
      'db://app/queries/flags?b=true&kind=b',
    );
    expect(flags.rows).toEqual([[1, '2024-01-01', 'b']]);
    expect(flags.params).toEqual({ b: true, d: '2024-01-01', kind: 'b' });
  });

  it('refuses bad, missing, unknown and disallowed parameters with errors that name them', async () => {
    const cases: [string, string][] = [
      ['db://app/queries/heavy?lo=1', 'hi'],
      ['db://app/queries/heavy?lo=x&hi=2', 'lo'],
      ['db://app/queries/heavy?lo=1.5&hi=2', 'lo'],
      ['db://app/queries/flags?b=maybe', 'b'],
      ['db://app/queries/flags?b=true&d=yesterday', 'd'],
      ['db://app/queries/flags?b=true&kind=c', 'kind'],
      ['db://app/queries/flags?b=true&zzz=1', 'zzz'],
    ];
    for (const [uri, argument] of cases) {
      const error = await rejection(provider.read(uri, ctx()));
      expect(error, uri).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).data['argument'], uri).toBe(argument);
    }
    await expectNotFound(provider.read('db://app/queries/nope', ctx()), 'db://app/queries/nope');
  });

  it('refuses a named query result over the row cap rather than truncating it', async () => {
    expect(
      (await readJson<{ rowCount: number }>(provider, 'db://app/queries/count_to?n=50')).rowCount,
    ).toBe(50);
    const error = await rejection(provider.read('db://app/queries/count_to?n=51', ctx()));
    expect(error).toBeInstanceOf(ReservoirError);
    expect((error as ReservoirError).code).toBe('too_large');
    expect((error as ReservoirError).data).toMatchObject({ limit: 50, measure: 'rows' });
  });

  it('completes table names, formats and query parameters', async () => {
    const templates = provider.templates!();
    const rows = templates.find(
      (t) => t.uriTemplate === 'db://app/tables/{table}/rows{?after,limit,format}',
    )!;
    expect((await rows.complete!['table']!('o', {}, ctx())).values).toEqual([
      'odd name/é',
      'orders',
    ]);
    expect((await rows.complete!['format']!('c', {}, ctx())).values).toEqual(['csv']);
    const byName = templates.find((t) => t.uriTemplate === 'db://app/queries/by_name{?name}')!;
    expect((await byName.complete!['name']!('user1', {}, ctx())).values).toEqual(
      Array.from({ length: 10 }, (_, i) => `user1${i}`),
    );
    const flags = templates.find((t) => t.uriTemplate === 'db://app/queries/flags{?b,d,kind}')!;
    expect((await flags.complete!['b']!('t', {}, ctx())).values).toEqual(['true']);
    expect((await flags.complete!['kind']!('', {}, ctx())).values).toEqual(['a', 'b']);
  });
});

describe('sql provider on SQLite: the read-only query path', () => {
  let dir: string;
  let provider: SqlProvider;
  let path: string;

  beforeAll(() => {
    dir = tempDir('reservoir-sql-');
    ({ provider, path } = fixture(dir, { pageRows: 10, maxRows: 20, statementTimeoutMs: 400 }));
  });
  afterAll(async () => {
    await provider.close();
    removeDir(dir);
  });

  const snapshot = (): string => {
    const db = new Database(path, { readonly: true });
    const tables = db.prepare('SELECT name, sql FROM sqlite_schema ORDER BY name').all();
    const counts = (tables as { name: string }[])
      .filter((t) => !t.name.startsWith('sqlite_') && !t.name.includes('autoindex'))
      .map((t) => {
        try {
          return db.prepare(`SELECT count(*) AS n FROM "${t.name.replaceAll('"', '""')}"`).get();
        } catch {
          return null;
        }
      });
    db.close();
    return JSON.stringify({ tables, counts });
  };

  it('runs a read and returns columns and rows', async () => {
    const result = await provider.query(
      'SELECT id, name FROM users WHERE id <= ? ORDER BY id',
      [2],
    );
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

  it('refuses stacked statements, writes, DDL, ATTACH, PRAGMA writes and extension loading, and changes nothing', async () => {
    const before = snapshot();
    const refused = [
      'SELECT 1; DELETE FROM users',
      'SELECT 1; COMMIT; DROP TABLE users',
      'DELETE FROM users',
      "INSERT INTO users (id, name) VALUES (999, 'x')",
      "UPDATE users SET name = 'x'",
      'WITH x AS (SELECT 1) DELETE FROM users',
      'DROP TABLE users',
      'CREATE TABLE t (x)',
      `ATTACH DATABASE '${join(dir, 'other.db')}' AS other`,
      'PRAGMA query_only = 0',
      "SELECT load_extension('/tmp/nothing')",
      'VACUUM',
    ];
    for (const sql of refused) {
      const error = await rejection(provider.query(sql));
      expect(error, sql).toBeInstanceOf(InvalidArgumentError);
    }
    expect(snapshot()).toBe(before);
  });

  it('is held by the database itself when the lexical check is bypassed', async () => {
    const before = snapshot();
    // the dialect, below the lexical pre-check: the read-only file, query_only and the one-statement rule
    const dialect = (await import('../../src/providers/sql/sqlite.js')).sqliteDialect(path);
    const limits = { maxRows: 10, timeoutMs: 2000, maxBytes: 1 << 20 };
    for (const sql of [
      'DELETE FROM users',
      'DELETE FROM users RETURNING id',
      'SELECT 1; DELETE FROM users',
      'CREATE TABLE t (x)',
      'PRAGMA query_only = 0',
      `ATTACH DATABASE '${join(dir, 'x.db')}' AS x`,
      "SELECT load_extension('/tmp/nothing')",
    ]) {
      const error = await rejection(dialect.readOnlyQuery(sql, [], limits));
      expect((error as { kind?: string }).kind, sql).toMatch(/refused|invalid/);
    }
    await dialect.close();
    expect(snapshot()).toBe(before);
  });

  it('stops a runaway statement at the timeout and answers the next one', async () => {
    // The statement never ends on its own: a timeout error naming 400 ms is the timeout firing.
    const error = await rejection(
      provider.query(
        'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c',
      ),
    );
    expect(error).toBeInstanceOf(ReservoirError);
    expect((error as ReservoirError).code).toBe('timeout');
    expect((error as ReservoirError).data).toMatchObject({ timeoutMs: 400 });
    expect((await provider.query('SELECT 42 AS answer')).rows).toEqual([[42]]);
  });

  it('caps rows and says the result was truncated', async () => {
    const result = await provider.query('SELECT id FROM users ORDER BY id');
    expect(result.rowCount).toBe(20);
    expect(result.truncated).toBe(true);
    const small = await provider.query('SELECT id FROM users ORDER BY id', [], { maxRows: 3 });
    expect(small.rows).toEqual([[1], [2], [3]]);
  });
});

describe('sql provider on SQLite: change detection and availability', () => {
  let dir: string;
  let provider: SqlProvider;
  let path: string;

  beforeAll(() => {
    dir = tempDir('reservoir-sql-');
    ({ provider, path } = fixture(dir));
  });
  afterAll(async () => {
    await provider.close();
    removeDir(dir);
  });

  it('reports updates to watched tables and list changes, and stops everything when the watchers leave', async () => {
    let updates = 0;
    let listChanges = 0;
    const stop = await provider.watch!('db://app/tables/users/rows', () => (updates += 1));
    const stopList = await provider.onListChanged!(() => (listChanges += 1));
    expect(provider.watchStats()).toMatchObject({ watches: 1, listListeners: 1, polling: true });
    const writer = new Database(path);
    writer.prepare("INSERT INTO users (id, name) VALUES (500, 'new')").run();
    await waitUntil(() => updates > 0, 'an update');
    expect(listChanges).toBe(0);
    writer.exec('CREATE TABLE extra (id INTEGER PRIMARY KEY)');
    await waitUntil(() => listChanges > 0, 'a list change');
    const listed = await provider.list(undefined, 100, ctx());
    expect(listed.items.map((i) => i.uri)).toContain('db://app/tables/extra/rows');
    writer.close();
    stop();
    stopList();
    expect(provider.watchStats()).toMatchObject({ watches: 0, listListeners: 0, polling: false });
    await expectNotFound(
      Promise.resolve(provider.watch!('db://app/tables/nope/rows', () => undefined)),
      'db://app/tables/nope/rows',
    );
  });

  it('fails only with UnavailableError while the file is gone, and recovers when it is back', async () => {
    expect((await readJson<RowsDoc>(provider, 'db://app/tables/users/rows?limit=1')).count).toBe(1);
    const away = join(dir, 'away');
    mkdirSync(away);
    renameSync(path, join(away, 'app.db'));
    expect(await rejection(provider.ready())).toBeInstanceOf(UnavailableError);
    const error = await rejection(provider.read('db://app/tables/users/rows?limit=1', ctx()));
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as UnavailableError).message).toMatch(/missing/);
    expect(await rejection(provider.query('SELECT 1'))).toBeInstanceOf(UnavailableError);
    renameSync(join(away, 'app.db'), path);
    await provider.ready();
    expect((await readJson<RowsDoc>(provider, 'db://app/tables/users/rows?limit=1')).count).toBe(1);
    expect((await provider.query('SELECT 1 AS one')).rows).toEqual([[1]]);
    rmSync(away, { recursive: true });
  });

  it('reopens a file replaced by another one', async () => {
    const other = join(dir, 'other.db');
    const db = new Database(other);
    db.exec(
      "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users VALUES (1, 'replaced')",
    );
    db.close();
    renameSync(other, path);
    const doc = await readJson<RowsDoc>(provider, 'db://app/tables/users/rows');
    expect(doc.rows).toEqual([{ id: 1, name: 'replaced' }]);
  });
});

describe('sql provider options', () => {
  it('refuses bad options with a ConfigError naming the field', () => {
    expect(() => sqlProvider({})).toThrow(/exactly one of path/);
    expect(() => sqlProvider({ path: 'x.db', url: 'postgres://h/db' })).toThrow(
      /exactly one of path/,
    );
    expect(() => sqlProvider({ path: 'x.db', name: 'Bad Name' })).toThrow(/name/);
    expect(() => sqlProvider({ path: 'x.db', schema: 'public' })).toThrow(/PostgreSQL/);
    expect(() => sqlProvider({ path: 'x.db', pageRows: 500, maxRows: 100 })).toThrow(/pageRows/);
    expect(() => sqlProvider({ url: 'oracle://h/db' })).toThrow(
      /postgres:\/\/, postgresql:\/\/, mysql:\/\/ or mariadb:\/\//,
    );
    expect(() => sqlProvider({ url: 'mysql://h/db', schema: 'public' })).toThrow(
      /schema: is for PostgreSQL sources only \(this source is MySQL/,
    );
    expect(() => sqlProvider({ url: 'mariadb://h:3306/' })).toThrow(/must name the database/);
  });

  it('names the source after the file or the database', async () => {
    const a = sqlProvider({ path: '/data/My App.sqlite3' });
    const b = sqlProvider({ url: 'postgres://u@h:5432/Sales_DB' });
    const c = sqlProvider({ url: 'mariadb://u@h:3306/Shop%20Main' });
    expect([a.root, b.root, c.root, c.dialect]).toEqual([
      'db://my-app/',
      'db://sales_db/',
      'db://shop-main/',
      'mysql',
    ]);
    await Promise.all([a.close(), b.close(), c.close()]);
  });
});
