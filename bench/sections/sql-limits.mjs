/**
 * SQL limits (issue #11): what one `sql_query` call can cost the server, and how fast a cancel stops
 * the database's work.
 *
 *   - Peak RSS: the real server (`reservoir serve --config`, stdio) with a PostgreSQL source
 *     (RESERVOIR_TEST_PG) and a SQLite source, default `maxResultBytes` (4 MiB). After a warm-up
 *     call, each `sql_query` call whose result hits the cap — a 300 MB value made by the server, rows
 *     that pass the byte budget — and the server's VmHWM (peak RSS) after it. Target: peak ≤ 4 × the
 *     cap + 150 MB.
 *   - Cancel → work stopped: the provider in-process; a statement that would run for minutes, the
 *     call aborted once it runs, then the time until the PostgreSQL backend leaves the `active`
 *     state (pg_stat_activity) / the SQLite query process is gone, and how long the next call takes.
 *     Target: ≤ 100 ms.
 *
 * Usage: npm run build && node bench/sections/sql-limits.mjs   (or npm run bench -- --only sql-limits)
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { memoryOf } from '../lib/proc.mjs';
import { StdioRpc } from '../lib/stdio-client.mjs';
import { fmtMB, fmtMs, median, printTable } from '../lib/stats.mjs';
import { loadSqliteDriver } from '../../dist/core/sqlite-driver.js';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '../..');
const require = createRequire(import.meta.url);
const CAP = 4 * 1024 * 1024;
const TARGET_PEAK = 4 * CAP + 150 * 1024 * 1024;
const TARGET_CANCEL_MS = 100;
const REPS = 5;
const HEAVY_PG = 'SELECT count(*) FROM generate_series(1, 100000) a, generate_series(1, 100000) b';
const ENDLESS_SQLITE =
  'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c';

export async function sqlLimitsSection(ctx = {}) {
  const progress = ctx.progress ?? ((text) => process.stderr.write(`${text}\n`));
  const target = ctx.target ?? (() => undefined);
  const repo = ctx.paths?.repo ?? repoRoot;
  const url = process.env.RESERVOIR_TEST_PG;
  const hasPg = url !== undefined && url !== '';
  if (!hasPg)
    console.log('\nsql-limits: RESERVOIR_TEST_PG is not set: the PostgreSQL rows are skipped.');
  const dir = join(tmpdir(), `reservoir-bench-sql-limits-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  try {
    const path = sqliteFixture(dir);
    const app = `reservoir_bench_limits_${process.pid}`;
    const pgUrl = hasPg ? withAppName(url, app) : undefined;

    // Peak RSS of the real server.
    progress('sql-limits: peak RSS of one capped sql_query call, real server over stdio');
    const sources = [
      { type: 'sql', path, name: 'lite', queryTool: true, statementTimeoutMs: 60_000 },
    ];
    if (pgUrl !== undefined)
      sources.push({
        type: 'sql',
        url: pgUrl,
        name: 'pg',
        queryTool: true,
        allowPrivilegedRole: true,
        statementTimeoutMs: 60_000,
      });
    const config = join(dir, 'reservoir.json');
    writeFileSync(config, JSON.stringify({ sources }));
    const server = new StdioRpc(process.execPath, [
      join(repo, 'dist/cli/index.js'),
      'serve',
      '--config',
      config,
      '--log-level',
      'warn',
    ]);
    const memory = [];
    try {
      await server.initialize();
      const tool = async (name, sql) =>
        server.request('tools/call', { name, arguments: { sql } }, 120_000);
      await tool('sql_query_lite', 'SELECT 1');
      if (pgUrl !== undefined) await tool('sql_query_pg', 'SELECT 1');
      const base = memoryOf(server.pid).hwm;
      memory.push(['after warm-up', '', fmtMB(base)]);
      const cases = [
        [
          'SQLite: 20,000 rows of 64 KiB (budget spent)',
          'sql_query_lite',
          'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000) SELECT i, randomblob(65536) FROM n',
        ],
        ['SQLite: one 300 MB value', 'sql_query_lite', 'SELECT zeroblob(300 * 1024 * 1024) AS big'],
      ];
      if (pgUrl !== undefined) {
        cases.push([
          'PostgreSQL: 1,000 rows of 1 MiB (budget spent)',
          'sql_query_pg',
          "SELECT i, repeat('x', 1024 * 1024) FROM generate_series(1, 1000) i",
        ]);
        cases.push([
          'PostgreSQL: one 300 MB value',
          'sql_query_pg',
          "SELECT repeat('x', 300 * 1024 * 1024) AS big",
        ]);
      }
      for (const [label, name, sql] of cases) {
        const result = await tool(name, sql);
        const text = result.content?.[0]?.text ?? '';
        const outcome =
          result.isError === true
            ? `isError: ${text.slice(0, 60)}…`
            : `${result.structuredContent?.rowCount} rows, truncated ${result.structuredContent?.truncated}`;
        memory.push([label, outcome, fmtMB(memoryOf(server.pid).hwm)]);
      }
      const peak = memoryOf(server.pid).hwm;
      target(
        `sql-limits: peak server RSS over one capped sql_query ≤ 4 × cap + 150 MB (${fmtMB(TARGET_PEAK)})`,
        fmtMB(peak),
        peak <= TARGET_PEAK,
      );
    } finally {
      await server.close();
    }
    printTable(
      `Peak server RSS (VmHWM) after each sql_query call, result cap ${fmtMB(CAP)}`,
      ['call', 'answer', 'peak RSS so far'],
      memory,
    );

    // Cancel → work stopped.
    progress('sql-limits: cancel → database work stopped');
    const { sqlProvider } = await import(
      pathToFileURL(join(repo, 'dist/providers/sql/index.js')).href
    );
    const rows = [];
    const lite = sqlProvider({ path, name: 'lite', statementTimeoutMs: 60_000 });
    try {
      await lite.query('SELECT 1');
      const stopped = [];
      const next = [];
      for (let i = 0; i < REPS; i += 1) {
        const controller = new AbortController();
        const call = lite
          .query(ENDLESS_SQLITE, [], { signal: controller.signal })
          .catch(() => undefined);
        const busy = await runningChild(path);
        const t0 = performance.now();
        controller.abort();
        await call;
        while (alive(busy)) await new Promise((r) => setImmediate(r));
        stopped.push(performance.now() - t0);
        const t1 = performance.now();
        await lite.query('SELECT 1');
        next.push(performance.now() - t1);
      }
      rows.push([
        'SQLite (query process killed)',
        fmtMs(median(stopped)),
        fmtMs(Math.max(...stopped)),
        fmtMs(median(next)),
      ]);
      target(
        `sql-limits: SQLite cancel → work stopped ≤ ${TARGET_CANCEL_MS} ms (median)`,
        fmtMs(median(stopped)),
        median(stopped) <= TARGET_CANCEL_MS,
      );
    } finally {
      await lite.close();
    }
    if (pgUrl !== undefined) {
      const pg = require('pg');
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      const pgp = sqlProvider({
        url: pgUrl,
        name: 'pg',
        allowPrivilegedRole: true,
        statementTimeoutMs: 60_000,
      });
      const active = async () =>
        (
          await admin.query({
            text: "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND state = 'active'",
            values: [app],
          })
        ).rows[0].n;
      try {
        await pgp.query('SELECT 1');
        const stopped = [];
        const next = [];
        for (let i = 0; i < REPS; i += 1) {
          const controller = new AbortController();
          const call = pgp
            .query(HEAVY_PG, [], { signal: controller.signal })
            .catch(() => undefined);
          while ((await active()) === 0) await new Promise((r) => setTimeout(r, 5));
          const t0 = performance.now();
          controller.abort();
          await call;
          while ((await active()) > 0);
          stopped.push(performance.now() - t0);
          const t1 = performance.now();
          await pgp.query('SELECT 1');
          next.push(performance.now() - t1);
        }
        rows.push([
          'PostgreSQL (cancel request; backend leaves active)',
          fmtMs(median(stopped)),
          fmtMs(Math.max(...stopped)),
          fmtMs(median(next)),
        ]);
        target(
          `sql-limits: PostgreSQL cancel → work stopped ≤ ${TARGET_CANCEL_MS} ms (median)`,
          fmtMs(median(stopped)),
          median(stopped) <= TARGET_CANCEL_MS,
        );
      } finally {
        await pgp.close();
        await admin.end();
      }
    }
    printTable(
      `Cancel → database work stopped (${REPS} cancels each)`,
      ['database', 'median', 'max', 'next call, median'],
      rows,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function withAppName(url, name) {
  const u = new URL(url);
  u.searchParams.set('application_name', name);
  return u.href;
}

function sqliteFixture(dir) {
  const path = join(dir, 'limits.db');
  if (existsSync(path)) return path;
  const Database = loadSqliteDriver(); // this runtime's better-sqlite3 build
  const db = new Database(path);
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY)');
  db.close();
  return path;
}

/** The pid of this process's SQLite query process for `path` once it has burnt 0.2 s of CPU on the statement. */
async function runningChild(path) {
  const deadline = Date.now() + 15_000;
  const first = new Map();
  while (Date.now() < deadline) {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        if (!readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').includes(path)) continue;
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        if (Number(fields[1]) !== process.pid) continue;
        const ticks = Number(fields[11]) + Number(fields[12]);
        if (!first.has(entry)) first.set(entry, ticks);
        else if (ticks > first.get(entry) + 20) return Number(entry);
      } catch {
        // gone while we looked
      }
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('the SQLite query process never ran the statement');
}

function alive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await sqlLimitsSection();
}
