// Pins issue #11's SQL limits through the real SDK client, in both protocol eras, over in-process
// stdio and a real HTTP socket: one `sql_query` call cannot exhaust the server (a 40 MB value is a
// clear isError result and the server's RSS stays near the result cap; rows past the byte budget are
// left out and the result marked truncated; a table page ends before a row over the cap, and that
// row reads as -32010 with its size), PostgreSQL calls share a capped pool (30 concurrent
// calls never hold more backends than pool.max), and `notifications/cancelled` stops the work in the
// database (the PostgreSQL backend of a tool call or of a pg_sleep(30) named-query read leaves the
// active state; the SQLite query process is killed) while the next call answers. "Stopped" is told
// apart from "finished on its own" by the statement: each would run past its statement timeout
// (20 s, 40 s, 30 s), and the test waits at most CANCELLED_WITHIN_MS for it to stop.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ProtocolError, type Client } from '@modelcontextprotocol/client';
import { loadSqliteDriver } from '../../src/core/sqlite-driver.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectHttp, ERAS, type Era } from '../helpers/clients.js';
import { removeDir, tempDir } from '../providers/helpers.js';
import { eventually } from '../helpers/eventually.js';
import { PG_URL } from '../providers/sql-helpers.js';
import { connectInProcess } from '../subscriptions/harness.js';
import { sqlProvider } from '../../src/providers/sql/index.js';
import { sqlQueryTool } from '../../src/providers/sql/tool.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';

const Database = loadSqliteDriver();

const CAP = 1024 * 1024;
const POOL_MAX = 3;
/** Below every statement timeout here, so a statement gone by then was stopped, not finished. */
const CANCELLED_WITHIN_MS = 15_000;
/** The value over the cap: larger than the RSS slack below, so a server holding it would show. */
const BIG_MB = 40;
const APP = `reservoir_limits_${process.pid}_${Date.now().toString(36)}`;
const HEAVY_PG = 'SELECT count(*) FROM generate_series(1, 100000) a, generate_series(1, 100000) b';
const ENDLESS_SQLITE =
  'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c';

type Transport = 'stdio' | 'http';
const CASES: [Transport, Era][] = (['stdio', 'http'] as const).flatMap((t) =>
  ERAS.map((e): [Transport, Era] => [t, e]),
);

interface ToolAnswer {
  isError?: boolean;
  content: { type: string; text?: string }[];
  structuredContent?: { rows: unknown[][]; rowCount: number; truncated: boolean };
}

const textOf = (answer: ToolAnswer): string => answer.content.map((c) => c.text ?? '').join('\n');

async function call(
  client: Client,
  name: string,
  sql: string,
  params: unknown[] = [],
  signal?: AbortSignal,
): Promise<ToolAnswer> {
  return (await client.callTool(
    { name, arguments: { sql, params } },
    signal === undefined ? {} : { signal },
  )) as ToolAnswer;
}

/** The SQLite query processes this test process started for `path`, with their scheduler state. */
function queryProcesses(
  path: string,
): { pid: number; running: boolean; started: number; cpuTicks: number }[] {
  const found: { pid: number; running: boolean; started: number; cpuTicks: number }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (!cmdline.split('\0').includes(path)) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) !== process.pid) continue;
      found.push({
        pid: Number(entry),
        running: fields[0] === 'R',
        started: Number(fields[19]),
        cpuTicks: Number(fields[11]) + Number(fields[12]),
      });
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}

let dir: string;
let path: string;
let admin: pg.Client | undefined;

beforeAll(async () => {
  dir = tempDir('reservoir-sql-limits-');
  path = join(dir, 'limits.db');
  const db = new Database(path);
  db.exec(
    "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('short'), (printf('%.*c', 20000000, 'x')), ('after');",
  );
  db.close();
  if (PG_URL !== undefined && PG_URL !== '') {
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
  }
});

afterAll(async () => {
  await admin?.end();
  removeDir(dir);
});

