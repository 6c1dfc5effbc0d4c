/**
 * One watcher library in a process of its own (so its memory is its own): watch a tree, report how
 * long it took to be ready and the RSS it added, then time 40 writes to one file from write to event.
 * Usage: node bench/lib/watcher-probe.mjs parcel|chokidar|fs.watch TREE FILE
 * Prints one JSON line: { ready_ms, rss_added, p50, p99, events }.
 */
import fs from 'node:fs';

const [kind, tree, file] = process.argv.slice(2);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const rss0 = process.memoryUsage().rss;
let t0 = 0;
const latencies = [];
const seen = (path) => {
  if (path === file && t0 !== 0) {
    latencies.push(performance.now() - t0);
    t0 = 0;
  }
};
const started = performance.now();
let stop;
if (kind === 'parcel') {
  const { subscribe } = await import('@parcel/watcher');
  const subscription = await subscribe(
    tree,
    (_error, events) => events.forEach((e) => seen(e.path)),
    { ignore: ['**/.git'] },
  );
  stop = () => subscription.unsubscribe();
} else if (kind === 'chokidar') {
  const { default: chokidar } = await import('chokidar');
  const watcher = chokidar.watch(tree, { ignoreInitial: true });
  watcher.on('all', (_event, path) => seen(path));
  await new Promise((resolve) => watcher.on('ready', resolve));
  stop = () => watcher.close();
} else {
  const watcher = fs.watch(tree, { recursive: true }, (_event, name) => seen(`${tree}/${name}`));
  stop = async () => watcher.close();
}
const readyMs = performance.now() - started;
globalThis.gc?.();
const rssAdded = process.memoryUsage().rss - rss0;
await sleep(300);
for (let i = 0; i < 40; i += 1) {
  t0 = performance.now();
  fs.writeFileSync(file, `write ${i}`);
  await sleep(120);
}
await stop();
latencies.sort((a, b) => a - b);
const pick = (p) =>
  latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))];
console.log(
  JSON.stringify({
    ready_ms: readyMs,
    rss_added: rssAdded,
    p50: pick(50),
    p99: pick(99),
    events: latencies.length,
  }),
);
process.exit(0);
