/**
 * One source down of three: `resources/list` first-page time over stdio (the bench's thin client,
 * `reservoir serve --config`) with a files tree (300 files), a SQLite file (10 tables) and a
 * PostgreSQL schema (10 tables, RESERVOIR_TEST_PG; the section is skipped with a message when
 * unset) reached through a TCP proxy in this process. The proxy — never the shared PostgreSQL — is
 * what goes down, two ways:
 *   - refused: the proxy stops listening and cuts its connections (a server that is down);
 *   - hung: the proxy accepts connections and never forwards a byte (a host that drops packets).
 * Rows: all up (median of the first page), the page that finds the source down (one sample: it
 * pays the failure, up to the 2 s budget when hung), the first page while it is down (median), and
 * the time from the proxy's return until a list includes the source again.
 * Target: first page with one of three sources down ≤ 2 × its time with all sources up.
 *
 * Usage: npm run build && node bench/run.mjs --only outage
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createConnection, createServer } from 'node:net';
import { join } from 'node:path';
import { StdioRpc } from '../lib/stdio-client.mjs';
import { fmtMs, median, printTable } from '../lib/stats.mjs';
import { loadSqliteDriver } from '../../dist/core/sqlite-driver.js';

const require = createRequire(import.meta.url);
const SAMPLES = 30;
const FILES = 300;
const TABLES = 10;
const META_KEY = 'reservoir/skippedSources';

export async function outageSection(ctx) {
  const url = process.env.RESERVOIR_TEST_PG;
  if (url === undefined || url === '') {
    console.log(
      '\noutage: RESERVOIR_TEST_PG is not set: the section is skipped (e.g. RESERVOIR_TEST_PG=postgres://postgres@127.0.0.1:5432/test).',
    );
    return;
  }
  const { paths } = ctx;
  const dir = join(paths.benchDir, `outage-${process.pid}`);
  const schema = `reservoir_bench_outage_${process.pid}`;
  const pg = require('pg');
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  const target = new URL(url);
  const proxy = new Proxy(target.hostname, Number(target.port || 5432));
  let rpc;
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
    for (let t = 0; t < TABLES; t += 1)
      await admin.query(`CREATE TABLE ${schema}.t${t} (id int PRIMARY KEY, label text)`);
    const config = fixture(dir, TABLES);
    await proxy.listen();
    const pgUrl = new URL(url);
    pgUrl.hostname = '127.0.0.1';
    pgUrl.port = String(proxy.port);
    writeFileSync(
      config,
      JSON.stringify({
        sources: [
          { type: 'files', root: 'docs' },
          { type: 'sql', path: 'shop.db', name: 'shop' },
          { type: 'sql', url: pgUrl.href, name: 'pgbench', schema },
        ],
      }),
    );
    rpc = new StdioRpc(process.execPath, [
      paths.cli,
      'serve',
      '--config',
      config,
      '--log-level',
      'warn',
    ]);
    await rpc.initialize();
    const page = async () => {
      const t0 = performance.now();
      const result = await rpc.request('resources/list', {}, 30_000);
      const ms = performance.now() - t0;
      return {
        ms,
        count: result.resources.length,
        skipped: result._meta?.[META_KEY] ?? [],
        pg: result.resources.some((r) => r.uri.startsWith('db://pgbench/')),
      };
    };
    const medianOf = async (expectPg) => {
      const times = [];
      for (let i = 0; i < SAMPLES; i += 1) {
        const p = await page();
        if (p.pg !== expectPg)
          throw new Error(
            `outage: a page ${expectPg ? 'without' : 'with'} the PostgreSQL source where it was ${expectPg ? 'up' : 'down'}`,
          );
        times.push(p.ms);
      }
      return median(times);
    };
    /** Lists until `done(page)`; returns the first such page. The provider may answer from its 5 s schema cache meanwhile. */
    const until = async (done, what) => {
      const started = performance.now();
      for (;;) {
        const p = await page();
        if (done(p)) return { ...p, waited: performance.now() - started };
        if (performance.now() - started > 60_000)
          throw new Error(`outage: ${what} did not happen within 60 s`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };

    for (let i = 0; i < 5; i += 1) await page(); // warm up
    const up = await medianOf(true);
    const all = (await page()).count;
    ctx.progress(`outage: all up ${fmtMs(up)}`);
    const rows = [['all three up', fmtMs(up), '1.00×', String(all), '—']];
    for (const mode of ['refused', 'hung']) {
      await proxy.down(mode);
      const found = await until((p) => p.skipped.length > 0, `the ${mode} source to be skipped`);
      ctx.progress(`outage: ${mode}: found down after ${fmtMs(found.waited)}`);
      const down = await medianOf(false);
      const count = (await page()).count;
      rows.push([
        `PostgreSQL ${mode}: the page that finds it down`,
        fmtMs(found.ms),
        `${(found.ms / up).toFixed(2)}×`,
        String(found.count),
        found.skipped.map((s) => `${s.source} ${s.reason}`).join(', '),
      ]);
      rows.push([
        `PostgreSQL ${mode}: first page while down (median)`,
        fmtMs(down),
        `${(down / up).toFixed(2)}×`,
        String(count),
        '',
      ]);
      ctx.target(
        `outage: first page with one of three sources down (${mode}) ≤ 2× all up`,
        `${fmtMs(down)} vs ${fmtMs(up)} (${(down / up).toFixed(2)}×)`,
        down <= 2 * up,
      );
      ctx.progress(`outage: ${mode}: down ${fmtMs(down)}`);
      await proxy.listen();
      ctx.progress(`outage: ${mode}: proxy back`);
      const back = await until(
        (p) => p.pg && p.skipped.length === 0,
        `the ${mode} source to come back`,
      );
      rows.push([
        `PostgreSQL ${mode}: back in lists after the proxy returns`,
        fmtMs(back.waited),
        '',
        String(back.count),
        '',
      ]);
      ctx.progress(`outage: ${mode} done`);
    }
    printTable(
      `outage. resources/list first page over stdio, three sources (${FILES} files, SQLite ${TABLES} tables, PostgreSQL ${TABLES} tables through a TCP proxy); medians of ${SAMPLES}`,
      ['state', 'first page', 'vs all up', 'resources', 'skipped (_meta)'],
      rows,
    );
  } finally {
    await rpc?.close();
    await proxy.down('refused');
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    await admin.end();
    rmSync(dir, { recursive: true, force: true });
  }
}

