// Runs the files provider in polling mode on ROOT with a list-change listener, then reports, as one
// JSON line: time to the first scan, CPU and event-loop delay over IDLE_MS of idle rounds, how long
// a new file takes to be noticed, and — for comparison — one synchronous walk of the whole tree
// (what the fallback did every second before). Usage: node poll-probe.mjs DIST ROOT IDLE_MS
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist, root, idleArg] = process.argv.slice(2);
const idleMs = Number(idleArg);
const { filesProvider } = await import(pathToFileURL(join(dist, 'providers/files/index.js')).href);

const walkStart = performance.now();
const walk = (dir) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) walk(join(dir, entry.name));
};
walk(root);
const syncWalkMs = performance.now() - walkStart;

// The noise floor: the same measure with nothing running (the machine is shared).
const floor = monitorEventLoopDelay({ resolution: 10 });
floor.enable();
await new Promise((resolve) => setTimeout(resolve, idleMs / 2));
floor.disable();

// The poller's timers are unref'd (they never hold a server open); this one keeps the probe alive.
const keepAlive = setInterval(() => undefined, 1000);
const provider = filesProvider({ root, watch: { mode: 'poll' } });
let notified;
let changes = 0;
const scanStart = performance.now();
const stop = await provider.onListChanged(() => {
  changes += 1;
  notified?.();
});
const firstScanMs = performance.now() - scanStart;

const delay = monitorEventLoopDelay({ resolution: 10 });
delay.enable();
const cpu0 = process.cpuUsage();
const t0 = performance.now();
await new Promise((resolve) => setTimeout(resolve, idleMs));
const wall = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
delay.disable();

const probe = join(root, 'd00', `poll-probe-${process.pid}.txt`);
const seen = new Promise((resolve) => (notified = resolve));
const written = performance.now();
writeFileSync(probe, 'x');
await seen;
const detectMs = performance.now() - written;
rmSync(probe, { force: true });
stop();
clearInterval(keepAlive);
await provider.close?.();
console.log(
  JSON.stringify({
    syncWalkMs,
    firstScanMs,
    idleCpuPercent: ((cpu.user + cpu.system) / 1000 / wall) * 100,
    loopDelayP99Ms: delay.percentile(99) / 1e6,
    loopDelayMaxMs: delay.max / 1e6,
    floorP99Ms: floor.percentile(99) / 1e6,
    idleChanges: changes - 1,
    detectMs,
  }),
);
process.exit(0);
