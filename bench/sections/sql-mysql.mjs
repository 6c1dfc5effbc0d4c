/**
 * MySQL / MariaDB table pages (RESERVOIR_TEST_MYSQL; skipped with a message when unset): the SQL
 * provider's `read` of keyset pages from a 1,000,000-row table in the database reservoir_bench_mysql
 * (created once, reused when complete), in-process (the provider as built in dist/), one read in
 * flight, beside the bare driver (mysql2, one connection) running the same page statement.
 *
 *   - p50/p99 of a 100-row page at page 1 and at page 5,000 (keyset) — target p99 ≤ 10 ms;
 *   - random 100-row pages/s through Reservoir and bare (interleaved), and the ratio — target ≥ 0.8×;
 *   - paging the whole table through `next` links, 1,000 rows a page — target ≥ 50,000 rows/s;
 *   - a row change → `updated` on a watched 1,000-row table, polled every 250 ms — target p99 ≤
 *     one poll interval + 100 ms — by CHECKSUM TABLE on the shared server (log_bin off), and from
 *     the binary log on a mariadbd of the bench's own started with --log-bin (skipped, saying why,
 *     where mariadbd is not installed).
 *
 * Usage: npm run build && RESERVOIR_TEST_MYSQL=mysql://root@127.0.0.1:3306/test node bench/sections/sql-mysql.mjs
 */
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ownMariadb } from '../lib/own-mariadb.mjs';
import { fmtInt, fmtMs, percentile, printTable } from '../lib/stats.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '../..');
const require = createRequire(import.meta.url);
const ROWS = 1_000_000;
const PAGE = 100;
const DEEP_PAGE = 5000;
const SAMPLES = 400;
const TARGET_P99_MS = 10;
const TARGET_ROWS_PER_S = 50_000;
const TARGET_RATIO = 0.8;
const DATABASE = 'reservoir_bench_mysql';
const POLL_MS = 250;
const CHANGES = 20;

