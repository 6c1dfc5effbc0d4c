/**
 * HTTP provider read throughput, in process through `Registry.read`, against a local upstream
 * (node:http on 127.0.0.1, in a worker thread so it does not share the provider's event loop).
 * A 4 KiB JSON resource, read for a fixed time at 1 and 16 reads in flight, three ways:
 *   - fresh cache: `Cache-Control: max-age=3600` — served from the cache, no upstream request;
 *   - warm conditional cache: `max-age=0` + `ETag` — every read revalidates, the upstream answers 304;
 *   - no cache: `no-store` — every read is a full 200 response (for contrast);
 *   - and, as the floor, bare node:http keep-alive GETs with If-None-Match (no provider at all).
 * Prints reads/s and upstream requests per read; numbers only.
 *
 * Usage: npm run build && node bench/sections/http-provider.mjs   (or as a bench section)
 */
import { once } from 'node:events';
import { Agent, request } from 'node:http';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { fmtInt, printTable } from '../lib/stats.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '../..');

/** The upstream: three routes, counting requests and 304s; reports counts on request. */
const UPSTREAM = `
const { createServer } = require('node:http');
const { parentPort } = require('node:worker_threads');
const body = JSON.stringify({ items: Array.from({ length: 64 }, (_, i) => ({ id: i, name: 'item-' + String(i).padStart(4, '0'), tags: ['a', 'b'] })) }).padEnd(4096, ' ');
const counts = { requests: 0, notModified: 0 };
const routes = {
  '/fresh': { 'cache-control': 'max-age=3600', etag: '"f"' },
  '/conditional': { 'cache-control': 'max-age=0', etag: '"c"' },
  '/nostore': { 'cache-control': 'no-store' },
};
const server = createServer((req, res) => {
  counts.requests += 1;
  const headers = routes[req.url];
  if (headers === undefined) return void res.writeHead(404).end();
  if (headers.etag !== undefined && req.headers['if-none-match'] === headers.etag) {
    counts.notModified += 1;
    return void res.writeHead(304, headers).end();
  }
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers }).end(body);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
parentPort.on('message', (m) => {
  if (m === 'counts') parentPort.postMessage({ counts: { ...counts } });
  if (m === 'reset') { counts.requests = 0; counts.notModified = 0; parentPort.postMessage({ reset: true }); }
});
`;

async function ask(worker, message) {
  worker.postMessage(message);
  const [reply] = await once(worker, 'message');
  return reply;
}

/** Bare node:http keep-alive GETs with If-None-Match (each answered 304), `inFlight` loops for `ms`: the floor to compare with. */
async function bareConditionalGets(port, inFlight, ms) {
  const agent = new Agent({ keepAlive: true });
  const deadline = performance.now() + ms;
  let done = 0;
  const get = () =>
    new Promise((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path: '/conditional',
          agent,
          headers: { 'if-none-match': '"c"' },
        },
        (res) => {
          res.resume();
          res.on('end', resolve);
        },
      );
      req.on('error', reject);
      req.end();
    });
  const loop = async () => {
    while (performance.now() < deadline) {
      await get();
      done += 1;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, loop));
  agent.destroy();
  return done;
}

/** Reads `uri` with `inFlight` loops for `ms`; returns reads completed. */
async function closedLoopReads(registry, uri, inFlight, ms) {
  const signal = new AbortController().signal;
  const deadline = performance.now() + ms;
  let done = 0;
  const loop = async () => {
    while (performance.now() < deadline) {
      const result = await registry.read(uri, { signal });
      if (result.contents.length !== 1) throw new Error(`unexpected read result for ${uri}`);
      done += 1;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, loop));
  return done;
}

