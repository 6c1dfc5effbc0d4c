// sql_query answers through the real SDK client (which checks structuredContent against the tool's
// outputSchema) over the built CLI's stdio pipes are the answers the SDK writes itself. On stdio
// the rows are serialised once and the wire writes the structuredContent's rows from that JSON
// (core/kept-json.ts, mcp/direct/encode.ts); over HTTP the SDK serialises the whole result. So each
// call — rows with quotes, escapes, unicode, bytes, NULLs and numbers, an error, a refused argument,
// the row cap, rows past the byte budget, a row alone over it — must give the same result on
// stdio answered directly (2025 era, plain call), stdio through the SDK's dispatch (2025 era with
// `_meta`; 2026-07-28), and HTTP in both eras; and a stdio answer line is exactly what
// JSON.stringify writes of it. On SQLite, and on PostgreSQL when RESERVOIR_TEST_PG is set.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSqliteDriver } from '../../src/core/sqlite-driver.js';
import { KEEP_ROWS_JSON_FROM } from '../../src/providers/sql/tool.js';
import { ensureBuilt } from '../helpers/build.js';
import {
  Cleanup,
  connectHttp,
  connectStdio,
  spawnHttpServer,
  type Era,
} from '../helpers/clients.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';
import { RawStdio } from '../helpers/wire.js';
import { PG_URL } from '../providers/sql-helpers.js';

const SCHEMA = `reservoir_answers_${process.pid}_${Date.now().toString(36)}`;
const TRICKY = 'héllo — ☃ 𝄞 😀 "quoted" \\back\\ \u0001\u001f \n\r\t \u2028 </script>';
/** Enough rows that their JSON is kept for the answer (KEEP_ROWS_JSON_FROM); the capped ones are not. */
const ROWS = 200;
const SMALL_CAP = 1024;

const cleanup = new Cleanup();
let dir: string;
let config: string;
const databases: Array<{ db: string; sql: Record<string, string> }> = [];