export async function sqlMysqlSection(ctx = {}) {
  const progress = ctx.progress ?? ((text) => process.stderr.write(`${text}\n`));
  const target = ctx.target ?? (() => undefined);
  const seconds = (ctx.opts?.readMs ?? 1500) / 1000;
  const url = process.env.RESERVOIR_TEST_MYSQL;
  if (url === undefined || url === '') {
    console.log(
      '\nsql-mysql: RESERVOIR_TEST_MYSQL is not set: the MySQL / MariaDB rows are skipped (e.g. RESERVOIR_TEST_MYSQL=mysql://root@127.0.0.1:3306/test).',
    );
    return;
  }
  const dist = join(ctx.paths?.repo ?? repoRoot, 'dist/providers/sql');
  const { sqlProvider } = await import(pathToFileURL(join(dist, 'index.js')).href);
  const { encodeKey } = await import(pathToFileURL(join(dist, 'dialect.js')).href);
  const mysql = require('mysql2/promise');
  const dbUrl = new URL(url);
  dbUrl.pathname = `/${DATABASE}`;
  const built = await fixture(mysql, url);
  progress(`sql-mysql: table ${built ? 'built' : 'reused'} (${fmtInt(ROWS)} rows in ${DATABASE})`);
  const signal = new AbortController().signal;
  const provider = sqlProvider({ url: dbUrl.href, name: 'mybench', maxRows: 1000 });
  const bare = await mysql.createConnection({
    uri: dbUrl.href,
    supportBigNumbers: true,
    dateStrings: true,
  });
  const rows = [];
  try {
    const base = 'db://mybench/tables/items/rows';
    // Each Reservoir page is followed by the bare driver's same page, so the load on this shared
    // machine shows in both columns alike (a p99 over the target in both is the machine's).
    const [first, bareFirst] = await latencies(provider, bare, base, signal, 0);
    const [deep, bareDeep] = await latencies(
      provider,
      bare,
      `${base}?after=${encodeKey([(DEEP_PAGE - 1) * PAGE])}`,
      signal,
      (DEEP_PAGE - 1) * PAGE,
    );
    rows.push([
      'Reservoir',
      'page 1 (keyset)',
      '',
      fmtMs(percentile(first, 50)),
      fmtMs(percentile(first, 99)),
    ]);
    rows.push([
      'bare mysql2',
      'page 1 (same statement, interleaved)',
      '',
      fmtMs(percentile(bareFirst, 50)),
      fmtMs(percentile(bareFirst, 99)),
    ]);
    rows.push([
      'Reservoir',
      `page ${fmtInt(DEEP_PAGE)} (keyset)`,
      '',
      fmtMs(percentile(deep, 50)),
      fmtMs(percentile(deep, 99)),
    ]);
    rows.push([
      'bare mysql2',
      `page ${fmtInt(DEEP_PAGE)} (same statement, interleaved)`,
      '',
      fmtMs(percentile(bareDeep, 50)),
      fmtMs(percentile(bareDeep, 99)),
    ]);
    // Interleaved page by page, so the machine's load (shared, 2 cores) weighs on both alike.
    const [ours, theirs] = await pagesPerSecond(seconds, [
      async (after) => {
        const result = await provider.read(
          after === 0 ? base : `${base}?after=${encodeKey([after])}`,
          { signal },
        );
        const doc = JSON.parse(result.contents[0].text);
        if (doc.rows.length !== PAGE || doc.rows[0].id !== after + 1) throw new Error('wrong page');
      },
      async (after) => {
        const [page] = await bare.execute(
          'SELECT id, name, value, created FROM items WHERE id > ? ORDER BY id LIMIT 101',
          [after],
        );
        if (page[0].id !== after + 1) throw new Error('wrong page');
        JSON.stringify(page.slice(0, PAGE));
      },
    ]);
    rows.push(['Reservoir', `random ${PAGE}-row pages`, `${fmtInt(ours)} pages/s`, '', '']);
    rows.push([
      'bare mysql2',
      `random ${PAGE}-row pages (same statement)`,
      `${fmtInt(theirs)} pages/s`,
      '',
      '',
    ]);
    const walked = await walk(provider, `${base}?limit=1000`, signal);
    rows.push([
      'Reservoir',
      'whole table by next links, 1,000-row pages',
      `${fmtInt(walked)} rows/s`,
      '',
      '',
    ]);
    const changes = await changeLatencies(sqlProvider, mysql, url, dbUrl.href);
    rows.push([
      'Reservoir',
      `row change → updated (poll ${POLL_MS} ms, CHECKSUM TABLE)`,
      '',
      fmtMs(percentile(changes, 50)),
      fmtMs(percentile(changes, 99)),
    ]);
    target(
      `sql-mysql: change → updated p99 ≤ ${POLL_MS + 100} ms`,
      fmtMs(percentile(changes, 99)),
      percentile(changes, 99) <= POLL_MS + 100,
    );
    const logged = await binlogChangeLatencies(sqlProvider, mysql, progress);
    if (logged !== undefined) {
      rows.push([
        'Reservoir',
        `row change → updated (poll ${POLL_MS} ms, binary log, own mariadbd)`,
        '',
        fmtMs(percentile(logged, 50)),
        fmtMs(percentile(logged, 99)),
      ]);
      target(
        `sql-mysql: change → updated from the binary log p99 ≤ ${POLL_MS + 100} ms`,
        fmtMs(percentile(logged, 99)),
        percentile(logged, 99) <= POLL_MS + 100,
      );
    }
    const p99 = Math.max(percentile(first, 99), percentile(deep, 99));
    target(
      `sql-mysql: 100-row keyset page p99 ≤ ${TARGET_P99_MS} ms`,
      fmtMs(p99),
      p99 <= TARGET_P99_MS,
    );
    target(
      `sql-mysql: paging the whole table ≥ ${fmtInt(TARGET_ROWS_PER_S)} rows/s`,
      `${fmtInt(walked)} rows/s`,
      walked >= TARGET_ROWS_PER_S,
    );
    target(
      `sql-mysql: reads/s ≥ ${TARGET_RATIO}× the bare driver`,
      `${(ours / theirs).toFixed(2)}×`,
      ours / theirs >= TARGET_RATIO,
    );
  } finally {
    await provider.close();
    await bare.end();
  }
  printTable(
    `MySQL / MariaDB table pages (provider read, in-process, one in flight)`,
    ['client', 'page', 'throughput', 'p50', 'p99'],
    rows,
  );
}

/** The same latencies on a mariadbd of the bench's own with a binary log; undefined (said why) without one. */
async function binlogChangeLatencies(sqlProvider, mysql, progress) {
  let server;
  try {
    server = await ownMariadb(['--log-bin=binlog', '--binlog-format=ROW', '--server-id=1']);
  } catch (error) {
    console.log(`\nsql-mysql: the binary-log row is skipped: ${error.message}`);
    return undefined;
  }
  try {
    progress(`sql-mysql: own mariadbd with --log-bin on port ${server.port}`);
    const admin = await mysql.createConnection({ uri: server.url });
    await admin.query(`CREATE DATABASE \`${DATABASE}\``);
    await admin.end();
    const dbUrl = new URL(server.url);
    dbUrl.pathname = `/${DATABASE}`;
    return await changeLatencies(sqlProvider, mysql, server.url, dbUrl.href, 'binary log');
  } finally {
    await server.stop();
  }
}

