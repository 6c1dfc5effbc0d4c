// A PostgreSQL `sql_query` writes its transaction's start, settings, role check, statement and
// reset in one write (one extended-protocol group, one Sync), and the server runs the statement
// only if everything before it succeeded (RESERVOIR_TEST_PG; skipped with a message when unset).
// The source reaches the server through a proxy that notes each chunk the client writes, as
// frontend messages (type byte, length, body), and that can spoil the transaction's start (one
// letter changed, so the server answers it with a syntax error). What a statement that never ran
// would have done is observable: it terminates another backend (pg_terminate_backend with a wait,
// so the backend is gone by the time the call answers), which a second connection sees.
import pg from 'pg';
import type PgNs from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/log.js';
import { postgresDialect } from '../../src/providers/sql/postgres.js';
import { pipeline } from '../../src/providers/sql/postgres-pipeline.js';
import { eventually } from '../helpers/eventually.js';
import { hostPortOf, TcpProxy, throughProxy } from '../helpers/tcp-proxy.js';
import { rejection } from './helpers.js';
import { PG_URL } from './sql-helpers.js';

const BEGIN = 'BEGIN TRANSACTION READ ONLY';
const LIMITS = { maxRows: 10, timeoutMs: 2000, maxBytes: 1 << 20 };
/** The messages of a statement whose rows are read, and of one whose are not. */
const READ = ['P', 'B', 'D', 'E'];
const RUN = ['P', 'B', 'E'];
/** The reset behind the statement: ten statements of our own. */
const RESET = Array.from({ length: 10 }, () => RUN).flat();

/** One frontend message: its type and, for Parse and Query, its SQL text. */
interface Sent {
  type: string;
  text: string;
}

/** A proxy that records, per chunk the client writes (after the start-up message), the messages in it. */
class RecordingProxy extends TcpProxy {
  chunks: Sent[][] = [];
  /** When set, the transaction's start is sent as a statement the server cannot parse. */
  spoilBegin = false;

  constructor(target: { host: string; port: number }) {
    super(target.host, target.port, {
      clientFilter: () => {
        let started = false;
        return (chunk, send) => {
          // the first chunk is the start-up message (no type byte); each later one is what one
          // write of the client carried (small writes on loopback arrive whole)
          if (!started) {
            started = true;
            send(chunk);
            return;
          }
          const messages: Sent[] = [];
          for (let at = 0; at + 5 <= chunk.length;) {
            const type = String.fromCharCode(chunk[at]!);
            const end = at + 1 + chunk.readInt32BE(at + 1);
            const body = chunk.subarray(at + 5, end);
            // Parse: a statement name, then the text; Query: the text
            const from = type === 'P' ? body.indexOf(0) + 1 : 0;
            const text =
              type === 'P' || type === 'Q'
                ? body.subarray(from, body.indexOf(0, from)).toString('utf8')
                : '';
            if (this.spoilBegin && type === 'P' && text === BEGIN)
              chunk.write('X', at + 5 + from + BEGIN.length - 1, 'latin1'); // … READ ONLX
            messages.push({ type, text });
            at = end;
          }
          this.chunks.push(messages);
          send(chunk);
        };
      },
    });
  }
}

const suffix = `${process.pid}_${Date.now().toString(36)}`;

