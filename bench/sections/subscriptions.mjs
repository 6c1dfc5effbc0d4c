/**
 * Section — live resources:
 *   1. change → `notifications/resources/updated` latency over stdio (2025 era, thin client), p50/p99
 *      over N settled writes (--changes, default 200) to one subscribed file, with 1 and with 10,000
 *      active subscriptions; duplicates (more than one notification per write) and notifications for
 *      other URIs are counted;
 *   2. a burst of 5,000 file creations → how many `list_changed` notifications one client receives;
 *   3. server memory per idle subscription (in-process heap, and the stdio server's RSS);
 *   3b. subscribe throughput and RSS per subscription over stdio, 10,000 files, against a bare SDK
 *      server that answers each subscribe with one fs.watch (the peer, same run);
 *   4. the two watcher libraries (and bare fs.watch) side by side on the 100,000-file tree: time to
 *      ready, memory added, write → event latency.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { listTree } from '../lib/fixtures.mjs';
import { memoryOf } from '../lib/proc.mjs';
import { StdioRpc } from '../lib/stdio-client.mjs';
import { subscribeThroughput } from '../lib/subscribe-throughput.mjs';
import { fmtInt, fmtMB, fmtMs, percentile, printTable } from '../lib/stats.mjs';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const SPACING_MS = 120; // longer than settling (20 ms) plus parcel's batching (~50 ms): each write stands alone
const QUIET_MS = 100; // after the first notification, how long duplicates are looked for

/** A 10 × 1,001-file tree for subscriptions (one spare file per directory for the writes). */
function subscriptionTree(benchDir) {
  const root = join(benchDir, 'subs-10010');
  const complete = (() => {
    try {
      return readdirSync(root).length === 10 && readdirSync(join(root, 'd9')).length === 1001;
    } catch {
      return false;
    }
  })();
  if (!complete) {
    rmSync(root, { recursive: true, force: true });
    for (let d = 0; d < 10; d += 1) {
      mkdirSync(join(root, `d${d}`), { recursive: true });
      for (let f = 0; f < 1001; f += 1) writeFileSync(join(root, `d${d}`, `f${f}.txt`), 'x');
    }
  }
  const files = [];
  for (let d = 0; d < 10; d += 1)
    for (let f = 0; f < 1000; f += 1) files.push(join(root, `d${d}`, `f${f}.txt`));
  return { root, files, target: join(root, 'd0', 'f1000.txt') };
}

async function latencyRow({ cli, tree, subscriptions, changes, progress }) {
  const rpc = new StdioRpc(process.execPath, [cli, 'serve', tree.root, '--log-level', 'warn']);
  try {
    await rpc.initialize();
    const targetUri = pathToFileURL(tree.target).href;
    const others = tree.files.slice(0, subscriptions - 1).map((f) => pathToFileURL(f).href);
    const rssBefore = memoryOf(rpc.pid).rss;
    for (let i = 0; i < others.length; i += 500) {
      await Promise.all(
        others.slice(i, i + 500).map((uri) => rpc.request('resources/subscribe', { uri })),
      );
    }
    await rpc.request('resources/subscribe', { uri: targetUri });
    await sleep(300);
    const rssAfter = memoryOf(rpc.pid).rss;
    let arrived = [];
    let strays = 0;
    rpc.onNotification = (message) => {
      if (message.method !== 'notifications/resources/updated') return;
      if (message.params?.uri === targetUri) arrived.push(performance.now());
      else strays += 1;
    };
    const latencies = [];
    let duplicates = 0;
    let missed = 0;
    for (let i = 0; i < changes; i += 1) {
      arrived = [];
      const t0 = performance.now();
      writeFileSync(tree.target, `change ${i} ${'.'.repeat(i % 7)}`);
      const deadline = t0 + 1000;
      while (arrived.length === 0 && performance.now() < deadline) await sleep(1);
      if (arrived.length === 0) missed += 1;
      else latencies.push(arrived[0] - t0);
      await sleep(QUIET_MS);
      duplicates += Math.max(0, arrived.length - 1);
      await sleep(Math.max(0, SPACING_MS - QUIET_MS));
    }
    progress(`subscriptions: ${fmtInt(subscriptions)} active done`);
    return {
      subscriptions,
      latencies,
      duplicates,
      missed,
      strays,
      rssPerSub: subscriptions > 1 ? (rssAfter - rssBefore) / subscriptions : undefined,
    };
  } finally {
    await rpc.close();
  }
}

async function burstRow({ cli, tree }) {
  const rpc = new StdioRpc(process.execPath, [cli, 'serve', tree.root, '--log-level', 'warn']);
  const burstDir = join(tree.root, 'burst');
  try {
    await rpc.initialize();
    await rpc.request('resources/subscribe', { uri: pathToFileURL(tree.target).href }); // starts the tree watcher
    await sleep(500);
    let count = 0;
    rpc.onNotification = (message) => {
      if (message.method === 'notifications/resources/list_changed') count += 1;
    };
    const t0 = performance.now();
    mkdirSync(burstDir, { recursive: true });
    for (let i = 0; i < 5000; i += 1) writeFileSync(join(burstDir, `n${i}.txt`), 'n');
    const burstMs = performance.now() - t0;
    await sleep(3000);
    return { count, burstMs };
  } finally {
    await rpc.close();
    rmSync(burstDir, { recursive: true, force: true });
  }
}

