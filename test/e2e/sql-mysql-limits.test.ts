// MySQL / MariaDB bounded and cancellable, through the real SDK client over in-process stdio in both
// protocol eras (RESERVOIR_TEST_MYSQL; skipped with a message when unset): `notifications/cancelled`
// of a sql_query call or a named-query read runs KILL QUERY on its connection (the statement leaves
// the processlist); calls share a pool capped at pool.max connections; a connection killed under a
// running call (KILL CONNECTION from another session) answers with an unavailable isError result and
// the next call answers; a result past the byte cap is cut and marked truncated; a table page ends
// before a row over the cap, which reads as -32010 with its size.
import { ProtocolError, type Client } from '@modelcontextprotocol/client';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERAS } from '../helpers/clients.js';
import { MYSQL_URL, mysqlConfigured } from '../providers/sql-helpers.js';
import { connectInProcess } from '../subscriptions/harness.js';
import { sqlProvider } from '../../src/providers/sql/index.js';
import { sqlQueryTool } from '../../src/providers/sql/tool.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';

const CAP = 1024 * 1024;
const POOL_MAX = 3;
const suffix = `${process.pid}_${Date.now().toString(36)}`;
const DB = `reservoir_mysql_l_${suffix}`;
const USER = `reservoir_rl_${suffix}`.slice(0, 32);
const HEAVY = 'SELECT COUNT(*) FROM seq_1_to_100000 a, seq_1_to_100000 b WHERE a.seq + b.seq > 0';

interface ToolAnswer {
  isError?: boolean;
  content: { type: string; text?: string }[];
  structuredContent?: { rows: unknown[][]; rowCount: number; truncated: boolean };
}

const textOf = (answer: ToolAnswer): string => answer.content.map((c) => c.text ?? '').join('\n');

async function call(
  client: Client,
  sql: string,
  params: unknown[] = [],
  signal?: AbortSignal,
): Promise<ToolAnswer> {
  return (await client.callTool(
    { name: 'sql_query_my', arguments: { sql, params } },
    signal === undefined ? {} : { signal },
  )) as ToolAnswer;
}

/** Asks `check` until it holds; fails after 10 s (a statement never seen, or never gone). */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check()))
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
}

