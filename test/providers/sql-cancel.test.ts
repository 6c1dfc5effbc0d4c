// Pins cancellation below the transport (the SDK routes are in test/e2e/sql-limits.test.ts): an
// aborted read of a named query stops its PostgreSQL backend (pg_sleep in a configured query, which
// the lexical check never sees); a call aborted while it waits for a pool slot (PostgreSQL) or its
// turn in the query process (SQLite) rejects at once and never runs; the source answers afterwards.
import { join } from 'node:path';
import { loadSqliteDriver } from '../../src/core/sqlite-driver.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqlProvider } from '../../src/providers/sql/index.js';
import { rejection, removeDir, tempDir } from './helpers.js';
import { eventually } from '../helpers/eventually.js';
import { PG_URL, readJson } from './sql-helpers.js';

const Database = loadSqliteDriver();

const APP = `reservoir_cancel_${process.pid}_${Date.now().toString(36)}`;
const ENDLESS_SQLITE =
  'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c';

describe('SQLite: a call aborted while waiting its turn', () => {
  let dir: string;
  beforeAll(() => {
    dir = tempDir('reservoir-sql-cancel-');
    const db = new Database(join(dir, 'q.db'));
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY)');
    db.close();
  });
  afterAll(() => removeDir(dir));

  it('rejects at once and never runs, while the running statement is stopped by its own abort', async () => {
    const provider = sqlProvider({ path: join(dir, 'q.db'), statementTimeoutMs: 60_000 });
    try {
      const first = new AbortController();
      const running = rejection(provider.query(ENDLESS_SQLITE, [], { signal: first.signal }));
      const second = new AbortController();
      const queued = rejection(provider.query('SELECT 1', [], { signal: second.signal }));
      second.abort(new Error('second cancelled'));
      expect(((await queued) as Error).message).toBe('second cancelled');
      first.abort(new Error('first cancelled'));
      expect(((await running) as Error).message).toBe('first cancelled');
      expect((await provider.query('SELECT 7')).rows).toEqual([[7]]);
    } finally {
      await provider.close();
    }
  });
});

describe.skipIf(PG_URL === undefined || PG_URL === '')('PostgreSQL cancellation', () => {
  let admin: pg.Client;
  let url: string;
  beforeAll(async () => {
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    const u = new URL(PG_URL!);
    u.searchParams.set('application_name', APP);
    url = u.href;
  });
  afterAll(async () => admin?.end());

  const sleeping = async (): Promise<number> =>
    (
      await admin.query<{ n: number }>({
        text: "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND state = 'active' AND query LIKE '%pg_sleep%'",
        values: [APP],
      })
    ).rows[0]!.n;

  it('stops the backend of an aborted named-query read, and the pool answers the next read', async () => {
    const provider = sqlProvider({
      url,
      name: 'cancel',
      queries: {
        nap: { sql: 'SELECT pg_sleep(30) IS NULL AS slept' },
        one: { sql: 'SELECT 1 AS one' },
      },
      pool: { max: 1 },
    });
    try {
      const controller = new AbortController();
      const read = rejection(
        provider.read('db://cancel/queries/nap', { signal: controller.signal }),
      );
      await eventually(sleeping, 'the pg_sleep(30) statement to start', { deadlineMs: 15_000 });
      controller.abort(new Error('read cancelled'));
      expect(((await read) as Error).message).toBe('read cancelled');
      // Gone well before its 30 s: stopped, not finished.
      await eventually(async () => (await sleeping()) === 0, 'the backend to stop sleeping', {
        deadlineMs: 15_000,
      });
      expect((await readJson(provider, 'db://cancel/queries/one'))['rows']).toEqual([[1]]);
    } finally {
      await provider.close();
    }
  });

  it('rejects a call aborted while it waits for a pool slot at once, without disturbing the one holding it', async () => {
    const provider = sqlProvider({
      url,
      name: 'cancel',
      queries: { nap: { sql: 'SELECT pg_sleep(3) IS NULL AS slept' } }, // the margin for the abort below
      pool: { max: 1 },
      allowPrivilegedRole: true,
    });
    try {
      let held = true;
      const holding = readJson(provider, 'db://cancel/queries/nap').finally(() => (held = false));
      await eventually(sleeping, 'the pg_sleep(3) statement to start', { deadlineMs: 15_000 });
      const controller = new AbortController();
      const waiting = rejection(provider.query('SELECT 1', [], { signal: controller.signal }));
      controller.abort(new Error('waiting cancelled'));
      expect(((await waiting) as Error).message).toBe('waiting cancelled');
      expect(held).toBe(true); // rejected while the slot's holder still sleeps, not once it let go
      expect((await holding)['rowCount']).toBe(1);
      expect((await provider.query('SELECT 2')).rows).toEqual([[2]]);
    } finally {
      await provider.close();
    }
  });
});