beforeAll(async () => {
  await ensureBuilt();
  dir = makeTempDir('reservoir-sql-answers-');
  cleanup.add(() => removeTree(dir));
  const Database = loadSqliteDriver();
  const lite = new Database(join(dir, 'lite.db'));
  lite.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT, price REAL, data BLOB)');
  const insert = lite.prepare('INSERT INTO items VALUES (?, ?, ?, ?)');
  for (let i = 1; i <= ROWS; i += 1)
    insert.run(i, i % 7 === 0 ? null : `${TRICKY} ${i}`, i / 4, Buffer.from([i, 0, 255]));
  lite.close();
  const sources: Record<string, unknown>[] = [
    { type: 'sql', name: 'lite', path: join(dir, 'lite.db'), queryTool: true },
    {
      type: 'sql',
      name: 'lite_small',
      path: join(dir, 'lite.db'),
      queryTool: true,
      maxResultBytes: SMALL_CAP,
    },
  ];
  databases.push({
    db: 'lite',
    sql: {
      rows: 'SELECT id, label, price, data, NULL AS missing FROM items ORDER BY id',
      big: `SELECT id, printf('%.${SMALL_CAP * 2}c', 'x') AS wide FROM items ORDER BY id`,
      none: 'SELECT id, label FROM items WHERE id < 0',
    },
  });
  if (PG_URL !== undefined && PG_URL !== '') {
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${SCHEMA}`);
    await admin.query(
      `CREATE TABLE ${SCHEMA}.items (id int PRIMARY KEY, label text, price numeric, data bytea, at timestamptz, big bigint)`,
    );
    await admin.query(
      `INSERT INTO ${SCHEMA}.items SELECT i, CASE WHEN i % 7 = 0 THEN NULL ELSE $1 || ' ' || i END, i / 4.0, decode('00ff', 'hex'), '2024-01-01'::timestamptz + i * interval '1 minute', 9007199254740993 + i FROM generate_series(1, ${ROWS}) i`,
      [TRICKY],
    );
    cleanup.add(async () => {
      await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
      await admin.end();
    });
    const pgSource = { type: 'sql', url: PG_URL, schema: SCHEMA, queryTool: true };
    // The test role is the server's superuser: allowPrivilegedRole lets sql_query run as it.
    sources.push(
      { ...pgSource, name: 'pg', allowPrivilegedRole: true },
      { ...pgSource, name: 'pg_small', allowPrivilegedRole: true, maxResultBytes: SMALL_CAP },
    );
    databases.push({
      db: 'pg',
      sql: {
        rows: `SELECT id, label, price, data, at, big, NULL AS missing FROM ${SCHEMA}.items ORDER BY id`,
        big: `SELECT id, repeat('x', ${SMALL_CAP * 2}) AS wide FROM ${SCHEMA}.items ORDER BY id`,
        none: `SELECT id, label FROM ${SCHEMA}.items WHERE id < 0`,
      },
    });
  } else console.log('RESERVOIR_TEST_PG is not set: the PostgreSQL sql_query answers are skipped');
  config = join(dir, 'reservoir.json');
  writeFileSync(config, JSON.stringify({ sources }));
}, 120_000);

afterAll(() => cleanup.run());

type Call = [what: string, tool: string, args: Record<string, unknown>];

function callsFor(db: string, sql: Record<string, string>): Call[] {
  return [
    ['rows', `sql_query_${db}`, { sql: sql['rows']! }],
    ['the row cap', `sql_query_${db}`, { sql: sql['rows']!, maxRows: 5 }],
    ['rows past the byte budget', `sql_query_${db}_small`, { sql: sql['rows']! }],
    ['a row alone over the budget', `sql_query_${db}_small`, { sql: sql['big']! }],
    ['no rows', `sql_query_${db}`, { sql: sql['none']! }],
    ['a refused write', `sql_query_${db}`, { sql: 'DELETE FROM items' }],
    ['a refused argument', `sql_query_${db}`, { sql: 'SELECT 1', maxRows: 0 }],
  ];
}

/** What differs between two runs of one call: its elapsed time. */
function steady(result: unknown): unknown {
  return JSON.parse(
    JSON.stringify(result)
      .replace(/"elapsedMs":[\d.]+/g, '"elapsedMs":0')
      .replace(/, [\d.]+ ms\./g, ', 0 ms.'),
  );
}

async function answers(client: Client, calls: Call[], meta = false): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const [, name, args] of calls)
    out.push(
      steady(
        (await client.callTool({
          name,
          arguments: args,
          ...(meta ? { _meta: {} } : {}),
        })) as CallToolResult,
      ),
    );
  return out;
}

describe('sql_query answers on stdio are the SDK’s', () => {
  it('gives every call the same result on stdio (direct and SDK) and HTTP, in both eras', async () => {
    const http = await spawnHttpServer([], ['--config', config], cleanup);
    for (const { db, sql } of databases) {
      const calls = callsFor(db, sql);
      const results = new Map<string, unknown[]>();
      for (const era of ['2025', '2026'] as Era[]) {
        const stdio = await connectStdio(era, [], ['--config', config], cleanup);
        results.set(`stdio ${era}`, await answers(stdio.client, calls));
        if (era === '2025') results.set('stdio 2025 sdk', await answers(stdio.client, calls, true));
        await stdio.close();
        const viaHttp = await connectHttp(era, http.url, cleanup);
        results.set(`http ${era}`, await answers(viaHttp.client, calls));
        await viaHttp.close();
      }
      const reference = results.get('http 2025')!;
      // The calls reach what they are named for.
      const [rows, capped, budget, alone, none, write, argument] = reference as Array<
        CallToolResult & { structuredContent?: { rowCount: number; truncated: boolean } }
      >;
      expect(rows!.structuredContent).toMatchObject({ rowCount: ROWS, truncated: false });
      expect(JSON.stringify(rows!.structuredContent).length).toBeGreaterThan(KEEP_ROWS_JSON_FROM);
      expect(capped!.structuredContent).toMatchObject({ rowCount: 5, truncated: true });
      expect(budget!.structuredContent!.truncated).toBe(true);
      expect(budget!.structuredContent!.rowCount).toBeGreaterThan(0);
      expect(budget!.structuredContent!.rowCount).toBeLessThan(ROWS);
      expect(none!.structuredContent).toMatchObject({ rowCount: 0, truncated: false });
      for (const failed of [alone, write, argument]) {
        expect(failed!.isError, `${db}: ${JSON.stringify(failed)}`).toBe(true);
        expect(failed!.structuredContent).toBeUndefined();
      }
      expect((alone!.content[0] as { text: string }).text).toMatch(/too large/i);
      // Each era's answers are HTTP's of that era (a 2026-07-28 result adds the server's `_meta`).
      for (const [path, got] of results) {
        const http = results.get(path.includes('2026') ? 'http 2026' : 'http 2025')!;
        for (const [i, [what]] of calls.entries())
          expect(got[i], `${db} ${what}: ${path}`).toEqual(http[i]);
      }
      for (const [i, [what]] of calls.entries()) {
        const { _meta: _, ...modern } = results.get('http 2026')![i] as Record<string, unknown>;
        expect(modern, `${db} ${what}: 2026 without _meta`).toEqual(reference[i]);
      }
    }
  }, 180_000);

  it('writes each stdio answer line as JSON.stringify writes it, at every 2025 revision', async () => {
    for (const revision of ['2024-11-05', '2025-06-18', '2025-11-25']) {
      const server = new RawStdio(['serve', '--config', config, '--log-level', 'warn']);
      cleanup.add(() => server.kill());
      await server.initializeAt(revision);
      for (const { db, sql } of databases)
        for (const [i, [what, name, args]] of callsFor(db, sql).entries())
          for (const meta of [false, true]) {
            const params = meta ? { name, arguments: args, _meta: {} } : { name, arguments: args };
            const line = await server.requestLine('tools/call', `${db}-${i}-${meta}`, params);
            expect(line, `${revision} ${db} ${what}`).toBe(JSON.stringify(JSON.parse(line)));
          }
      await server.end();
    }
  }, 180_000);
});
