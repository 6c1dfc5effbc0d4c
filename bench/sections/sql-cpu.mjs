/**
 * SQL CPU per call beside the bare driver (#30 item 4): the SQL provider in-process (dist/), one call
 * in flight, on PostgreSQL (RESERVOIR_TEST_PG) and MySQL / MariaDB (RESERVOIR_TEST_MYSQL), each
 * skipped with a message when unset. Three shapes of the same 100 rows of a 10,000-row table built
 * once (schema reservoir_cpu / database reservoir_cpu): a table page as a resource (`read`), a named
 * query (`read` of db://…/queries/…), and `sql_query` (`query`); the bare driver (pg, mysql2; one
 * connection) runs the same statement and JSON.stringify's the rows; each answer is checked once the
 * CPU of its batch is read. Calls alternate in batches so the shared machine's load weighs on both
 * alike; CPU is process.cpuUsage (user + system) per call.
 * Target: each shape ≤ 1.5× the bare driver's CPU per call. On MariaDB a last row, no target, runs
 * the five commands a `sql_query` sends on the bare driver: what they cost before any of our code.
 *
 * Then Reservoir beside DBHub and the bare driver, both servers over stdio (bench/lib/sql-peers.mjs):
 * page, deep page, 1,000 rows and an aggregate on the same table — target: Reservoir's calls/s ≥
 * DBHub's on every shape. Skipped, saying why, when DBHub is not installed or its node too old.
 *
 * Usage: npm run build && RESERVOIR_TEST_PG=… RESERVOIR_TEST_MYSQL=… node bench/sections/sql-cpu.mjs
 */
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { locateDbhub, peerRows } from '../lib/sql-peers.mjs';
import { fmtInt, printTable } from '../lib/stats.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '../..');
const require = createRequire(import.meta.url);
const ROWS = 10_000;
const PAGE = 100;
const CALLS = 600;
const BATCH = 20;
const TARGET = 1.5;

export async function sqlCpuSection(ctx = {}) {
  const target = ctx.target ?? (() => undefined);
  const dist = join(ctx.paths?.repo ?? repoRoot, 'dist/providers/sql');
  const { sqlProvider } = await import(pathToFileURL(join(dist, 'index.js')).href);
  const { encodeKey } = await import(pathToFileURL(join(dist, 'dialect.js')).href);
  const rows = [];
  const pgUrl = process.env.RESERVOIR_TEST_PG;
  const myUrl = process.env.RESERVOIR_TEST_MYSQL;
  if (pgUrl) rows.push(...(await postgres(pgUrl, sqlProvider, encodeKey, target)));
  else console.log('\nsql-cpu: RESERVOIR_TEST_PG is not set: the PostgreSQL rows are skipped.');
  if (myUrl) rows.push(...(await mysqlRows(myUrl, sqlProvider, encodeKey, target, dist)));
  else console.log('\nsql-cpu: RESERVOIR_TEST_MYSQL is not set: the MySQL rows are skipped.');
  printTable(
    `SQL CPU per call, ${PAGE} rows (in-process, one in flight, ${fmtInt(CALLS)} calls each, alternating)`,
    ['database', 'shape', 'Reservoir µs/call', 'bare µs/call', 'ratio'],
    rows,
  );
  const repo = ctx.paths?.repo ?? repoRoot;
  const dbhub = await locateDbhub();
  if (dbhub.skip !== undefined)
    console.log(`\nsql-cpu: the DBHub rows are skipped: ${dbhub.skip}.`);
  const peers = [];
  if (pgUrl) peers.push(...(await pgPeers(pgUrl, repo, dbhub, encodeKey)));
  if (myUrl) peers.push(...(await mysqlPeers(myUrl, repo, dbhub, encodeKey)));
  for (const shape of new Set(peers.map((r) => `${r[0]}\0${r[1]}`))) {
    const [ours, theirs] = ['Reservoir', 'DBHub'].map((who) =>
      peers.find((r) => `${r[0]}\0${r[1]}` === shape && r[2] === who),
    );
    if (ours === undefined || theirs === undefined) continue;
    const rate = (row) => Number(row[3].replaceAll(',', ''));
    target(
      `sql-cpu: ${ours[0]} ${ours[1]}: Reservoir calls/s ≥ DBHub's`,
      `${ours[3]} vs ${theirs[3]}`,
      rate(ours) >= rate(theirs),
    );
  }
  if (peers.length > 0)
    printTable(
      `SQL beside DBHub, same table, same run (servers over stdio on Node ${dbhub.version ?? process.versions.node}, one call in flight; CPU: the server process, the bare driver its own)`,
      ['database', 'shape', 'server', 'calls/s', 'CPU µs/call', '× bare CPU'],
      peers,
    );
}

