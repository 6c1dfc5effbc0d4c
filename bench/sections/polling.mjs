/**
 * Section — the files provider's polling fallback (`--watch poll`, or native watching refused) on
 * the 100,000-file tree: CPU at idle, event-loop delay p99 while it polls, time to notice a new file,
 * and the first scan; beside it, one synchronous walk of the tree, which the fallback used to do
 * every second. Runs in its own process so nothing else shares its event loop.
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
  const out = execFileSync(process.execPath, [join(paths.repo, 'bench/peers/poll-probe.mjs'), join(paths.repo, 'dist'), tree.root, String(idleMs)], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  const r = JSON.parse(out.trim().split('\n').at(-1));
  progress(`polling: load average ${loadavg().map((l) => l.toFixed(2)).join(' ')} (a busy machine inflates event-loop delay for every process)`);
  printTable(`Polling fallback — ${fmtInt(tree.count)} files in 100 directories, ${idleMs / 1000} s idle, polling every 1 s`, ['measure', 'value'], [
    ['CPU at idle (% of one core)', `${r.idleCpuPercent.toFixed(2)}%`],
    ['event-loop delay p99', fmtMs(r.loopDelayP99Ms, 2)],
    ['event-loop delay max', fmtMs(r.loopDelayMaxMs, 2)],
    ['event-loop delay p99 of the same process idle, no poller (the machine\'s noise floor)', fmtMs(r.floorP99Ms, 2)],
    ['new file → list_changed', fmtMs(r.detectMs, 0)],
    ['first scan (async, before the listener is live)', fmtMs(r.firstScanMs, 0)],
    ['list changes reported while idle', String(r.idleChanges)],
    ['before: one synchronous walk of the tree (was done every second)', fmtMs(r.syncWalkMs, 1)],
  ]);
  target('polling fallback on 100,000 files ≤ 5% of a core at idle', `${r.idleCpuPercent.toFixed(2)}%`, r.idleCpuPercent <= 5);
  target('polling fallback event-loop delay p99 ≤ 20 ms', fmtMs(r.loopDelayP99Ms, 2), r.loopDelayP99Ms <= 20);
}