describe.skipIf(!mysqlConfigured())('MySQL / MariaDB limits through the SDK client', () => {
  let admin: mysql.Connection;

  /** The user's connections running a statement that contains `text`. */
  const running = async (text: string): Promise<{ id: number }[]> => {
    const [rows] = await admin.query(
      `SELECT ID AS id FROM information_schema.PROCESSLIST WHERE USER = ? AND COMMAND <> 'Sleep' AND INFO LIKE ?`,
      [USER, `%${text}%`],
    );
    return rows as { id: number }[];
  };
  const connections = async (): Promise<number> => {
    const [rows] = await admin.query(
      'SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE USER = ?',
      [USER],
    );
    return Number((rows as { n: number }[])[0]!.n);
  };

  beforeAll(async () => {
    admin = await mysql.createConnection({ uri: MYSQL_URL!, multipleStatements: true });
    await admin.query(`CREATE DATABASE \`${DB}\`; USE \`${DB}\``);
    await admin.query(
      `CREATE TABLE notes (id INT PRIMARY KEY, body LONGTEXT); CREATE USER '${USER}'@'%'; GRANT SELECT ON \`${DB}\`.* TO '${USER}'@'%'`,
    );
    await admin.query(
      `INSERT INTO notes VALUES (1, 'short'), (2, REPEAT('x', 2000000)), (3, 'after')`,
    );
  });

  afterAll(async () => {
    await admin?.query(`DROP DATABASE IF EXISTS \`${DB}\`; DROP USER IF EXISTS '${USER}'@'%'`);
    await admin?.end();
  });

  describe.each(ERAS)('%s era', (era) => {
    let reservoir: Reservoir;
    let client: Client;
    let close: () => Promise<void>;

    beforeAll(async () => {
      const url = new URL(MYSQL_URL!);
      url.pathname = `/${DB}`;
      url.username = USER;
      const my = sqlProvider({
        url: url.href,
        name: 'my',
        queryTool: true,
        maxResultBytes: CAP,
        statementTimeoutMs: 40_000,
        pool: { max: POOL_MAX },
        queries: {
          nap: { sql: 'SELECT SLEEP(30) AS slept' },
          pause: { sql: 'SELECT SLEEP(0.2) AS slept' },
        },
      });
      reservoir = createReservoir({ providers: [my], tools: [sqlQueryTool(my)] });
      const connection = await connectInProcess(reservoir, era);
      client = connection.client;
      close = () => connection.close();
    });

    afterAll(async () => {
      await close?.();
      await reservoir?.close();
    });

    it('kills the statement of a cancelled sql_query call, and answers the next call', async () => {
      const controller = new AbortController();
      const pending = call(client, HEAVY, [], controller.signal).then(
        () => 'answered',
        () => 'cancelled',
      );
      await until(
        async () => (await running('seq_1_to_100000')).length > 0,
        'the statement to run',
      );
      controller.abort();
      expect(await pending).toBe('cancelled');
      await until(
        async () => (await running('seq_1_to_100000')).length === 0,
        'the killed statement to leave the processlist',
      );
      expect((await call(client, 'SELECT COUNT(*) FROM notes')).structuredContent?.rows).toEqual([
        [3],
      ]);
    });

    it('kills the SLEEP(30) of a cancelled named-query read', async () => {
      const controller = new AbortController();
      const pending = client
        .readResource({ uri: 'db://my/queries/nap' }, { signal: controller.signal })
        .then(
          () => 'answered',
          () => 'cancelled',
        );
      await until(async () => (await running('SLEEP(30)')).length > 0, 'the sleep to run');
      controller.abort();
      expect(await pending).toBe('cancelled');
      await until(
        async () => (await running('SLEEP(30)')).length === 0,
        'the killed sleep to leave the processlist',
      );
    });

    it('holds at most pool.max connections while many calls run at once', async () => {
      let peak = 0;
      let done = false;
      const reads = Promise.all(
        Array.from({ length: 12 }, () => client.readResource({ uri: 'db://my/queries/pause' })),
      ).finally(() => (done = true));
      while (!done) peak = Math.max(peak, await connections());
      expect(
        (await reads).every(
          (r) => JSON.parse((r.contents[0] as { text: string }).text).rowCount === 1,
        ),
      ).toBe(true);
      expect(peak).toBeGreaterThan(0);
      expect(peak).toBeLessThanOrEqual(POOL_MAX);
    });

    it('answers unavailable when its connection is killed mid-statement, and the next call answers', async () => {
      const pending = call(client, HEAVY);
      let victims: { id: number }[] = [];
      await until(
        async () => (victims = await running('seq_1_to_100000')).length > 0,
        'the statement to run',
      );
      await admin.query(`KILL CONNECTION ${victims[0]!.id}`);
      const answer = await pending;
      expect(answer.isError).toBe(true);
      expect(textOf(answer)).toMatch(/cannot answer: the connection to the database was lost/);
      expect(textOf(answer)).toContain('try again later');
      expect((await call(client, 'SELECT 41 + 1 AS n')).structuredContent?.rows).toEqual([[42]]);
    });

    it('cuts a result at the byte cap and marks it truncated', async () => {
      const cut = await call(client, "SELECT seq, REPEAT('y', 300 * 1024) FROM seq_1_to_10");
      expect(cut.isError).toBeFalsy();
      expect(cut.structuredContent?.rowCount).toBe(3);
      expect(cut.structuredContent?.truncated).toBe(true);
    });

    it('ends a table page before a row over the cap, and answers reading that row with -32010 carrying its size', async () => {
      const first = await client.readResource({ uri: 'db://my/tables/notes/rows' });
      const page = JSON.parse((first.contents[0] as { text: string }).text) as {
        rows: { id: number }[];
        next: string | null;
      };
      expect(page.rows.map((r) => r.id)).toEqual([1]);
      const error = await client.readResource({ uri: page.next! }).then(
        () => undefined,
        (e: unknown) => e as ProtocolError,
      );
      expect(error).toBeInstanceOf(ProtocolError);
      expect(error!.code).toBe(-32010);
      expect(error!.data).toMatchObject({ size: 2000001, limit: CAP, measure: 'row' });
    });
  });
});