async function pgPeers(url, repo, dbhub, encodeKey) {
  const pg = require('pg');
  const bare = new pg.Client({ connectionString: url });
  await bare.connect();
  try {
    return await peerRows({
      repo,
      database: 'PostgreSQL',
      source: peerSource({ url, schema: 'reservoir_cpu' }),
      dsn: withSslDisabled(url),
      table: 'reservoir_cpu.items',
      rows: ROWS,
      bare: async (text, values) => (await bare.query({ text, values })).rows,
      placeholder: (i) => `$${i}`,
      dbhub,
      encodeKey,
    });
  } finally {
    await bare.end();
  }
}

async function mysqlPeers(url, repo, dbhub, encodeKey) {
  const mysql = require('mysql2/promise');
  const dbUrl = new URL(url);
  dbUrl.pathname = '/reservoir_cpu';
  const bare = await mysql.createConnection({ uri: dbUrl.href, dateStrings: true });
  try {
    return await peerRows({
      repo,
      database: 'MariaDB',
      source: peerSource({ url: dbUrl.href }),
      dsn: withSslDisabled(dbUrl.href),
      table: 'reservoir_cpu.items',
      rows: ROWS,
      bare: async (sql, values) => (await bare.execute(sql, values))[0],
      placeholder: () => '?',
      dbhub,
      encodeKey,
    });
  } finally {
    await bare.end();
  }
}

/** The SQL source of the stdio server the peers' rows measure. */
function peerSource(connection) {
  return {
    type: 'sql',
    name: 'cpu',
    ...connection,
    queryTool: true,
    // the bench connects as the server's admin; a read-only role's per-call grant check is not measured
    allowPrivilegedRole: true,
    maxRows: 1000,
  };
}

/** `url` with sslmode=disable, as DBHub's DSNs spell a plain connection. */
function withSslDisabled(url) {
  const u = new URL(url);
  u.searchParams.set('sslmode', 'disable');
  return u.href;
}

/** CPU µs per call of each of `fns`, alternating batches of BATCH calls; each fn gets the call's offset. */
/**
 * CPU per call of each { call, check }: `call(after)` makes the answer (its text or rows), `check`
 * then proves it right once the batch's CPU is read — what the bench does to verify an answer is no
 * part of what the call cost.
 */
async function cpuPerCall(fns) {
  const total = fns.map(() => 0);
  for (let done = 0; done < CALLS; done += BATCH) {
    for (const [i, { call, check }] of fns.entries()) {
      const answers = [];
      const start = process.cpuUsage();
      for (let k = 0; k < BATCH; k += 1) answers.push(await call(afterOf(done + k)));
      const used = process.cpuUsage(start);
      total[i] += used.user + used.system;
      for (const [k, answer] of answers.entries()) check(answer, afterOf(done + k));
    }
  }
  return total.map((t) => t / CALLS);
}

const afterOf = (n) => (n * 37) % (ROWS - PAGE);

function compare(database, shape, ours, bare, target) {
  const ratio = ours / bare;
  target(
    `sql-cpu: ${database} ${shape} ≤ ${TARGET}× bare CPU`,
    `${ratio.toFixed(2)}×`,
    ratio <= TARGET,
  );
  return [database, shape, fmtInt(ours), fmtInt(bare), `${ratio.toFixed(2)}×`];
}