/** Time from a committed UPDATE to the watch's `updated`, CHANGES times, on a small table of its own. */
async function changeLatencies(sqlProvider, mysql, url, dbUrl, expect = undefined) {
  const admin = await mysql.createConnection({ uri: url });
  await admin.query(`CREATE TABLE IF NOT EXISTS \`${DATABASE}\`.ticks (id INT PRIMARY KEY, n INT)`);
  await admin.query(`REPLACE INTO \`${DATABASE}\`.ticks SELECT seq, 0 FROM seq_1_to_1000`);
  const lines = [];
  const note = (first, message) => lines.push(typeof first === 'string' ? first : message);
  const logger = { error: note, warn: note, info: note, debug: () => undefined };
  const provider = sqlProvider({ url: dbUrl, name: 'mywatch', pollIntervalMs: POLL_MS, logger });
  let resolveChange = () => undefined;
  const stop = await provider.watch('db://mywatch/tables/ticks/rows', () => resolveChange());
  if (expect !== undefined && !lines.includes(`sql: change events come from the ${expect}`))
    throw new Error(`change events do not come from the ${expect}: ${lines.join('; ')}`);
  const samples = [];
  try {
    for (let i = 1; i <= CHANGES; i += 1) {
      const seen = new Promise((resolve) => (resolveChange = resolve));
      await admin.query(`UPDATE \`${DATABASE}\`.ticks SET n = ? WHERE id = ?`, [i, (i % 1000) + 1]);
      const t = performance.now();
      await seen;
      samples.push(performance.now() - t);
    }
  } finally {
    stop();
    await provider.close();
    await admin.end();
  }
  return samples;
}

/** Latencies of the page after key `after` through the provider and, interleaved, the bare driver. */
async function latencies(provider, bare, uri, signal, after) {
  const ours = [];
  const theirs = [];
  for (let i = 0; i < SAMPLES + 40; i += 1) {
    let t = performance.now();
    const result = await provider.read(uri, { signal });
    const elapsed = performance.now() - t;
    const doc = JSON.parse(result.contents[0].text);
    if (doc.rows.length !== PAGE || doc.rows[0].id !== after + 1)
      throw new Error(`${uri}: wrong page`);
    t = performance.now();
    const [page] = await bare.execute(
      'SELECT id, name, value, created FROM items WHERE id > ? ORDER BY id LIMIT 101',
      [after],
    );
    JSON.stringify(page.slice(0, PAGE));
    if (i >= 40) {
      ours.push(elapsed);
      theirs.push(performance.now() - t);
    }
  }
  return [ours, theirs];
}

/** Pages/s of each of `pages`, run in turn (one page of each per round) for `seconds`. */
async function pagesPerSecond(seconds, pages) {
  const spent = pages.map(() => 0);
  let n = 0;
  const deadline = performance.now() + seconds * 2000;
  while (performance.now() < deadline) {
    const after = ((n * 7919) % (ROWS / PAGE - 1)) * PAGE;
    for (const [i, page] of pages.entries()) {
      const t = performance.now();
      await page(after);
      spent[i] += performance.now() - t;
    }
    n += 1;
  }
  return spent.map((ms) => n / (ms / 1000));
}

async function walk(provider, first, signal) {
  let uri = first;
  let count = 0;
  const started = performance.now();
  while (uri !== null) {
    const doc = JSON.parse((await provider.read(uri, { signal })).contents[0].text);
    count += doc.rows.length;
    uri = doc.next;
  }
  if (count !== ROWS) throw new Error(`walked ${count} rows, expected ${ROWS}`);
  return count / ((performance.now() - started) / 1000);
}

/** Creates reservoir_bench_mysql.items with ROWS rows unless a complete one is there; true when built. */
async function fixture(mysql, url) {
  const admin = await mysql.createConnection({ uri: url, multipleStatements: true });
  try {
    const [present] = await admin.query(
      'SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?',
      [DATABASE, 'items'],
    );
    if (Number(present[0].n) === 1) {
      const [max] = await admin.query(`SELECT MAX(id) AS m FROM \`${DATABASE}\`.items`);
      if (Number(max[0].m) === ROWS) return false;
    }
    await admin.query(
      `DROP DATABASE IF EXISTS \`${DATABASE}\`; CREATE DATABASE \`${DATABASE}\` CHARACTER SET utf8mb4`,
    );
    await admin.query(
      `CREATE TABLE \`${DATABASE}\`.items (id BIGINT PRIMARY KEY, name VARCHAR(40) NOT NULL, value INT, created DATETIME)`,
    );
    await admin.query(
      `INSERT INTO \`${DATABASE}\`.items SELECT seq, CONCAT('item ', seq), (seq * 37) % 1000, '2024-05-01' + INTERVAL seq SECOND FROM seq_1_to_${ROWS}`,
    );
    await admin.query(`ANALYZE TABLE \`${DATABASE}\`.items`);
    return true;
  } finally {
    await admin.end();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await sqlMysqlSection();
}
