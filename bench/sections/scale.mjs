/**
 * Scale (issue 30) — the files source where it grows with the data, over stdio:
 *
 *   1. one big directory: full paging of a flat directory of 10k, 30k and 100k files (resources/s
 *      and the growth exponent of the time over the three sizes), and the worst wait of a
 *      resources/read sent on the same connection while the 100k directory is paged;
 *   2. a million files (opt-in, --million: building the tree takes minutes): 1,000 directories of
 *      1,000 empty files under the OS temp directory (reused), first-page time against the 100k
 *      tree of the list section (growth exponent): the first at once, beside the watcher's first
 *      scan, the warm ones once the server is quiet; RSS idle, after a full listing and 10 s later;
 *   3. new directories: with the search index built over the list section's 100k tree, a file
 *      written into a just-created nested directory → `notifications/resources/list_changed` and →
 *      searchable, p50/p99, beside a file in an existing directory, and (a few) while the index is
 *      still being built; changes are spaced beyond the hub's 1 s minimum between two
 *      list_changed, so each is timed on its own.
 *
 * Usage: npm run bench -- --only scale [--million]
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { listTree } from '../lib/fixtures.mjs';
import { cpuMicros } from '../lib/cpu.mjs';
import { memoryOf } from '../lib/proc.mjs';
import { StdioRpc } from '../lib/stdio-client.mjs';
import { fmtInt, fmtMB, fmtMs, median, percentile, printTable } from '../lib/stats.mjs';

const FLAT_SIZES = [10_000, 30_000, 100_000];
const FIRST_PAGE_SAMPLES = 15;
const NEW_DIR_REPS = 20;
/** Most files written into new nested directories while the index is being built. */
const DURING_BUILD_REPS = 5;
/** The hub's minimum interval between two list_changed notifications, plus a margin. */
const LIST_INTERVAL_MS = 1100;

export async function scaleSection(ctx) {
  const { paths, opts } = ctx;
  const state = mkdtempSync(join(tmpdir(), 'reservoir-bench-scale-'));
  try {
    await flatPaging(ctx, paths, opts.reps);
    if (opts.million === true) await million(ctx, paths, state);
    else ctx.progress('scale: the 1M-file rows need --million (building the tree takes minutes)');
    await newDirectories(ctx, paths, state);
  } finally {
    rmSync(state, { recursive: true, force: true });
  }
  if (skipped.count > 0)
    console.log(
      `   ${skipped.count} list pages ran past the 2 s source timeout and were asked again (${SKIPPED_RETRY_MS} ms apart)`,
    );
}

/** Least-squares slope of log(y) over log(x): the growth exponent of a curve. */
export function growthExponent(xs, ys) {
  const lx = xs.map(Math.log);
  const ly = ys.map(Math.log);
  const mx = lx.reduce((a, b) => a + b, 0) / lx.length;
  const my = ly.reduce((a, b) => a + b, 0) / ly.length;
  let num = 0;
  let den = 0;
  for (let i = 0; i < lx.length; i += 1) {
    num += (lx[i] - mx) * (ly[i] - my);
    den += (lx[i] - mx) ** 2;
  }
  return num / den;
}

function flatTree(benchDir, count) {
  const root = join(benchDir, `flat-${count}`);
  if (existsSync(root) && readdirSync(root).length === count) return root;
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  const width = String(count - 1).length;
  for (let i = 0; i < count; i += 1)
    writeFileSync(join(root, `f${String(i).padStart(width, '0')}.txt`), `${i}\n`);
  return root;
}

function serve(paths, root, extra = []) {
  return new StdioRpc(process.execPath, [
    paths.cli,
    'serve',
    root,
    '--no-search',
    '--log-level',
    'warn',
    ...extra,
  ]);
}

/** Pages that ran past the source's list timeout and were asked again (reported at the end). */
const skipped = { count: 0 };
/** The pause before a skipped page is asked again, ms. */
const SKIPPED_RETRY_MS = 250;

/** Pages through every resource; returns the time taken, and checks each URI came once. */
async function pageAll(rpc, expected, onPage) {
  const seen = new Set();
  let cursor;
  let skippedSince;
  const t0 = performance.now();
  for (;;) {
    const result = await rpc.request(
      'resources/list',
      cursor === undefined ? {} : { cursor },
      120_000,
    );
    if (result._meta?.['reservoir/skippedSources'] !== undefined) {
      // The source ran past the list timeout (a loaded machine): pages skip it until the server's
      // probe (one a second) finds it answering again, so the same page is asked again after a
      // pause, counted — a minute of skipped pages in a row means it is not coming back.
      skipped.count += 1;
      skippedSince ??= performance.now();
      if (performance.now() - skippedSince > 60_000)
        throw new Error('resources/list: the source was skipped for a minute');
      await delay(SKIPPED_RETRY_MS);
      continue;
    }
    skippedSince = undefined;
    for (const r of result.resources) {
      if (seen.has(r.uri)) throw new Error(`resources/list repeated ${r.uri}`);
      seen.add(r.uri);
    }
    cursor = result.nextCursor;
    onPage?.();
    if (cursor === undefined) break;
  }
  const ms = performance.now() - t0;
  if (seen.size !== expected)
    throw new Error(`resources/list paged ${seen.size} resources, expected ${expected}`);
  return ms;
}