async function postgres(url, sqlProvider, encodeKey, target) {
  const pg = require('pg');
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA IF NOT EXISTS reservoir_cpu`);
  await admin.query(
    `CREATE TABLE IF NOT EXISTS reservoir_cpu.items (id int PRIMARY KEY, name text NOT NULL, value int, created timestamptz)`,
  );
  const [{ n }] = (await admin.query('SELECT count(*)::int AS n FROM reservoir_cpu.items')).rows;
  if (n !== ROWS) {
    await admin.query('TRUNCATE reservoir_cpu.items');
    await admin.query(
      `INSERT INTO reservoir_cpu.items SELECT i, 'item ' || i, i % 1000, '2024-01-01'::timestamptz + i * interval '1 minute' FROM generate_series(1, ${ROWS}) i`,
    );
  }
  await admin.end();
  const statement =
    'SELECT id, name, value, created FROM items WHERE id > $1 ORDER BY id LIMIT 100';
  const provider = sqlProvider({
    url,
    schema: 'reservoir_cpu',
    name: 'cpu',
    queryTool: true,
    // the bench connects as the server's admin; a read-only role's per-call grant check is not measured
    allowPrivilegedRole: true,
    maxRows: 1000,
    queries: { page: { sql: statement, params: [{ name: 'after', type: 'integer' }] } },
  });
  const bare = new pg.Client({ connectionString: url, options: '-c search_path=reservoir_cpu' });
  await bare.connect();
  try {
    return await shapes('PostgreSQL', provider, encodeKey, target, statement, async (after) => {
      const result = await bare.query({ text: statement, values: [after] });
      JSON.stringify(result.rows);
      return result.rows;
    });
  } finally {
    await provider.close();
    await bare.end();
  }
}

async function mysqlRows(url, sqlProvider, encodeKey, target, dist) {
  const mysql = require('mysql2/promise');
  const admin = await mysql.createConnection({ uri: url });
  await admin.query('CREATE DATABASE IF NOT EXISTS reservoir_cpu');
  await admin.query(
    'CREATE TABLE IF NOT EXISTS reservoir_cpu.items (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, value INT, created DATETIME)',
  );
  const [[{ n }]] = await admin.query('SELECT COUNT(*) AS n FROM reservoir_cpu.items');
  if (Number(n) !== ROWS) {
    await admin.query('TRUNCATE reservoir_cpu.items');
    await admin.query(
      `INSERT INTO reservoir_cpu.items SELECT seq, CONCAT('item ', seq), seq % 1000, '2024-01-01' + INTERVAL seq MINUTE FROM seq_1_to_${ROWS}`,
    );
  }
  await admin.end();
  const dbUrl = new URL(url);
  dbUrl.pathname = '/reservoir_cpu';
  const statement = 'SELECT id, name, value, created FROM items WHERE id > ? ORDER BY id LIMIT 100';
  const provider = sqlProvider({
    url: dbUrl.href,
    name: 'cpu',
    queryTool: true,
    allowPrivilegedRole: true,
    maxRows: 1000,
    queries: { page: { sql: statement, params: [{ name: 'after', type: 'integer' }] } },
  });
  const bare = await mysql.createConnection({ uri: dbUrl.href, dateStrings: true });
  const execute = async (after) => {
    const [result] = await bare.execute(statement, [after]);
    JSON.stringify(result);
    return result;
  };
  try {
    const rows = await shapes('MariaDB', provider, encodeKey, target, statement, execute);
    rows.push(await mysqlQueryFloor(dist, dbUrl.href, statement, execute));
    return rows;
  } finally {
    await provider.close();
    await bare.end();
  }
}

/**
 * What MariaDB's `sql_query` commands cost the driver alone, beside one execute: the five a call
 * sends (mysql.ts readOnlyQuery — START TRANSACTION READ ONLY with the statement's PREPARE, then
 * EXECUTE with the session's reset and its set-up again, two writes), written on a bare mysql2
 * connection by the dialect's pipelining (mysql-pipeline.ts), with no guard, pool or byte budget.
 * No target: it is the floor the 1.5× target meets while each statement runs in a read-only
 * transaction and leaves nothing behind.
 */
async function mysqlQueryFloor(dist, url, statement, execute) {
  const pipe = await import(pathToFileURL(join(dist, 'mysql-pipeline.js')).href);
  const { prepareSession, forgetStatements } = await import(
    pathToFileURL(join(dist, 'mysql-connect.js')).href
  );
  const pool = require('mysql2').createPool({ uri: url, dateStrings: true, connectionLimit: 1 });
  const connection = await new Promise((resolve, reject) =>
    pool.getConnection((error, c) => (error ? reject(error) : resolve(c))),
  );
  try {
    const { again } = await prepareSession(connection, 30_000);
    const commands = {
      call: async (after) => {
        let prepared;
        await pipe.pipelineAll(
          connection,
          [
            pipe.queryStep('START TRANSACTION READ ONLY'),
            pipe.prepareStep(statement, true, (s) => (prepared = s)),
          ],
          30_000,
        );
        const rows = [];
        forgetStatements(connection);
        await pipe.pipelineAll(
          connection,
          [
            pipe.executeStep(prepared, statement, [after], (q) =>
              q.on('result', (r) => rows.push(r)),
            ),
            pipe.resetStep,
            pipe.queryStep(again),
          ],
          30_000,
        );
        JSON.stringify(rows);
        return rows;
      },
      check: (rows, after) => {
        if (rows.length !== PAGE || rows[0][0] !== after + 1)
          throw new Error('MariaDB: wrong rows');
      },
    };
    const driver = { call: execute, check: bareRowsCheck('MariaDB') };
    for (let i = 0; i < 50; i += 1)
      for (const { call, check } of [commands, driver]) check(await call(i), i);
    const [floor, one] = await cpuPerCall([commands, driver]);
    return [
      'MariaDB',
      "sql_query's commands, bare driver",
      fmtInt(floor),
      fmtInt(one),
      `${(floor / one).toFixed(2)}×`,
    ];
  } finally {
    connection.release();
    await new Promise((resolve) => pool.end(resolve));
  }
}

/** Checks a bare driver's answer (rows as objects): the page, from the row after `after`. */
const bareRowsCheck = (database) => (rows, after) => {
  if (rows.length !== PAGE || Number(rows[0].id) !== after + 1)
    throw new Error(`${database}: wrong rows`);
};

async function shapes(database, provider, encodeKey, target, statement, bare) {
  const signal = new AbortController().signal;
  const wrong = () => new Error(`${database}: wrong rows`);
  const document = (text, after) => {
    const doc = JSON.parse(text);
    const first = doc.rows[0];
    const id = Array.isArray(first) ? first[0] : first.id;
    if (doc.rows.length !== PAGE || id !== after + 1) throw wrong();
  };
  const page = {
    call: async (after) => {
      const uri = `db://cpu/tables/items/rows?limit=${PAGE}${after === 0 ? '' : `&after=${encodeKey([after])}`}`;
      return (await provider.read(uri, { signal })).contents[0].text;
    },
    check: document,
  };
  const named = {
    call: async (after) =>
      (await provider.read(`db://cpu/queries/page?after=${after}`, { signal })).contents[0].text,
    check: document,
  };
  const query = {
    call: async (after) => {
      const result = await provider.query(statement, [after], { signal });
      JSON.stringify(result);
      return result;
    },
    check: (result, after) => {
      if (result.rows.length !== PAGE || result.rows[0][0] !== after + 1) throw wrong();
    },
  };
  const driver = { call: bare, check: bareRowsCheck(database) };
  // warm both paths (pools, prepared statements, JIT)
  for (let i = 0; i < 50; i += 1)
    for (const { call, check } of [page, named, query, driver]) check(await call(i), i);
  const [p, b1] = await cpuPerCall([page, driver]);
  const [n, b2] = await cpuPerCall([named, driver]);
  const [q, b3] = await cpuPerCall([query, driver]);
  return [
    compare(database, 'table page (resource)', p, b1, target),
    compare(database, 'named query', n, b2, target),
    compare(database, 'sql_query', q, b3, target),
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) await sqlCpuSection();