describe.skipIf(PG_URL === undefined || PG_URL === '')('sql_query on PostgreSQL, pipelined', () => {
  const SCHEMA = `pgpipe_${suffix}`;
  const ROLE = `pgpipe_${suffix}`;
  let admin: pg.Client;
  let proxy: RecordingProxy;
  let roleUrl: string;
  const dialects: ReturnType<typeof postgresDialect>[] = [];
  const victims: pg.Client[] = [];

  /** A dialect through the proxy, as `user` (the admin by default), its pool one connection. */
  const dialectAs = (
    allowPrivilegedRole: boolean,
    url = throughProxy(PG_URL!, proxy),
    statementTimeoutMs = 3000,
  ) => {
    const dialect = postgresDialect({
      url,
      schema: SCHEMA,
      statementTimeoutMs,
      allowPrivilegedRole,
      poolMax: 1,
      logger: silentLogger,
    });
    dialects.push(dialect);
    return dialect;
  };

  /** A connection of the test role, which the role may terminate: a statement that runs can end it. */
  const victim = async (): Promise<{ client: pg.Client; pid: number }> => {
    const client = new pg.Client({ connectionString: roleUrl });
    client.on('error', () => undefined);
    await client.connect();
    victims.push(client);
    const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!;
    return { client, pid: pid.pid };
  };
  /** Whether `client`'s backend still answers. */
  const alive = async (client: pg.Client): Promise<boolean> =>
    client.query('SELECT 1').then(
      () => true,
      () => false,
    );
  const terminate = (pid: number): string =>
    `SELECT pg_catalog.pg_terminate_backend(${pid}, 60000)`;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${SCHEMA}; CREATE TABLE ${SCHEMA}.t (id int);
      INSERT INTO ${SCHEMA}.t VALUES (1), (2), (3);
      CREATE ROLE ${ROLE} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE;
      GRANT USAGE ON SCHEMA ${SCHEMA} TO ${ROLE}; GRANT SELECT ON ${SCHEMA}.t TO ${ROLE}`);
    proxy = new RecordingProxy(hostPortOf(PG_URL!));
    await proxy.up();
    const url = new URL(throughProxy(PG_URL!, proxy));
    url.username = ROLE;
    url.password = '';
    roleUrl = url.href;
  });

  afterAll(async () => {
    for (const dialect of dialects) await dialect.close();
    for (const client of victims) await client.end().catch(() => undefined);
    await proxy?.down();
    await admin?.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    await admin
      ?.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '${ROLE}'`)
      .catch(() => undefined);
    await admin?.query(`DROP ROLE IF EXISTS ${ROLE}`).catch(() => undefined);
    await admin?.end();
  });

  /** The chunks the client wrote for `call`, once the connection serves again (its reset done). */
  const chunksOf = async (
    dialect: ReturnType<typeof postgresDialect>,
    call: () => Promise<unknown>,
  ): Promise<Sent[][]> => {
    await dialect.namedQuery('SELECT 1 AS before', [], LIMITS);
    const from = proxy.chunks.length;
    await call();
    // a named query runs only once the connection is back in the pool: its chunk closes the count
    await dialect.namedQuery('SELECT 2 AS after', [], LIMITS);
    const chunks = proxy.chunks.slice(from);
    return chunks.slice(
      0,
      chunks.findIndex((messages) => messages.some((m) => m.text.includes('SELECT 2 AS after'))),
    );
  };
  const types = (chunks: Sent[][]): string[][] => chunks.map((c) => c.map((m) => m.type));

  it('writes a statement of known shape, its transaction and its reset at once: one write, one Sync', async () => {
    const dialect = dialectAs(true);
    const sql = 'SELECT id FROM t WHERE id > $1 ORDER BY id';
    await dialect.readOnlyQuery(sql, [0], LIMITS);
    let answer: unknown;
    const chunks = await chunksOf(dialect, async () => {
      answer = (await dialect.readOnlyQuery(sql, [1], LIMITS)).rows;
    });
    expect(answer).toEqual([[2], [3]]);
    expect(types(chunks)).toEqual([[...RUN, ...RUN, ...READ, 'H', ...RESET, 'S']]);
    // the Flush behind the statement: its rows are sent as it completes, while the reset runs
    const texts = chunks[0]!.filter((m) => m.type === 'P').map((m) => m.text);
    expect(texts[0]).toBe(BEGIN);
    expect(texts[1]).toMatch(/^SELECT pg_catalog\.set_config\('statement_timeout', '2000', true\)/);
    expect(texts[2]).toContain(sql);
    expect(texts.slice(3)).toEqual([
      'ROLLBACK',
      'CLOSE ALL',
      'SET SESSION AUTHORIZATION DEFAULT',
      'RESET ALL',
      'DEALLOCATE ALL',
      'UNLISTEN *',
      'SELECT pg_catalog.pg_advisory_unlock_all()',
      'DISCARD PLANS',
      'DISCARD TEMP',
      'DISCARD SEQUENCES',
    ]);
    // and the statement ran under its own timeout, in a read-only transaction
    const settings = await dialect.readOnlyQuery(
      "SELECT current_setting('statement_timeout'), current_setting('transaction_read_only')",
      [],
      LIMITS,
    );
    expect(settings.rows).toEqual([['2s', 'on']]);
  });

  it('answers with the statement’s rows while the steps behind it still run: the server sends them at the Flush, not the Sync', async () => {
    // the step behind the answer waits on an advisory lock the admin holds; the answer must
    // arrive while it waits (before the Sync, which the server reaches only once the lock is freed)
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    const key = 4344;
    await admin.query(`SELECT pg_advisory_lock(${key})`);
    try {
      const run = pipeline(
        client,
        [{ text: 'SELECT 41 + 1 AS n', rows: true }, { text: `SELECT pg_advisory_lock(${key})` }],
        pg.types as PgNs.CustomTypesConfig,
        0,
      );
      const [answer] = await run.answered;
      expect(answer!.rows).toEqual([[42]]);
      // the answer can come before the server has begun the step behind it (the Flush is sent
      // first): wait for that step to queue on the lock, then see the group is still unfinished
      let settled = false;
      const settle = (): boolean => (settled = true);
      void run.done.then(settle, settle);
      await eventually(
        async () =>
          (
            await admin.query<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = ${key} AND NOT granted`,
            )
          ).rows[0]!.n === 1,
        'the step behind the answer to wait on the lock',
      );
      expect(settled).toBe(false);
      await admin.query(`SELECT pg_advisory_unlock(${key})`);
      expect(await run.done).toBeUndefined();
    } finally {
      await admin.query('SELECT pg_advisory_unlock_all()');
      await client.end();
    }
    // without the Flush the answer never comes while the lock is held: the test fails on its timeout
  }, 20_000);

  it('parses a table page once a connection: seen before, it is bound and executed alone — parsed again after a sql_query’s reset deallocated it', async () => {
    const dialect = dialectAs(true);
    const table = (await dialect.introspect()).find((t) => t.name === 't')!;
    const page = async (): Promise<unknown> =>
      (await dialect.rowsPage(table, undefined, { limit: 10, maxBytes: 1 << 20 })).rows;
    const first = await chunksOf(dialect, page);
    expect(types(first)).toEqual([['P', 'B', 'D', 'E', 'S']]);
    let rows: unknown;
    const again = await chunksOf(dialect, async () => (rows = await page()));
    expect(types(again)).toEqual([['B', 'D', 'E', 'S']]);
    expect(rows).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }]);
    // the reset behind a sql_query ends with DEALLOCATE ALL: the page is parsed anew, not refused
    await dialect.readOnlyQuery('SELECT 1', [], LIMITS);
    const reset = await chunksOf(dialect, async () => (rows = await page()));
    expect(types(reset)).toEqual([['P', 'B', 'D', 'E', 'S']]);
    expect(rows).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }]);
  });

  it('answers a table page whose column changed type under its parsed statement: run again unnamed, on a connection then discarded', async () => {
    await admin.query(
      `CREATE TABLE ${SCHEMA}.retyped (n int); INSERT INTO ${SCHEMA}.retyped VALUES (7)`,
    );
    const dialect = dialectAs(true);
    const table = (await dialect.introspect()).find((t) => t.name === 'retyped')!;
    const page = async (): Promise<unknown> =>
      (await dialect.rowsPage(table, undefined, { limit: 10, maxBytes: 1 << 20 })).rows;
    expect(await page()).toEqual([{ n: 7 }]);
    // the plan parsed for int4 cannot give int8 (0A000, "cached plan must not change result type")
    await admin.query(`ALTER TABLE ${SCHEMA}.retyped ALTER COLUMN n TYPE bigint`);
    const retried = await chunksOf(dialect, async () => expect(await page()).toEqual([{ n: 7 }]));
    // the named statement refused, the same text unnamed, then the connection closed (Terminate)
    expect(types(retried)).toEqual([['B', 'D', 'E', 'S'], ['P', 'B', 'D', 'E', 'S'], ['X']]);
    // the connection that held the old plan is gone: a new one parses the page and answers at once
    const fresh = await chunksOf(dialect, async () => expect(await page()).toEqual([{ n: 7 }]));
    expect(types(fresh)).toEqual([['P', 'B', 'D', 'E', 'S']]);
  });

  it('runs the statement under the call’s own timeout, set earlier in the same group', async () => {
    // the connection's own timeout is a minute: only the call's (200 ms) stops this statement
    const dialect = dialectAs(true, undefined, 60_000);
    // its shape learnt first: then the settings and the statement travel in one group
    const sleep = 'SELECT pg_catalog.pg_sleep($1::float8)';
    await dialect.readOnlyQuery(sleep, [0], LIMITS);
    const error = await rejection(
      dialect.readOnlyQuery(sleep, [30], { ...LIMITS, timeoutMs: 200 }),
    );
    expect((error as { kind?: string }).kind).toBe('timeout');
    expect((await dialect.readOnlyQuery('SELECT 1', [], LIMITS)).rows).toEqual([[1]]);
  });

  it('learns a new statement’s shape in the transaction’s first write, then sends the statement with the reset', async () => {
    const dialect = dialectAs(true);
    const chunks = await chunksOf(dialect, () =>
      dialect.readOnlyQuery('SELECT id, id * 2 AS twice FROM t ORDER BY id', [], LIMITS),
    );
    expect(types(chunks)).toEqual([
      [...RUN, ...RUN, ...READ, 'S'],
      [...READ, 'H', ...RESET, 'S'],
    ]);
    expect(chunks[0]![6]!.text).toMatch(/LIMIT 0$/);
  });

  it('never runs the statement of a refused role: the server skips it, sent in the same write', async () => {
    // the statement would terminate the victim: it does when the role is allowed...
    await admin.query(`GRANT pg_signal_backend TO ${ROLE}`);
    try {
      const first = await victim();
      const allowed = dialectAs(true, roleUrl);
      expect((await allowed.readOnlyQuery(terminate(first.pid), [], LIMITS)).rows).toEqual([
        [true],
      ]);
      expect(await alive(first.client)).toBe(false);
      // ...and does not when the check refuses it (a privileged membership)
      const second = await victim();
      const checked = dialectAs(false, roleUrl);
      let error: unknown;
      const chunks = await chunksOf(checked, async () => {
        error = await rejection(checked.readOnlyQuery(terminate(second.pid), [], LIMITS));
      });
      expect((error as Error).message).toMatch(
        new RegExp(`will not run as role ${ROLE} \\(pg_signal_backend\\)`),
      );
      expect(chunks[0]!.some((m) => m.text.includes(terminate(second.pid)))).toBe(true);
      expect(await alive(second.client)).toBe(true);
    } finally {
      await admin.query(`REVOKE pg_signal_backend FROM ${ROLE}`);
    }
  });

  it('never runs the statement of a role whose write-grant scan the server found write grants in', async () => {
    await admin.query(`GRANT INSERT ON ${SCHEMA}.t TO ${ROLE}`);
    try {
      const target = await victim();
      const checked = dialectAs(false, roleUrl);
      const error = await rejection(checked.readOnlyQuery(terminate(target.pid), [], LIMITS));
      expect((error as Error).message).toContain(`(write grants on ${SCHEMA}.t)`);
      expect(await alive(target.client)).toBe(true);
      // the scan is kept: the next call is refused before anything is sent
      const from = proxy.chunks.length;
      const again = await rejection(checked.readOnlyQuery(terminate(target.pid), [], LIMITS));
      expect((again as Error).message).toContain(`(write grants on ${SCHEMA}.t)`);
      expect(
        proxy.chunks
          .slice(from)
          .flat()
          .some((m) => m.text.includes('terminate')),
      ).toBe(false);
      expect(await alive(target.client)).toBe(true);
    } finally {
      await admin.query(`REVOKE INSERT ON ${SCHEMA}.t FROM ${ROLE}`);
    }
  });

  it('never runs the statement when its transaction did not begin', async () => {
    const target = await victim();
    const dialect = dialectAs(true);
    proxy.spoilBegin = true;
    let chunks: Sent[][];
    try {
      chunks = await chunksOf(dialect, async () => {
        const error = await rejection(dialect.readOnlyQuery(terminate(target.pid), [], LIMITS));
        expect((error as Error).message).toMatch(/at or near "ONLX"/);
      });
    } finally {
      proxy.spoilBegin = false;
    }
    // the statement went out behind the spoilt start, and the server skipped it
    expect(chunks[0]!.some((m) => m.text.includes(terminate(target.pid)))).toBe(true);
    expect(await alive(target.client)).toBe(true);
    // and the connection serves the next call in a transaction of its own
    const next = await dialect.readOnlyQuery(
      "SELECT current_setting('transaction_read_only'), current_setting('statement_timeout')",
      [],
      LIMITS,
    );
    expect(next.rows).toEqual([['on', '2s']]);
  });

  it('ends the transaction of a failed statement on its own, leaving the connection clean', async () => {
    const dialect = dialectAs(true);
    // the lock outlives a ROLLBACK: only the reset releases it
    const failing = 'SELECT pg_catalog.pg_advisory_lock(4343), 1 / (SELECT count(*) - 3 FROM t)';
    await rejection(dialect.readOnlyQuery(failing, [], LIMITS)); // its shape learnt, then it fails
    let error: unknown;
    const chunks = await chunksOf(dialect, async () => {
      error = await rejection(dialect.readOnlyQuery(failing, [], LIMITS));
    });
    expect((error as Error).message).toMatch(/division by zero/);
    // the group stopped at the statement (the reset behind it skipped), then the reset alone
    expect(types(chunks)).toEqual([[...RUN, ...RUN, ...READ, 'H', ...RESET, 'S'], ['Q']]);
    expect(chunks[1]![0]!.text).toMatch(/^ROLLBACK; /);
    const lock = await admin.query<{ got: boolean }>('SELECT pg_try_advisory_lock(4343) AS got');
    expect(lock.rows[0]!.got).toBe(true);
    await admin.query('SELECT pg_advisory_unlock(4343)');
    expect((await dialect.readOnlyQuery('SELECT id FROM t ORDER BY id', [], LIMITS)).rows).toEqual([
      [1],
      [2],
      [3],
    ]);
  });
});