describe.each(CASES)('sql limits over %s (%s era)', (transport, era) => {
  let reservoir: Reservoir;
  let client: Client;
  let close: () => Promise<void>;

  beforeAll(async () => {
    const lite = sqlProvider({
      path,
      name: 'lite',
      queryTool: true,
      maxResultBytes: CAP,
      statementTimeoutMs: 20_000,
    });
    const tools = [sqlQueryTool(lite)];
    const providers = [lite];
    if (admin !== undefined) {
      const url = new URL(PG_URL!);
      url.searchParams.set('application_name', APP);
      // The test role is the server's superuser: allowPrivilegedRole lets sql_query run as it.
      const pgp = sqlProvider({
        url: url.href,
        name: 'pg',
        queryTool: true,
        maxResultBytes: CAP,
        statementTimeoutMs: 40_000,
        pool: { max: POOL_MAX },
        allowPrivilegedRole: true,
        queries: { nap: { sql: 'SELECT pg_sleep(30) IS NULL AS slept' } },
      });
      providers.push(pgp);
      tools.push(sqlQueryTool(pgp));
    }
    reservoir = createReservoir({ providers, tools });
    if (transport === 'stdio') {
      const connection = await connectInProcess(reservoir, era);
      client = connection.client;
      close = () => connection.close();
    } else {
      const endpoint = await reservoir.listen({ port: 0 });
      const connection = await connectHttp(era, endpoint.url);
      client = connection.client;
      close = () => connection.close();
    }
  });

  afterAll(async () => {
    await close?.();
    await reservoir?.close();
  });

  it('answers a SQLite value over the result cap with an isError result naming the cap, and marks a budget-cut result truncated', async () => {
    const big = await call(client, 'sql_query_lite', 'SELECT body FROM notes WHERE id = 2');
    expect(big.isError).toBe(true);
    expect(textOf(big)).toMatch(/row 1 .* holds 20000000 bytes, over the 1048576-byte result cap/);
    const cut = await call(
      client,
      'sql_query_lite',
      'SELECT id, length(body) FROM notes UNION ALL SELECT id, body FROM notes ORDER BY 1',
    );
    expect(cut.isError).toBeFalsy();
    expect(cut.structuredContent?.truncated).toBe(true);
    expect(cut.structuredContent?.rows).toEqual([
      [1, 5],
      [1, 'short'],
      [2, 20000000],
    ]);
    expect(textOf(cut)).toContain('truncated at the row or size cap');
  });

  it('ends a table page before a row over the cap, and answers reading that row with -32010 carrying its size', async () => {
    const first = await client.readResource({ uri: 'db://lite/tables/notes/rows' });
    const page = JSON.parse((first.contents[0] as { text: string }).text) as {
      rows: { id: number }[];
      next: string | null;
    };
    expect(page.rows.map((r) => r.id)).toEqual([1]);
    expect(page.next).not.toBeNull();
    const error = await client.readResource({ uri: page.next! }).then(
      () => undefined,
      (e: unknown) => e as ProtocolError,
    );
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error!.code).toBe(-32010);
    expect(error!.data).toMatchObject({ size: 20000001, limit: CAP, measure: 'row' });
  });

  it('stops a cancelled SQLite statement by killing its query process, and answers the next call at once', async () => {
    expect((await call(client, 'sql_query_lite', 'SELECT 1')).structuredContent?.rows).toEqual([
      [1],
    ]); // the query process is up, idle
    // The statement runs in the oldest query process; a younger one is a spare started beside it.
    const oldest = (): { pid: number; cpuTicks: number } | undefined =>
      queryProcesses(path).sort((a, b) => a.started - b.started)[0];
    const idle = oldest()!;
    const controller = new AbortController();
    const pending = call(client, 'sql_query_lite', ENDLESS_SQLITE, [], controller.signal).then(
      () => 'answered',
      () => 'cancelled',
    );
    // Running: the process that answered SELECT 1 has burnt a further 0.2 s of CPU.
    await eventually(
      () => (oldest()?.cpuTicks ?? 0) > idle.cpuTicks + 20,
      'the query process to run the statement',
      { deadlineMs: 15_000 },
    );
    const busy = [idle.pid];
    controller.abort();
    expect(await pending).toBe('cancelled');
    await eventually(
      () => !queryProcesses(path).some((p) => busy.includes(p.pid)),
      'the busy query process to be killed',
      { deadlineMs: CANCELLED_WITHIN_MS },
    );
    const next = await call(client, 'sql_query_lite', 'SELECT count(*) FROM notes');
    expect(next.structuredContent?.rows).toEqual([[3]]);
  });

  describe.skipIf(PG_URL === undefined || PG_URL === '')('on PostgreSQL', () => {
    const backends = async (state?: string): Promise<number> =>
      (
        await admin!.query<{ n: number }>({
          text: `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 ${state === undefined ? '' : 'AND state = $2'}`,
          values: state === undefined ? [APP] : [APP, state],
        })
      ).rows[0]!.n;

    it('answers a value of tens of MB with an isError result naming the cap while the server RSS stays near the cap', async () => {
      // The database computes the whole value; the server is told its size, never sent it. Holding
      // it would raise the RSS by BIG_MB or more; routing noise measured 2–10 MB.
      let peak = process.memoryUsage().rss;
      const base = peak;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
      try {
        const big = await call(
          client,
          'sql_query_pg',
          `SELECT 1 AS n, repeat('x', ${BIG_MB} * 1024 * 1024) AS big`,
        );
        expect(big.isError).toBe(true);
        expect(textOf(big)).toContain(
          `holds ${BIG_MB * 1024 * 1024 + 1} bytes, over the 1048576-byte result cap`,
        );
        const cut = await call(
          client,
          'sql_query_pg',
          "SELECT i, repeat('y', 300 * 1024) FROM generate_series(1, 10) i",
        );
        expect(cut.structuredContent?.rowCount).toBe(3);
        expect(cut.structuredContent?.truncated).toBe(true);
      } finally {
        clearInterval(sampler);
      }
      expect(peak - base).toBeLessThan(4 * CAP + (BIG_MB / 2) * 1024 * 1024);
    }); // the database computes the 300 MB value, slowly on a loaded machine

    it(`holds at most pool.max (${POOL_MAX}) backends for 30 concurrent calls`, async () => {
      let most = 0;
      let sampling = true;
      const sampler = (async () => {
        while (sampling) most = Math.max(most, await backends());
      })();
      const answers = await Promise.all(
        Array.from({ length: 30 }, () =>
          call(
            client,
            'sql_query_pg',
            'SELECT pg_backend_pid(), count(*) FROM generate_series(1, 300000)',
          ),
        ),
      );
      sampling = false;
      await sampler;
      expect(answers.every((a) => a.isError !== true)).toBe(true);
      const pids = new Set(answers.map((a) => a.structuredContent!.rows[0]![0]));
      expect(pids.size).toBeLessThanOrEqual(POOL_MAX);
      expect(most).toBeGreaterThan(0);
      expect(most).toBeLessThanOrEqual(POOL_MAX);
    });

    it('cancels the backend of a cancelled call, which leaves the active state at once, and answers the next call', async () => {
      const controller = new AbortController();
      const pending = call(client, 'sql_query_pg', HEAVY_PG, [], controller.signal).then(
        () => 'answered',
        () => 'cancelled',
      );
      const running = async (): Promise<number> =>
        (
          await admin!.query<{ n: number }>({
            text: "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND state = 'active' AND query LIKE '%generate_series(1, 100000) a%'",
            values: [APP],
          })
        ).rows[0]!.n;
      await eventually(running, 'the statement to start', { deadlineMs: 15_000 });
      controller.abort();
      expect(await pending).toBe('cancelled');
      await eventually(
        async () => (await running()) === 0,
        'the backend to stop the cancelled statement',
        { deadlineMs: CANCELLED_WITHIN_MS },
      );
      const next = await call(client, 'sql_query_pg', 'SELECT 41 + 1');
      expect(next.structuredContent?.rows).toEqual([[42]]);
      expect(await backends()).toBeLessThanOrEqual(POOL_MAX);
    });

    it('cancels the pg_sleep(30) backend of a cancelled named-query read', async () => {
      const controller = new AbortController();
      const pending = client
        .readResource({ uri: 'db://pg/queries/nap' }, { signal: controller.signal })
        .then(
          () => 'answered',
          () => 'cancelled',
        );
      const sleeping = async (): Promise<number> =>
        (
          await admin!.query<{ n: number }>({
            text: "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND state = 'active' AND query LIKE '%pg_sleep(30)%'",
            values: [APP],
          })
        ).rows[0]!.n;
      await eventually(sleeping, 'the pg_sleep(30) statement to start', { deadlineMs: 15_000 });
      controller.abort();
      expect(await pending).toBe('cancelled');
      await eventually(
        async () => (await sleeping()) === 0,
        'the pg_sleep(30) backend to stop sleeping',
        { deadlineMs: CANCELLED_WITHIN_MS },
      );
    });
  });
});
