/**
 * SQL table pages: the SQL provider's `read` of a 100-row keyset page, in-process (the provider as
 * built in dist/, no transport), one read in flight.
 *
 *   - SQLite: a 100,000-row table in .bench/sql/bench.db (built once, reused): pages/s at random
 *     positions.
 *   - PostgreSQL (RESERVOIR_TEST_PG; skipped with a message when unset): a 1,000,000-row table in the
 *     dedicated schema reservoir_bench (created once, reused when present): pages/s at random
 *     positions, and p50/p99 of the page at page 1 and at page 5,000 (keyset, `WHERE id > $1 ORDER BY
 *     id LIMIT`, never OFFSET) — target p99 ≤ 20 ms at both — with OFFSET at page 5,000 shown beside
 *     it for contrast.
 *
 * Usage: npm run build && node bench/sections/sql.mjs   (or as a bench section)
 */
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { fmtInt, fmtMs, percentile, printTable } from '../lib/stats.mjs';
import { loadSqliteDriver } from '../../dist/core/sqlite-driver.js';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '../..');
const require = createRequire(import.meta.url);
const SQLITE_ROWS = 100_000;
const PG_ROWS = 1_000_000;
const PAGE = 100;
const DEEP_PAGE = 5000;
const SAMPLES = 400;
const TARGET_P99_MS = 20;
const BENCH_SCHEMA = 'reservoir_bench';

export async function sqlSection(ctx = {}) {
  const progress = ctx.progress ?? ((text) => process.stderr.write(`${text}\n`));
  const target = ctx.target ?? (() => undefined);
  const benchDir = ctx.paths?.benchDir ?? join(repoRoot, '.bench');
  const seconds = (ctx.opts?.readMs ?? 1500) / 1000;
  const dist = join(ctx.paths?.repo ?? repoRoot, 'dist/providers/sql');
  const { sqlProvider } = await import(pathToFileURL(join(dist, 'index.js')).href);
  const { encodeKey } = await import(pathToFileURL(join(dist, 'dialect.js')).href);
  const signal = new AbortController().signal;
  const rows = [];

  // SQLite
  const file = sqliteFixture(join(benchDir, 'sql'));
  progress(`sql: SQLite table ${file.reused ? 'reused' : 'built'} (${fmtInt(SQLITE_ROWS)} rows)`);
  const lite = sqlProvider({ path: file.path, name: 'bench' });
  try {
    const rate = await pagesPerSecond(
      lite,
      'db://bench/tables/items/rows',
      SQLITE_ROWS,
      encodeKey,
      seconds,
      signal,
    );
    rows.push(['SQLite', `random ${PAGE}-row pages`, `${fmtInt(rate)} pages/s`, '', '']);
  } finally {
    await lite.close();
  }

  // PostgreSQL
  const url = process.env.RESERVOIR_TEST_PG;
  if (url === undefined || url === '') {
    console.log(
      '\nsql: RESERVOIR_TEST_PG is not set: the PostgreSQL rows are skipped (e.g. RESERVOIR_TEST_PG=postgres://postgres@127.0.0.1:5432/test).',
    );
  } else {
    const built = await pgFixture(url);
    progress(
      `sql: PostgreSQL table ${built ? 'built' : 'reused'} (${fmtInt(PG_ROWS)} rows in ${BENCH_SCHEMA})`,
    );
    const pgp = sqlProvider({ url, schema: BENCH_SCHEMA, name: 'pgbench', maxRows: 1000 });
    try {
      const base = 'db://pgbench/tables/items/rows';
      const rate = await pagesPerSecond(pgp, base, PG_ROWS, encodeKey, seconds, signal);
      rows.push(['PostgreSQL', `random ${PAGE}-row pages`, `${fmtInt(rate)} pages/s`, '', '']);
      const first = await latencies(pgp, base, signal);
      const deep = await latencies(
        pgp,
        `${base}?after=${encodeKey([(DEEP_PAGE - 1) * PAGE])}`,
        signal,
        (DEEP_PAGE - 1) * PAGE + 1,
      );
      rows.push([
        'PostgreSQL',
        'page 1 (keyset)',
        '',
        fmtMs(percentile(first, 50)),
        fmtMs(percentile(first, 99)),
      ]);
      rows.push([
        'PostgreSQL',
        `page ${fmtInt(DEEP_PAGE)} (keyset)`,
        '',
        fmtMs(percentile(deep, 50)),
        fmtMs(percentile(deep, 99)),
      ]);
      const offset = await offsetLatencies(url);
      rows.push([
        'PostgreSQL',
        `page ${fmtInt(DEEP_PAGE)} by OFFSET (contrast, raw pg)`,
        '',
        fmtMs(percentile(offset, 50)),
        fmtMs(percentile(offset, 99)),
      ]);
      const p99First = percentile(first, 99);
      const p99Deep = percentile(deep, 99);
      target(
        `sql: PostgreSQL page 1 p99 ≤ ${TARGET_P99_MS} ms`,
        fmtMs(p99First),
        p99First <= TARGET_P99_MS,
      );
      target(
        `sql: PostgreSQL page ${DEEP_PAGE} p99 ≤ ${TARGET_P99_MS} ms`,
        fmtMs(p99Deep),
        p99Deep <= TARGET_P99_MS,
      );
    } finally {
      await pgp.close();
    }
  }
  printTable(
    `SQL table pages (provider read, in-process, one in flight, ${PAGE} rows a page)`,
    ['database', 'page', 'throughput', 'p50', 'p99'],
    rows,
  );
}