function watcherRow(repo, kind, tree) {
  const file = join(tree.root, 'd00', 'f000.txt');
  const out = execFileSync(
    process.execPath,
    ['--expose-gc', join(repo, 'bench/lib/watcher-probe.mjs'), kind, tree.root, file],
    {
      encoding: 'utf8',
      timeout: 120_000,
      cwd: repo,
    },
  );
  return JSON.parse(out.trim().split('\n').pop());
}

export async function subscriptionsSection(ctx) {
  const { paths, progress, target } = ctx;
  const changes = ctx.opts.changes ?? 200;
  const tree = subscriptionTree(paths.benchDir);
  progress(`subscriptions: tree ready (${fmtInt(tree.files.length + 10)} files)`);

  const rows = [];
  for (const subscriptions of [1, 10_000])
    rows.push(await latencyRow({ cli: paths.cli, tree, subscriptions, changes, progress }));
  printTable(
    `Live resources 1. change → notifications/resources/updated over stdio (2025 era), ${changes} settled writes`,
    ['active subscriptions', 'p50', 'p99', 'max', 'missed', 'duplicates', 'to other URIs'],
    rows.map((r) => [
      fmtInt(r.subscriptions),
      fmtMs(percentile(r.latencies, 50)),
      fmtMs(percentile(r.latencies, 99)),
      fmtMs(Math.max(...r.latencies)),
      String(r.missed),
      String(r.duplicates),
      String(r.strays),
    ]),
  );
  const big = rows[1];
  const p99 = percentile(big.latencies, 99);
  target(
    'subscriptions: change → notification p99 ≤ 50 ms with 10,000 active',
    fmtMs(p99),
    p99 <= 50 && big.missed === 0,
  );
  const dupes = rows.reduce((n, r) => n + r.duplicates, 0);
  target(
    'subscriptions: zero duplicate notifications per settled write',
    `${dupes} duplicates`,
    dupes === 0,
  );

  const throughput = [];
  for (const [name, args] of [
    ['Reservoir (serve)', [paths.cli, 'serve', tree.root, '--log-level', 'warn']],
    ['bare SDK + fs.watch', [join(paths.repo, 'bench/lib/bare-subscribe-server.mjs')]],
  ]) {
    progress(`subscriptions: throughput ${name}`);
    throughput.push([name, await subscribeThroughput(process.execPath, args, tree.files)]);
  }
  printTable(
    `Live resources 3b. subscribe throughput over stdio (${fmtInt(tree.files.length - 1)} files, 500 in flight)`,
    ['server', 'subscriptions/s', 'server CPU per subscribe', 'RSS per subscription', 'total'],
    throughput.map(([name, t]) => [
      name,
      fmtInt(t.per_s),
      `${fmtInt(t.cpu_us_per_sub)} µs`,
      `${fmtInt(t.rss_per_sub)} B`,
      fmtMs(t.ms),
    ]),
  );
  const ours = throughput[0][1];
  target(
    'subscriptions: ≥ 5,000 subscribes/s and ≤ 10 KB each (stdio, 10,000)',
    `${fmtInt(ours.per_s)}/s, ${fmtInt(ours.rss_per_sub)} B`,
    ours.per_s >= 5000 && ours.rss_per_sub <= 10_240,
  );

  const burst = await burstRow({ cli: paths.cli, tree });
  progress('subscriptions: burst done');
  const memory = JSON.parse(
    execFileSync(
      process.execPath,
      ['--expose-gc', join(paths.repo, 'bench/lib/subscription-memory.mjs'), tree.root, '10000'],
      {
        encoding: 'utf8',
        cwd: paths.repo,
        timeout: 120_000,
      },
    )
      .trim()
      .split('\n')
      .pop(),
  );
  printTable(
    'Live resources 2–3. list_changed under a burst; memory per idle subscription',
    ['measure', 'value'],
    [
      [
        'list_changed received for 5,000 creations',
        `${burst.count} (burst took ${fmtMs(burst.burstMs)})`,
      ],
      ['heap per idle subscription (in-process, 10,000)', `${fmtInt(memory.heap_per_sub)} B`],
      ['RSS per idle subscription (in-process, 10,000)', `${fmtInt(memory.rss_per_sub)} B`],
      [
        'RSS per idle subscription (stdio server, 10,000)',
        big.rssPerSub === undefined ? '—' : `${fmtInt(big.rssPerSub)} B`,
      ],
    ],
  );
  target(
    'subscriptions: 5,000 creations → ≤ 5 list_changed',
    String(burst.count),
    burst.count <= 5 && burst.count >= 1,
  );
  target(
    'subscriptions: ≤ 2 KB server memory per idle subscription',
    `${fmtInt(memory.heap_per_sub)} B heap`,
    memory.heap_per_sub <= 2048,
  );

  const big100k = listTree(paths.benchDir, 100, 1000);
  const watchers = [];
  for (const kind of ['parcel', 'chokidar', 'fs.watch']) {
    progress(`subscriptions: watcher ${kind}`);
    watchers.push([kind, watcherRow(paths.repo, kind, big100k)]);
  }
  printTable(
    `Live resources 4. watcher libraries on ${fmtInt(big100k.count)} files (each in its own process)`,
    ['watcher', 'ready', 'memory added', 'write → event p50', 'p99', 'events'],
    watchers.map(([kind, w]) => [
      kind,
      fmtMs(w.ready_ms),
      fmtMB(w.rss_added),
      fmtMs(w.p50),
      fmtMs(w.p99),
      `${w.events}/40`,
    ]),
  );
}
