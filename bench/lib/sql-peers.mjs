/**
 * Reservoir beside DBHub (`@bytebase/dbhub`, the peer #30 item 4 names) and the bare driver on the
 * same table in the same run: both servers as their users run them (stdio, one call in flight), the
 * bare driver in-process. Shapes: a 100-row page from the start and deep in the table (Reservoir: a
 * table page read as a resource; DBHub: `execute_sql` of the same keyset statement), 1,000 rows and
 * an aggregate (both through their SQL tool). Calls alternate in batches, so the shared machine's
 * load weighs on all three alike; CPU is the server process's (/proc ticks) per call, and the bare
 * driver's own process.cpuUsage.
 *
 * Both servers run on the same Node release: DBHub's (it needs Node ≥ 22.5; see `locateDbhub`).
 *
 * DBHub runs read-only with a 1,000-row cap (its dbhub.toml `[[tools]]` settings), as Reservoir
 * does. It is pinned in scripts/dbhub/ and installed on first use (see `locateDbhub`); where it
 * cannot be, the DBHub rows are skipped, saying why.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureNode } from '../../scripts/node-release.mjs';
import { ensurePinned } from '../../scripts/pinned-package.mjs';
import { cpuMicros } from './cpu.mjs';
import { fmtInt } from './stats.mjs';
import { StdioRpc } from './stdio-client.mjs';

const CALLS = 200;
const BATCH = 20;

/**
 * { node, entry, version } to start DBHub with, or { skip } saying why it cannot be. RESERVOIR_BENCH_DBHUB
 * (its dist/index.js; 0: no DBHub rows) and RESERVOIR_BENCH_DBHUB_NODE choose them; by default the version
 * scripts/dbhub/ pins is installed into .cache/dbhub and run on the Node 24 release from the npm
 * registry (scripts/node-release.mjs).
 */
export async function locateDbhub() {
  let entry = process.env.RESERVOIR_BENCH_DBHUB;
  if (entry === '0') return { skip: 'RESERVOIR_BENCH_DBHUB=0' };
  let node = process.env.RESERVOIR_BENCH_DBHUB_NODE;
  try {
    if (entry === undefined || entry === '') {
      const { dir } = await ensurePinned('dbhub', '@bytebase/dbhub', { log: console.log });
      entry = join(dir, 'node_modules', '@bytebase', 'dbhub', 'dist', 'index.js');
    }
    if (node === undefined || node === '') node = await ensureNode(24, { log: console.log });
  } catch (error) {
    return {
      skip: `DBHub could not be installed: ${error instanceof Error ? error.message : error}`,
    };
  }
  const version = execFileSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
  const [major, minor] = version.split('.').map(Number);
  if (major < 22 || (major === 22 && minor < 5))
    return {
      skip: `DBHub needs Node ≥ 22.5 and ${node} is ${version}: set RESERVOIR_BENCH_DBHUB_NODE to a newer node`,
    };
  return { node, entry, version };
}

/**
 * Rows [database, shape, server, calls/s, CPU µs/call, × bare] for each shape. `table` is the
 * qualified table (id, name, value, created; ids 1..rows); `bare(sql, values)` runs a statement on
 * the bare driver and returns its rows; `placeholder(i)` is the dialect's i-th parameter.
 */
