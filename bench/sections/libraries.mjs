/**
 * Section — maintained libraries against our code on the hot path each would take, in one process
 * and one run, alternating A and B over `reps` rounds (the best round counts; CPU time per operation
 * is what is compared, load average printed beside it):
 *   - byte-bounded LRU (files' recent-file cache, the HTTP provider's response cache): the Map-
 *     reordering cache we had (kept here as the baseline) vs `lru-cache` with maxSize/sizeCalculation,
 *     and `BoundedCache` as it is now (providers/utils/bounded-cache.ts, on lru-cache); 80% gets /
 *     20% sets over 8,192 keys of ~4 KiB, bound 16 MiB (evicting all along);
 *   - HTTP caching decisions (providers/http/cache.ts): on a read served from the cache (is it still
 *     fresh?), on storing a response (may it be stored, until when?) and on a 304 (refresh the
 *     entry): ours vs `http-cache-semantics`' CachePolicy;
 *   - the audit log's file sink (policy/audit-sink.ts, rotating by size): 100,000 lines of ~300 bytes
 *     in batches of 16, rotating at 1 MiB keeping 3, vs `rotating-file-stream` with the same size
 *     and count.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';
import { printTable } from '../lib/stats.mjs';

export async function librariesSection(ctx) {
  const { paths, progress } = ctx;
  const reps = Math.max(ctx.opts?.reps ?? 3, 3);
  const load = () =>
    loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
  const dist = (p) => import(pathToFileURL(join(paths.repo, 'dist', p)).href);
  const require = createRequire(join(paths.repo, 'package.json'));
  const { BoundedCache } = await dist('providers/utils/bounded-cache.js');
  const { freshness } = await dist('providers/http/cache.js');
  const { fileSink } = await dist('policy/audit-sink.js');
  const { LRUCache } = await import(pathToFileURL(require.resolve('lru-cache')).href);
  const CachePolicy = require('http-cache-semantics');
  const rfs = await import(pathToFileURL(require.resolve('rotating-file-stream')).href);
  const loadBefore = load();

  /** The byte-bounded LRU as it was before lru-cache: a Map reordered on every get. */
  class MapBoundedCache {
    entries = new Map();
    used = 0;
    constructor(maxBytes) {
      this.maxBytes = maxBytes;
    }
    get(key) {
      const entry = this.entries.get(key);
      if (entry !== undefined) {
        this.entries.delete(key);
        this.entries.set(key, entry);
      }
      return entry;
    }
    set(key, entry) {
      const old = this.entries.get(key);
      if (old !== undefined) {
        this.entries.delete(key);
        this.used -= old.bytes;
      }
      if (entry.bytes > this.maxBytes) return;
      this.entries.set(key, entry);
      this.used += entry.bytes;
      for (const [oldest, evicted] of this.entries) {
        if (this.used <= this.maxBytes) break;
        this.entries.delete(oldest);
        this.used -= evicted.bytes;
      }
    }
  }

  /** CPU ns per operation of `fn(n)` doing n operations; the best of `reps` alternated runs. */
  const cpuPerOp = (fn, n) => {
    const c0 = process.cpuUsage();
    fn(n);
    const c = process.cpuUsage(c0);
    return ((c.user + c.system) * 1000) / n;
  };
  const best = (variants, n) => {
    const out = variants.map(() => Infinity);
    for (let r = 0; r < reps; r += 1)
      for (const [i, v] of variants.entries()) out[i] = Math.min(out[i], cpuPerOp(v, n));
    return out;
  };
  const ns = (v) => `${v.toFixed(0)} ns`;
  const ratio = (a, b) => `${(b / a).toFixed(2)}×`;

  // --- byte-bounded LRU ---------------------------------------------------------------------
  const KEYS = 8192;
  const keys = Array.from({ length: KEYS }, (_, i) => `file:///srv/docs/dir${i % 97}/file-${i}.md`);
  const entries = keys.map((_, i) => ({ bytes: 3072 + (i % 2048), text: 'x' }));
  // Skewed access: a few keys are hot (as recently read files are).
  const order = Array.from({ length: 1 << 16 }, (_, i) =>
    Math.floor(KEYS * Math.pow(((i * 2654435761) % 4294967296) / 4294967296, 3)),
  );
  const before = new MapBoundedCache(16 * 1024 * 1024);
  const theirs = new LRUCache({ maxSize: 16 * 1024 * 1024, sizeCalculation: (e) => e.bytes });
  const now = new BoundedCache(16 * 1024 * 1024);
  const drive = (get, set) => (n) => {
    for (let i = 0; i < n; i += 1) {
      const k = order[i & 0xffff];
      if (i % 5 === 0) set(keys[k], entries[k]);
      else if (get(keys[k]) === undefined) set(keys[k], entries[k]);
    }
  };
  const [lruOurs, lruTheirs, lruNow] = best(
    [
      drive(
        (k) => before.get(k),
        (k, e) => before.set(k, e),
      ),
      drive(
        (k) => theirs.get(k),
        (k, e) => theirs.set(k, e),
      ),
      drive(
        (k) => now.get(k),
        (k, e) => now.set(k, e),
      ),
    ],
    1_000_000,
  );
  progress(`libraries: LRU done (load ${load()})`);

  // --- HTTP caching decisions -----------------------------------------------------------------
  const req = {
    url: '/api/items',
    method: 'GET',
    headers: { host: 'upstream.local', accept: 'application/json' },
  };
  const res = {
    status: 200,
    headers: {
      'cache-control': 'max-age=60',
      etag: '"v1"',
      date: new Date().toUTCString(),
      'content-type': 'application/json',
    },
  };
  const res304 = {
    status: 304,
    headers: { 'cache-control': 'max-age=60', etag: '"v1"', date: new Date().toUTCString() },
  };
  const entry = { freshUntil: Date.now() + 60_000, etag: '"v1"' };
  const policy = new CachePolicy(req, res, { shared: false });
  let sink = 0;
  const [hitOurs, hitTheirs] = best(
    [
      (n) => {
        for (let i = 0; i < n; i += 1) if (Date.now() < entry.freshUntil) sink += 1;
      },
      (n) => {
        for (let i = 0; i < n; i += 1) if (policy.satisfiesWithoutRevalidation(req)) sink += 1;
      },
    ],
    1_000_000,
  );
  const [storeOurs, storeTheirs] = best(
    [
      (n) => {
        for (let i = 0; i < n; i += 1) if (freshness(res.headers, Date.now()).store) sink += 1;
      },
      (n) => {
        for (let i = 0; i < n; i += 1) {
          const p = new CachePolicy(req, res, { shared: false });
          if (p.storable()) sink += p.timeToLive();
        }
      },
    ],
    200_000,
  );
  const [revOurs, revTheirs] = best(
    [
      (n) => {
        for (let i = 0; i < n; i += 1) {
          const h = { 'if-none-match': entry.etag };
          const f = freshness(res304.headers, Date.now());
          sink += f.freshUntil + h['if-none-match'].length;
        }
      },
      (n) => {
        for (let i = 0; i < n; i += 1) {
          const h = policy.revalidationHeaders(req);
          const r = policy.revalidatedPolicy({ ...req, headers: h }, res304);
          sink += r.modified ? 0 : 1;
        }
      },
    ],
    200_000,
  );
  progress(`libraries: HTTP caching done (load ${load()})`);

  // --- audit file sink --------------------------------------------------------------------------
  const dir = mkdtempSync(join(tmpdir(), 'reservoir-bench-audit-'));
  const line = `${JSON.stringify({ time: new Date().toISOString(), principal: 'alice', op: 'resources/read', uri: 'file:///srv/docs/'.padEnd(200, 'x'), outcome: 'ok' })}\n`;
  const LINES = 100_000;
  const BATCH = 16;
  const auditRuns = { ours: Infinity, theirs: Infinity, oursWall: Infinity, theirsWall: Infinity };
  for (let r = 0; r < reps; r += 1) {
    {
      const s = fileSink(join(dir, `ours-${r}.log`), 1024 * 1024, 3);
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      for (let i = 0; i < LINES; i += BATCH)
        await s.write(Array.from({ length: BATCH }, () => line));
      await s.close();
      const c = process.cpuUsage(c0);
      auditRuns.ours = Math.min(auditRuns.ours, ((c.user + c.system) * 1000) / LINES);
      auditRuns.oursWall = Math.min(auditRuns.oursWall, performance.now() - t0);
    }
    {
      const s = rfs.createStream(`theirs-${r}.log`, { path: dir, size: '1M', maxFiles: 3 });
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      for (let i = 0; i < LINES; i += BATCH) {
        if (!s.write(Array.from({ length: BATCH }, () => line).join('')))
          await new Promise((done) => s.once('drain', done));
      }
      await new Promise((done) => s.end(done));
      const c = process.cpuUsage(c0);
      auditRuns.theirs = Math.min(auditRuns.theirs, ((c.user + c.system) * 1000) / LINES);
      auditRuns.theirsWall = Math.min(auditRuns.theirsWall, performance.now() - t0);
    }
  }
  rmSync(dir, { recursive: true, force: true });
  progress(`libraries: audit sink done (load ${load()}); sink ${sink > 0}`);

  printTable(
    `Libraries vs our code, CPU per operation (best of ${reps} alternated runs); load average ${loadBefore} before, ${load()} after`,
    ['hot path', 'ours', 'library', 'library costs'],
    [
      [
        'byte-bounded LRU: 80% get / 20% set, evicting (our Map cache vs lru-cache)',
        ns(lruOurs),
        ns(lruTheirs),
        ratio(lruOurs, lruTheirs),
      ],
      [
        '  … BoundedCache now (our interface on lru-cache) vs the Map cache it replaced',
        ns(lruOurs),
        ns(lruNow),
        ratio(lruOurs, lruNow),
      ],
      [
        'HTTP cache: read served while fresh (freshUntil vs satisfiesWithoutRevalidation)',
        ns(hitOurs),
        ns(hitTheirs),
        ratio(hitOurs, hitTheirs),
      ],
      [
        'HTTP cache: storing a response (freshness() vs new CachePolicy + storable + timeToLive)',
        ns(storeOurs),
        ns(storeTheirs),
        ratio(storeOurs, storeTheirs),
      ],
      [
        'HTTP cache: revalidating, 304 (validators + freshness vs revalidationHeaders + revalidatedPolicy)',
        ns(revOurs),
        ns(revTheirs),
        ratio(revOurs, revTheirs),
      ],
      [
        `audit log line, rotating at 1 MiB × 3 (fileSink vs rotating-file-stream), wall ${auditRuns.oursWall.toFixed(0)} / ${auditRuns.theirsWall.toFixed(0)} ms per 100k`,
        ns(auditRuns.ours),
        ns(auditRuns.theirs),
        ratio(auditRuns.ours, auditRuns.theirs),
      ],
    ],
  );
}
