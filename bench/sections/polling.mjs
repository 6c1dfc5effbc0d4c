/**
 * Section — the files provider's polling fallback (`--watch poll`, or native watching refused) on
 * the 100,000-file tree, in one process, three phases of the same length: nothing polling (the
 * baseline: the machine's noise), a list-change listener, and a real search index listening (the
 * poller then tracks every file's signature, re-stating a bounded slice each round). Beside them,
 * one synchronous walk stating every file, which the fallback used to do every second while an
 * index listened.
 */
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { listTree } from '../lib/fixtures.mjs';
import { fmtInt, fmtMs, printTable } from '../lib/stats.mjs';

export async function pollingSection(ctx) {
  const { paths, progress, target } = ctx;
  const tree = listTree(paths.benchDir, 100, 1000);
  progress(`polling: tree of ${fmtInt(tree.count)} files ${tree.reused ? 'reused' : 'built'}`);
  const idleMs = 10_000;
  const load = () =>
    loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
  const loadBefore = load();
  const out = execFileSync(
    process.execPath,
    [
      join(paths.repo, 'bench/peers/poll-probe.mjs'),
      join(paths.repo, 'dist'),
      tree.root,
      String(idleMs),
      join(paths.benchDir, 'poll-index-state'),
    ],
    {
      encoding: 'utf8',
      timeout: 600_000,
    },
  );
  const r = JSON.parse(out.trim().split('\n').at(-1));
  progress(
    `polling: load average ${loadBefore} before, ${load()} after (a busy machine inflates event-loop delay for every process)`,
  );
  const pct = (v) => `${v.toFixed(2)}%`;
  printTable(
    `Polling fallback — ${fmtInt(tree.count)} files in 100 directories, ${idleMs / 1000} s idle per phase, polling every 1 s; load average ${loadBefore}`,
    [
      'phase',
      'CPU at idle (% of one core)',
      'event-loop delay p99',
      'max',
      'first scan / ready',
      'new file → noticed',
    ],
    [
      [
        'baseline: no poller (same process)',
        pct(r.floor.cpuPercent),
        fmtMs(r.floor.p99Ms, 2),
        fmtMs(r.floor.maxMs, 1),
        '—',
        '—',
      ],
      [
        'list-change listener',
        pct(r.list.cpuPercent),
        fmtMs(r.list.p99Ms, 2),
        fmtMs(r.list.maxMs, 1),
        fmtMs(r.listScanMs, 0),
        `${fmtMs(r.listDetectMs, 0)} (list_changed)`,
      ],
      [
        'search index listening (file signatures)',
        pct(r.indexed.cpuPercent),
        fmtMs(r.indexed.p99Ms, 2),
        fmtMs(r.indexed.maxMs, 1),
        `${fmtMs(r.indexReadyMs, 0)} (index catch-up + scan)`,
        `${fmtMs(r.indexDetectMs, 0)} (onChanges)`,
      ],
    ],
  );
  progress(
    `polling: before — one synchronous walk stating every file (was done every second with an index listening): ${fmtMs(r.syncWalkMs, 1)}; list changes reported while idle: ${r.listIdleChanges}`,
  );
  const worst = Math.max(r.list.cpuPercent, r.indexed.cpuPercent);
  const worstP99 = Math.max(r.list.p99Ms, r.indexed.p99Ms);
  target(
    'polling fallback on 100,000 files ≤ 5% of a core at idle (search index listening)',
    pct(worst),
    worst <= 5,
  );
  target(
    'polling fallback event-loop delay p99 ≤ 20 ms (search index listening)',
    fmtMs(worstP99, 2),
    worstP99 <= 20,
  );
}