export async function peerRows({
  repo,
  database,
  source,
  dsn,
  table,
  rows: tableRows,
  bare,
  placeholder,
  dbhub,
  encodeKey,
}) {
  const dir = mkdtempSync(join(tmpdir(), 'reservoir-bench-sql-peers-'));
  const servers = [];
  try {
    const config = join(dir, 'reservoir.json');
    writeFileSync(config, JSON.stringify({ sources: [source] }));
    // Both servers run on the same Node release (DBHub's, which needs ≥ 22.5), so the runtime is not
    // what differs between them; without DBHub, on the bench's own.
    const ours = new StdioRpc(dbhub.skip === undefined ? dbhub.node : process.execPath, [
      join(repo, 'dist/cli/index.js'),
      'serve',
      '--config',
      config,
      '--log-level',
      'warn',
    ]);
    servers.push(ours);
    await ours.initialize();
    let theirs;
    if (dbhub.skip === undefined) {
      const toml = join(dir, 'dbhub.toml');
      writeFileSync(
        toml,
        `[[sources]]\nid = "default"\ndsn = ${JSON.stringify(dsn)}\n\n[[tools]]\nname = "execute_sql"\nsource = "default"\nreadonly = true\nmax_rows = 1000\n`,
      );
      theirs = new StdioRpc(dbhub.node, [dbhub.entry, '--transport', 'stdio', '--config', toml], {
        stdio: ['pipe', 'pipe', 'ignore'],
      });
      servers.push(theirs);
      await theirs.initialize(60_000);
    }
    const columns = 'id, name, value, created';
    const page = (after) => ({
      sql: `SELECT ${columns} FROM ${table} WHERE id > ${placeholder(1)} ORDER BY id LIMIT 100`,
      text: `SELECT ${columns} FROM ${table} WHERE id > ${after} ORDER BY id LIMIT 100`,
      values: [after],
    });
    const deep = tableRows - 1000;
    const shapes = [
      { label: 'page (100 rows)', rows: 100, read: (i) => i % 100, statement: page },
      {
        label: `deep page (row ${fmtInt(deep)})`,
        rows: 100,
        read: (i) => deep + (i % 100),
        statement: page,
      },
      {
        label: '1,000 rows',
        rows: 1000,
        statement: () => ({
          text: `SELECT ${columns} FROM ${table} ORDER BY id LIMIT 1000`,
          values: [],
        }),
      },
      {
        label: 'aggregate (GROUP BY)',
        rows: 10,
        statement: () => ({
          text: `SELECT value % 10 AS bucket, COUNT(*) AS n, SUM(value) AS total FROM ${table} GROUP BY value % 10 ORDER BY 1`,
          values: [],
        }),
      },
    ];
    const out = [];
    const sqlTool = `sql_query_${source.name}`;
    for (const shape of shapes) {
      const after = (i) => (shape.read === undefined ? 0 : shape.read(i));
      const reservoir = async (i) => {
        if (shape.read !== undefined) {
          const uri = `db://${source.name}/tables/items/rows?limit=100${after(i) === 0 ? '' : `&after=${encodeKey([after(i)])}`}`;
          const result = await ours.request('resources/read', { uri });
          expectRows(JSON.parse(result.contents[0].text).rows.length, shape, 'Reservoir');
          return;
        }
        const { text } = shape.statement(after(i));
        const result = await ours.request('tools/call', {
          name: sqlTool,
          arguments: { sql: text },
        });
        if (result.isError) throw new Error(`Reservoir: ${result.content?.[0]?.text}`);
        expectRows(result.structuredContent.rowCount, shape, 'Reservoir');
      };
      const peer = async (i) => {
        const { text } = shape.statement(after(i));
        const result = await theirs.request('tools/call', {
          name: 'execute_sql',
          arguments: { sql: text },
        });
        const body = JSON.parse(result.content[0].text);
        if (body.success !== true)
          throw new Error(`DBHub: ${result.content[0].text.slice(0, 200)}`);
        expectRows((body.data.rows ?? body.data.statements?.[0]?.rows)?.length, shape, 'DBHub');
      };
      const driver = async (i) => {
        const statement = shape.statement(after(i));
        const rows = await bare(
          statement.sql ?? statement.text,
          statement.sql ? statement.values : [],
        );
        expectRows(rows.length, shape, 'bare');
        JSON.stringify(rows);
      };
      const runners = [
        { name: 'Reservoir', fn: reservoir, pid: ours.pid },
        ...(theirs ? [{ name: 'DBHub', fn: peer, pid: theirs.pid }] : []),
        { name: 'bare driver', fn: driver },
      ];
      // warm each server (JIT, pools, prepared statements) before its first measured batch
      for (const { fn } of runners) for (let i = 0; i < 50; i += 1) await fn(i);
      const totals = runners.map(() => ({ cpu: 0, ms: 0 }));
      for (let done = 0; done < CALLS; done += BATCH) {
        for (const [r, runner] of runners.entries()) {
          const cpu0 = runner.pid === undefined ? process.cpuUsage() : cpuMicros(runner.pid);
          const t0 = performance.now();
          for (let k = 0; k < BATCH; k += 1) await runner.fn(done + k);
          totals[r].ms += performance.now() - t0;
          if (runner.pid === undefined) {
            const used = process.cpuUsage(cpu0);
            totals[r].cpu += used.user + used.system;
          } else totals[r].cpu += cpuMicros(runner.pid) - cpu0;
        }
      }
      const bareCpu = totals.at(-1).cpu / CALLS;
      for (const [r, runner] of runners.entries()) {
        const cpu = totals[r].cpu / CALLS;
        out.push([
          database,
          shape.label,
          runner.name,
          fmtInt((CALLS * 1000) / totals[r].ms),
          fmtInt(cpu),
          `${(cpu / bareCpu).toFixed(2)}×`,
        ]);
      }
    }
    return out;
  } finally {
    await Promise.all(servers.map((server) => server.close()));
    rmSync(dir, { recursive: true, force: true });
  }
}

function expectRows(count, shape, who) {
  if (count !== shape.rows)
    throw new Error(`${who}: ${shape.label}: ${count} rows, not ${shape.rows}`);
}