export async function httpProviderSection(ctx = {}) {
  const progress = ctx.progress ?? ((text) => process.stderr.write(`${text}\n`));
  const target = ctx.target ?? (() => undefined);
  const readMs = ctx.opts?.readMs ?? 1500;
  const dist = (path) => pathToFileURL(join(ctx.paths?.repo ?? repo, 'dist', path)).href;
  const { Registry } = await import(dist('core/registry.js'));
  const { sdkTemplateEngine } = await import(dist('mcp/templates.js'));
  const { httpProvider } = await import(dist('providers/http/index.js'));

  const worker = new Worker(UPSTREAM, { eval: true });
  try {
    const { port } = await once(worker, 'message').then(([m]) => m);
    const registry = new Registry({ templateEngine: sdkTemplateEngine }).mount(
      httpProvider({
        name: 'bench',
        baseUrl: `http://127.0.0.1:${port}/`,
        allowPrivateNetworks: true,
        endpoints: [
          { name: 'fresh', uri: 'fresh', upstream: 'fresh' },
          { name: 'conditional', uri: 'conditional', upstream: 'conditional' },
          { name: 'nostore', uri: 'nostore', upstream: 'nostore' },
        ],
      }),
    );
    const rows = [];
    const measured = {};
    try {
      for (const [label, path] of [
        ['fresh cache (max-age=3600)', 'fresh'],
        ['warm conditional cache (max-age=0 + ETag → 304)', 'conditional'],
        ['no cache (no-store → 200)', 'nostore'],
      ]) {
        if (path === 'conditional') {
          for (const inFlight of [1, 16]) {
            await bareConditionalGets(port, inFlight, Math.min(300, readMs));
            await ask(worker, 'reset');
            const gets = await bareConditionalGets(port, inFlight, readMs);
            const { counts } = await ask(worker, 'counts');
            const perSecond = (gets / readMs) * 1000;
            measured[`bare/${inFlight}`] = perSecond;
            rows.push([
              'bare node:http GET + If-None-Match → 304 (floor)',
              String(inFlight),
              fmtInt(Math.round(perSecond)),
              (counts.requests / gets).toFixed(2),
              fmtInt(counts.notModified),
            ]);
          }
        }
        const uri = `api://bench/${path}`;
        await closedLoopReads(registry, uri, 4, Math.min(300, readMs)); // warm-up: connections, JIT, cache
        for (const inFlight of [1, 16]) {
          await ask(worker, 'reset');
          const reads = await closedLoopReads(registry, uri, inFlight, readMs);
          const { counts } = await ask(worker, 'counts');
          const perSecond = (reads / readMs) * 1000;
          measured[`${path}/${inFlight}`] = perSecond;
          rows.push([
            label,
            String(inFlight),
            fmtInt(Math.round(perSecond)),
            (counts.requests / reads).toFixed(2),
            fmtInt(counts.notModified),
          ]);
          progress(
            `http-provider: ${path} × ${inFlight}: ${fmtInt(Math.round(perSecond))} reads/s`,
          );
        }
      }
    } finally {
      await registry.close();
    }
    printTable(
      `HTTP provider reads/s, in process (Registry.read), 4 KiB JSON from a local upstream, ${readMs / 1000} s per row`,
      ['cache state', 'in flight', 'reads/s', 'upstream req/read', '304s'],
      rows,
    );
    const fresh = measured['fresh/16'] ?? 0;
    const conditional = measured['conditional/16'] ?? 0;
    const bare = measured['bare/16'] ?? 0;
    target(
      'HTTP provider fresh-cache reads ≥ 100,000/s (16 in flight)',
      `${fmtInt(Math.round(fresh))}/s`,
      fresh >= 100_000,
    );
    target(
      'HTTP provider revalidating (304) reads ≥ 50% of bare node:http conditional GETs (16 in flight)',
      `${fmtInt(Math.round(conditional))}/s vs ${fmtInt(Math.round(bare))}/s (${bare > 0 ? Math.round((conditional / bare) * 100) : 0}%)`,
      bare > 0 && conditional >= bare * 0.5,
    );
  } finally {
    await worker.terminate();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  httpProviderSection().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
