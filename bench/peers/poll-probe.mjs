// Runs the files provider in polling mode on ROOT and reports, as one JSON line, three phases of
// IDLE_MS each, in one process so they share the machine's state:
//   floor  — nothing polling (the machine's noise: CPU and event-loop delay of an idle process);
//   list   — a list-change listener only (the tree poller stats directories);
//   index  — a real search index (SearchService, state in STATE_DIR) listening for every change, so
//            the poller also tracks each file's signature and re-stats a bounded slice a round.
// Also: the first scans, how long a new file takes to reach list_changed and the index's change
// listener, and, for comparison, one synchronous walk that stats every file (what the fallback did
// every round while an index listened). Usage: node poll-probe.mjs DIST ROOT IDLE_MS STATE_DIR
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist, root, idleArg, stateDir] = process.argv.slice(2);
const idleMs = Number(idleArg);
const load = async (path) => import(pathToFileURL(join(dist, path)).href);
const { filesProvider } = await load('providers/files/index.js');
const { Registry } = await load('core/registry.js');
const { SearchService } = await load('search/service.js');
const { silentLogger } = await load('core/log.js');

const walkStart = performance.now();
const walk = (dir) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) walk(join(dir, entry.name));
    else statSync(join(dir, entry.name), { bigint: true });
  }
};
walk(root);
const syncWalkMs = performance.now() - walkStart;

/** CPU (% of one core) and event-loop delay over `ms` of doing nothing here. */
async function idle(ms) {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  delay.disable();
  return {
    cpuPercent: ((cpu.user + cpu.system) / 1000 / wall) * 100,
    p99Ms: delay.percentile(99) / 1e6,
    maxMs: delay.max / 1e6,
  };
}

// The poller's timers are unref'd (they never hold a server open); this one keeps the probe alive.
const keepAlive = setInterval(() => undefined, 1000);
const floor = await idle(idleMs);

// Phase list: list-change listener only.
let provider = filesProvider({ root, watch: { mode: 'poll' } });
let notified;
let listChanges = 0;
let t0 = performance.now();
let stop = await provider.onListChanged(() => {
  listChanges += 1;
  notified?.();
});
const listScanMs = performance.now() - t0;
const list = await idle(idleMs);
const listIdleChanges = listChanges;
let probe = join(root, 'd00', `poll-probe-${process.pid}.txt`);
let seen = new Promise((resolve) => (notified = resolve));
t0 = performance.now();
writeFileSync(probe, 'x');
await seen;
const listDetectMs = performance.now() - t0;
rmSync(probe, { force: true });
stop();
await provider.close?.();

// Phase index: a search index listening (and a list listener, as a server has).
provider = filesProvider({ root, watch: { mode: 'poll' } });
const registry = new Registry().mount(provider);
t0 = performance.now();
const service = new SearchService(registry, { stateDir }, silentLogger);
await service.ready;
const indexReadyMs = performance.now() - t0;
let onChanges;
const stopChanges = await provider.onChanges((changes) => onChanges?.(changes));
stop = await provider.onListChanged(() => undefined);
const indexed = await idle(idleMs);
probe = join(root, 'd50', `poll-probe-${process.pid}.txt`);
seen = new Promise(
  (resolve) =>
    (onChanges = (changes) =>
      changes.some((c) => c.uri.endsWith(`poll-probe-${process.pid}.txt`)) && resolve()),
);
t0 = performance.now();
writeFileSync(probe, 'narwhal');
await seen;
const indexDetectMs = performance.now() - t0;
rmSync(probe, { force: true });
stopChanges();
stop();
await service.close();
await registry.close();
clearInterval(keepAlive);
console.log(
  JSON.stringify({
    syncWalkMs,
    floor,
    listScanMs,
    list,
    listIdleChanges,
    listDetectMs,
    indexReadyMs,
    indexed,
    indexDetectMs,
  }),
);
process.exit(0);