function fixture(dir, tables) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'docs'), { recursive: true });
  for (let i = 0; i < FILES; i += 1)
    writeFileSync(join(dir, 'docs', `f${String(i).padStart(4, '0')}.md`), `# ${i}\n`);
  const Database = loadSqliteDriver(); // this runtime's better-sqlite3 build
  const db = new Database(join(dir, 'shop.db'));
  for (let t = 0; t < tables; t += 1)
    db.exec(`CREATE TABLE t${t} (id INTEGER PRIMARY KEY, label TEXT)`);
  db.close();
  return join(dir, 'reservoir.json');
}

/** A TCP proxy to PostgreSQL that can refuse (stop listening) or hang (accept, never forward). */
class Proxy {
  constructor(host, port) {
    this.host = host;
    this.targetPort = port;
    this.port = 0;
    this.sockets = new Set();
    this.server = undefined;
  }

  async listen() {
    await this.close();
    this.server = createServer((client) => this.accept(client));
    await new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.port, '127.0.0.1', resolve);
    });
    this.port = this.server.address().port;
    this.hung = false;
  }

  accept(client) {
    this.track(client);
    if (this.hung) return; // accepted, never answered
    const upstream = createConnection({ host: this.host, port: this.targetPort });
    this.track(upstream);
    for (const s of [client, upstream]) s.on('error', () => (client.destroy(), upstream.destroy()));
    client.pipe(upstream).pipe(client);
  }

  track(socket) {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    socket.on('error', () => undefined);
  }

  async down(mode) {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    if (mode === 'hung') this.hung = true;
    else await this.close();
  }

  async close() {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    const server = this.server;
    this.server = undefined;
    if (server !== undefined) await new Promise((resolve) => server.close(resolve));
  }
}