async function pagesPerSecond(provider, base, total, encodeKey, seconds, signal) {
  let n = 0;
  let i = 0;
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  while (performance.now() < deadline) {
    const after = ((i * 7919) % (total / PAGE - 1)) * PAGE;
    i += 1;
    const uri = after === 0 ? base : `${base}?after=${encodeKey([after])}`;
    const result = await provider.read(uri, { signal });
    const doc = JSON.parse(result.contents[0].text);
    if (doc.rows.length !== PAGE || doc.rows[0].id !== after + 1)
      throw new Error(`${uri}: wrong page`);
    n += 1;
  }
  return n / ((performance.now() - started) / 1000);
}

async function latencies(provider, uri, signal, firstId = 1) {
  const samples = [];
  for (let i = 0; i < SAMPLES + 40; i += 1) {
    const t = performance.now();
    const result = await provider.read(uri, { signal });
    const elapsed = performance.now() - t;
    const doc = JSON.parse(result.contents[0].text);
    if (doc.rows.length !== PAGE || doc.rows[0].id !== firstId)
      throw new Error(`${uri}: wrong page`);
    if (i >= 40) samples.push(elapsed);
  }
  return samples;
}

async function offsetLatencies(url) {
  const pg = require('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const samples = [];
    for (let i = 0; i < 30; i += 1) {
      const t = performance.now();
      await client.query({
        text: `SELECT * FROM ${BENCH_SCHEMA}.items ORDER BY id LIMIT $1 OFFSET $2`,
        values: [PAGE, (DEEP_PAGE - 1) * PAGE],
      });
      if (i >= 5) samples.push(performance.now() - t);
    }
    return samples;
  } finally {
    await client.end();
  }
}

function sqliteFixture(dir) {
  const path = join(dir, 'bench.db');
  if (existsSync(path)) return { path, reused: true };
  mkdirSync(dir, { recursive: true });
  const Database = loadSqliteDriver(); // this runtime's better-sqlite3 build
  const tmp = `${path}.tmp`;
  rmSync(tmp, { force: true });
  const db = new Database(tmp);
  db.exec(
    'CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, value INTEGER, created TEXT)',
  );
  const insert = db.prepare('INSERT INTO items VALUES (?, ?, ?, ?)');
  db.transaction(() => {
    for (let i = 1; i <= SQLITE_ROWS; i += 1)
      insert.run(i, `item ${i}`, (i * 37) % 1000, '2024-05-01T00:00:00Z');
  })();
  db.close();
  renameSync(tmp, path);
  return { path, reused: false };
}

/** Creates reservoir_bench.items with PG_ROWS rows unless a complete one is there; true when built. */
async function pgFixture(url) {
  const pg = require('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const present = await client.query(
      `SELECT (SELECT count(*) FROM pg_tables WHERE schemaname = $1 AND tablename = 'items') AS t`,
      [BENCH_SCHEMA],
    );
    if (Number(present.rows[0].t) === 1) {
      const count = await client.query(`SELECT max(id) AS m FROM ${BENCH_SCHEMA}.items`);
      if (Number(count.rows[0].m) === PG_ROWS) return false;
    }
    await client.query(`DROP SCHEMA IF EXISTS ${BENCH_SCHEMA} CASCADE`);
    await client.query(`CREATE SCHEMA ${BENCH_SCHEMA}`);
    await client.query(
      `CREATE TABLE ${BENCH_SCHEMA}.items (id bigint PRIMARY KEY, name text NOT NULL, value int, created timestamptz)`,
    );
    await client.query(
      `INSERT INTO ${BENCH_SCHEMA}.items SELECT i, 'item ' || i, (i * 37) % 1000, '2024-05-01'::timestamptz + i * interval '1 second' FROM generate_series(1, ${PG_ROWS}) i`,
    );
    await client.query(`VACUUM ANALYZE ${BENCH_SCHEMA}.items`);
    return true;
  } finally {
    await client.end();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await sqlSection();
}