export async function flatPaging(ctx, paths, reps) {
  const trees = FLAT_SIZES.map((count) => ({ count, root: flatTree(paths.benchDir, count) }));
  ctx.progress('scale: flat directories ready');
  const rows = [];
  const times = [];
  let worstWait = 0;
  for (const tree of trees) {
    const rpc = serve(paths, tree.root);
    try {
      await rpc.initialize();
      const runs = [];
      const cpu0 = cpuMicros(rpc.pid);
      for (let rep = 0; rep < reps; rep += 1) runs.push(await pageAll(rpc, tree.count));
      // The server's CPU per resource: what the rate would be on an idle core, whatever the load.
      const cpuPer = (cpuMicros(rpc.pid) - cpu0) / (reps * tree.count);
      const ms = median(runs);
      times.push(ms);
      let waits = [];
      if (tree.count === FLAT_SIZES.at(-1)) {
        // A read sent while each page is in flight: how long it waits behind the page.
        const uri = `file://${join(tree.root, 'f' + '0'.repeat(String(tree.count - 1).length) + '.txt')}`;
        const pending = [];
        await pageAll(rpc, tree.count, () => {
          const t0 = performance.now();
          pending.push(rpc.request('resources/read', { uri }).then(() => performance.now() - t0));
        });
        waits = await Promise.all(pending);
        worstWait = Math.max(...waits);
      }
      rows.push([
        fmtInt(tree.count),
        fmtMs(ms, 0),
        fmtInt(tree.count / (ms / 1000)),
        `${cpuPer.toFixed(1)} µs (${fmtInt(1e6 / cpuPer)}/s)`,
        waits.length === 0 ? '' : `${fmtMs(percentile(waits, 50))} / ${fmtMs(worstWait)}`,
        fmtMB(memoryOf(rpc.pid).hwm),
      ]);
    } finally {
      await rpc.close();
    }
    ctx.progress(`scale: flat ${fmtInt(tree.count)} paged`);
  }
  const exponent = growthExponent(FLAT_SIZES, times);
  printTable(
    `Scale 1. one flat directory, full paging over stdio (median of ${reps}; growth exponent ${exponent.toFixed(2)})`,
    [
      'files',
      'full listing',
      'resources/s',
      'server CPU per resource (its rate)',
      'read during a page p50 / max',
      'VmHWM',
    ],
    rows,
  );
  const rate = FLAT_SIZES.at(-1) / (times.at(-1) / 1000);
  ctx.target('scale: 100k flat directory pages ≥ 30,000 resources/s', fmtInt(rate), rate >= 30_000);
  ctx.target(
    'scale: flat paging growth exponent ≤ 1.05 (10k/30k/100k)',
    exponent.toFixed(2),
    exponent <= 1.05,
  );
}

