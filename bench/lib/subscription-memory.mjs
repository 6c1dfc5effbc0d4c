/**
 * Server memory per idle subscription, measured in-process where the heap can be read exactly: a
 * Reservoir over in-memory stdio streams, a 2025 client written by hand, N `resources/subscribe`
 * requests, a forced GC before and after. Run with --expose-gc.
 * Usage: node --expose-gc bench/lib/subscription-memory.mjs TREE_ROOT N
 * Prints one JSON line: { subscriptions, heap_per_sub, rss_per_sub, watches }.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { createReservoir, filesProvider } from 'mcp-reservoir';

const [root, countText] = process.argv.slice(2);
const count = Number(countText);
const files = [];
for (const dir of readdirSync(root).sort())
  for (const name of readdirSync(join(root, dir)).sort()) files.push(join(root, dir, name));
if (files.length < count + 1) throw new Error(`need ${count + 1} files under ${root}`);

const stdin = new PassThrough();
const stdout = new PassThrough();
const reservoir = createReservoir({ providers: [filesProvider({ root })] });
reservoir.serveStdio({ stdin, stdout });
const pending = new Map();
let buffered = '';
stdout.setEncoding('utf8');
stdout.on('data', (chunk) => {
  buffered += chunk;
  let nl;
  while ((nl = buffered.indexOf('\n')) >= 0) {
    const message = JSON.parse(buffered.slice(0, nl));
    buffered = buffered.slice(nl + 1);
    if (message.id !== undefined && pending.has(message.id)) {
      pending.get(message.id)(message);
      pending.delete(message.id);
    }
  }
});
let nextId = 1;
const request = (method, params) =>
  new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, (message) =>
      message.error ? reject(new Error(JSON.stringify(message.error))) : resolve(message.result),
    );
    stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
  });
const measure = () => {
  globalThis.gc();
  globalThis.gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed + m.external, rss: m.rss };
};

await request('initialize', {
  protocolVersion: '2025-11-25',
  capabilities: {},
  clientInfo: { name: 'bench', version: '1' },
});
stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
// One subscription first, so the tree watcher and the code paths are warm before measuring.
await request('resources/subscribe', { uri: pathToFileURL(files[0]).href });
await new Promise((resolve) => setTimeout(resolve, 200));
const before = measure();
for (let i = 1; i <= count; i += 500) {
  const batch = [];
  for (let j = i; j < Math.min(i + 500, count + 1); j += 1)
    batch.push(request('resources/subscribe', { uri: pathToFileURL(files[j]).href }));
  await Promise.all(batch);
}
await new Promise((resolve) => setTimeout(resolve, 200));
const after = measure();
const stats = reservoir.subscriptions.stats();
console.log(
  JSON.stringify({
    subscriptions: count,
    heap_per_sub: (after.heap - before.heap) / count,
    rss_per_sub: (after.rss - before.rss) / count,
    watches: stats.watches,
  }),
);
await reservoir.close();
process.exit(0);