export async function million(ctx, paths, state) {
  const started = performance.now();
  const big = millionTree();
  ctx.progress(
    `scale: 1M tree ${big.reused ? 'reused' : 'built'} in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
  const small = listTree(paths.benchDir, 100, 1000);
  const firsts = {};
  const rows = [];
  let afterRss = Infinity;
  let pollCpu = NaN;
  const runs = [
    { tree: small, watch: 'native' },
    { tree: big, watch: 'native' },
    { tree: big, watch: 'poll' },
  ];
  for (const { tree, watch } of runs) {
    const extra = ['--state-dir', state, ...(watch === 'poll' ? ['--watch', 'poll'] : [])];
    const rpc = serve(paths, tree.root, extra);
    try {
      // A 2025-era client listens for list changes from `initialized` on: the tree watcher (or the
      // poller) runs from here.
      await rpc.initialize(120_000);
      const samples = [];
      let warmCpu = 0;
      for (let i = 0; i <= FIRST_PAGE_SAMPLES; i += 1) {
        // The first page is asked at once (beside the watcher's first scan); the warm ones once the
        // server is quiet, so they time a page, not the scan sharing its thread.
        if (i === 1) {
          await quiet(rpc.pid);
          warmCpu = cpuMicros(rpc.pid);
        }
        const t0 = performance.now();
        await rpc.request('resources/list', {}, 120_000);
        samples.push(performance.now() - t0);
      }
      // The server's CPU for one warm first page: what its time would be on an idle core.
      const firstCpu = (cpuMicros(rpc.pid) - warmCpu) / FIRST_PAGE_SAMPLES / 1000;
      if (watch === 'native') firsts[tree.count] = median(samples.slice(1));
      const idle = memoryOf(rpc.pid).rss;
      const pageCpu0 = cpuMicros(rpc.pid);
      const ms = await pageAll(rpc, tree.count);
      const cpuPer = (cpuMicros(rpc.pid) - pageCpu0) / tree.count;
      const after = memoryOf(rpc.pid).rss;
      // Idle for 10 s: the RSS it settles at, and the CPU it spends (the poller's rounds).
      const cpu0 = cpuMicros(rpc.pid);
      await new Promise((resolve) => setTimeout(resolve, 10_000));
      const cpuShare = (cpuMicros(rpc.pid) - cpu0) / 10_000_000;
      const settled = memoryOf(rpc.pid).rss;
      if (tree === big && watch === 'native') afterRss = after;
      if (watch === 'poll') pollCpu = cpuShare;
      rows.push([
        fmtInt(tree.count),
        watch,
        fmtMs(samples[0]),
        fmtMs(median(samples.slice(1))),
        fmtMs(firstCpu),
        fmtMs(ms, 0),
        fmtInt(tree.count / (ms / 1000)),
        `${cpuPer.toFixed(1)} µs (${fmtInt(1e6 / cpuPer)}/s)`,
        fmtMB(idle),
        fmtMB(after),
        fmtMB(settled),
        `${(cpuShare * 100).toFixed(1)}%`,
      ]);
    } finally {
      await rpc.close();
    }
    ctx.progress(`scale: ${fmtInt(tree.count)} (${watch}) done`);
  }
  const exponent = growthExponent(
    [small.count, big.count],
    [firsts[small.count], firsts[big.count]],
  );
  printTable(
    `Scale 2. a million files over stdio (first-page growth exponent 100k → 1M: ${exponent.toFixed(2)})`,
    [
      'files',
      'watching',
      'first page (1st)',
      'first page (median)',
      'its server CPU',
      'full listing',
      'resources/s',
      'server CPU per resource (its rate)',
      'RSS idle',
      'RSS after listing',
      'RSS 10 s later',
      'CPU idle (10 s)',
    ],
    rows,
  );
  ctx.target('scale: 1M first page ≤ 30 ms', fmtMs(firsts[big.count]), firsts[big.count] <= 30);
  ctx.target('scale: 1M first-page growth exponent ≤ 0.1', exponent.toFixed(2), exponent <= 0.1);
  ctx.target(
    'scale: 1M RSS after listing ≤ 150 MB (native watching)',
    fmtMB(afterRss),
    afterRss <= 150 * 1024 * 1024,
  );
  ctx.target(
    'scale: 1M polling fallback idle ≤ 5% of a core',
    `${(pollCpu * 100).toFixed(1)}%`,
    pollCpu <= 0.05,
  );
}

/** Resolves once the process spends under 5% of a core over half a second (at most 60 s). */
async function quiet(pid) {
  const deadline = performance.now() + 60_000;
  while (performance.now() < deadline) {
    const before = cpuMicros(pid);
    await new Promise((resolve) => setTimeout(resolve, 500));
    if (cpuMicros(pid) - before < 25_000) return;
  }
}

/** 1,000 directories of 1,000 empty files under the OS temp directory, reused when complete. */
export function millionTree(root = join(tmpdir(), 'reservoir-bench-1m')) {
  const count = 1_000_000;
  const marker = `${root}.complete`;
  if (existsSync(marker)) return { root, count, reused: true };
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  for (let d = 0; d < 1000; d += 1) {
    const dir = join(root, `d${String(d).padStart(3, '0')}`);
    mkdirSync(dir);
    for (let f = 0; f < 1000; f += 1)
      writeFileSync(join(dir, `f${String(f).padStart(3, '0')}`), '');
  }
  writeFileSync(marker, ''); // beside the tree, so it is not listed
  return { root, count, reused: false };
}

/** `tree` (`{ root, count }`, directories d… of files): the list section's 100k tree unless given. */
export async function newDirectories(
  ctx,
  paths,
  state,
  tree = listTree(paths.benchDir, 100, 1000),
) {
  const rpc = new StdioRpc(process.execPath, [
    paths.cli,
    'serve',
    tree.root,
    '--state-dir',
    state,
    '--log-level',
    'warn',
  ]);
  const created = [];
  const rows = [];
  try {
    await rpc.initialize(120_000);
    const search = async (query) => {
      const result = await rpc.request(
        'tools/call',
        { name: 'search_resources', arguments: { query, limit: 1 } },
        120_000,
      );
      if (result.isError === true)
        throw new Error(`search_resources ${query}: ${JSON.stringify(result.content)}`);
      return result.structuredContent;
    };
    // The tree's first directory (listTree names them d00…d99): a file written there is the
    // "existing directory" case, beside a new nested one.
    const existing = readdirSync(tree.root)
      .filter((name) => /^d\d+$/.test(name))
      .sort()[0];
    if (existing === undefined) throw new Error(`no d… directory in ${tree.root}`);
    let changedAt;
    rpc.onNotification = (message) => {
      if (message.method === 'notifications/resources/list_changed')
        changedAt ??= performance.now();
    };
    /** Writes one new file (in `existing`, or in a new nested directory) and times it. */
    const change = async (kind, i) => {
      const word = `wombat${Date.now().toString(36)}x${i}`;
      const dir =
        kind === 'existing directory'
          ? join(tree.root, existing)
          : join(tree.root, `new-${word}`, 'a', 'b');
      changedAt = undefined;
      const started = performance.now();
      if (kind === 'existing directory') {
        if (!existsSync(dir)) throw new Error(`${dir} should exist: it would be a new directory`);
      } else mkdirSync(dir, { recursive: true });
      const file = join(dir, `${word}.txt`);
      writeFileSync(file, `a ${word} appeared\n`);
      created.push(kind === 'existing directory' ? file : join(tree.root, `new-${word}`));
      let found;
      for (;;) {
        found = await search(word);
        if (found.hits.length > 0) break;
        if (performance.now() - started > 120_000)
          throw new Error(`${kind}: a new file was not searchable within 120 s`);
      }
      const searchable = performance.now() - started;
      const deadline = performance.now() + 10_000;
      while (changedAt === undefined && performance.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 5));
      const changed = changedAt === undefined ? undefined : changedAt - started;
      // The next change is timed on its own: after the watcher's batch, and after the hub's
      // minimum interval between two list_changed (1 s, core/subscriptions.ts) — a change sooner
      // would time that coalescing, not the change.
      const since = changedAt === undefined ? 0 : performance.now() - changedAt;
      await new Promise((resolve) => setTimeout(resolve, Math.max(150, LIST_INTERVAL_MS - since)));
      return { searchable, changed, building: found.indexing !== undefined };
    };
    const row = (kind, samples) => {
      const searchable = samples.map((s) => s.searchable);
      const changed = samples.flatMap((s) => (s.changed === undefined ? [] : [s.changed]));
      rows.push([
        kind,
        `${fmtMs(percentile(changed, 50))} / ${fmtMs(percentile(changed, 99))}`,
        `${fmtMs(percentile(searchable, 50))} / ${fmtMs(percentile(searchable, 99))}`,
      ]);
      return { searchable, changed };
    };
    // While the index is built (the first search opens it): a file in a new nested directory is
    // found without waiting for the build to end — the build's batch in flight at most, then the
    // time a search takes while the build runs.
    const t0 = performance.now();
    let answer = await search(existing);
    const during = [];
    while (answer.indexing !== undefined && during.length < DURING_BUILD_REPS) {
      during.push(await change('new nested directory', during.length));
      answer = await search(existing);
    }
    while (answer.indexing !== undefined) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      answer = await search(existing);
    }
    ctx.progress(
      `scale: index of ${fmtInt(tree.count)} built in ${fmtMs(performance.now() - t0, 0)}`,
    );
    for (const kind of ['existing directory', 'new nested directory']) {
      const samples = [];
      for (let i = 0; i < NEW_DIR_REPS; i += 1) samples.push(await change(kind, i));
      const { searchable, changed } = row(kind, samples);
      if (kind === 'new nested directory') {
        ctx.target(
          'scale: new file in a new directory → searchable p99 ≤ 100 ms at 100k',
          fmtMs(percentile(searchable, 99)),
          percentile(searchable, 99) <= 100,
        );
        ctx.target(
          'scale: new file in a new directory → list_changed p99 ≤ 100 ms at 100k',
          fmtMs(percentile(changed, 99)),
          percentile(changed, 99) <= 100,
        );
      }
    }
    if (during.length > 0) {
      const before = during.filter((s) => s.building).length;
      row(
        `new nested dir. during the build (${before} of ${during.length} found before its end)`,
        during,
      );
    }
  } finally {
    await rpc.close();
    for (const path of created) rmSync(path, { recursive: true, force: true });
  }
  printTable(
    `Scale 3. a new file → list_changed and → searchable, ${fmtInt(tree.count)} files indexed (${NEW_DIR_REPS} each; during the build, up to ${DURING_BUILD_REPS})`,
    ['where', 'list_changed p50 / p99', 'searchable p50 / p99'],
    rows,
  );
}
