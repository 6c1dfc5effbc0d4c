/**
 * Section 3 — Streamable HTTP on 127.0.0.1: 32 concurrent clients (one keep-alive connection each)
 * read the 4 KiB file for a fixed time (--http-seconds, default 10): reads/s, p50/p99, server RSS
 * before, peak and after. Rows: Reservoir with 2025-era sessions (initialize → Mcp-Session-Id),
 * a bare SDK v2 server with 2025-era sessions (bench/peers/bare-sdk-http.mjs), and Reservoir with
 * 2026-07-28 per-request `_meta` envelopes (no session; Mcp-Method / Mcp-Name headers).
 * `--soak SECONDS` instead runs the Reservoir rows for that long, sampling RSS every 10 s, and
 * prints RSS growth per request.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { HttpMcpClient } from '../lib/http-client.mjs';
import { memoryOf, sampleRss, spawnListening, stopChild } from '../lib/proc.mjs';
import { closedLoop, mergeRuns } from '../lib/stdio-client.mjs';
import { fmtInt, fmtMB, fmtMs, fmtRatio, percentile, printTable } from '../lib/stats.mjs';

const CLIENTS = 32;
const WARMUP_MS = 1000;
const SOAK_SAMPLE_MS = 10_000;

/**
 * All clients are anonymous, so one principal: `serve --http` caps a principal at 16 requests in
 * flight by default, and the rows need CLIENTS. The config raises that cap and changes nothing else.
 */
function startReservoir(paths, fixture) {
  const config = join(mkdtempSync(join(tmpdir(), 'reservoir-bench-http-')), 'reservoir.yaml');
  writeFileSync(config, `sources: [{ type: files, root: ${JSON.stringify(fixture.dir)} }]\nserver:\n  limits:\n    concurrency: { perPrincipal: ${CLIENTS * 2} }\n`);
  return spawnListening(process.execPath, (port) => [paths.cli, 'serve', '--config', config, '--http', `127.0.0.1:${port}`, '--log-level', 'warn']);
}

function startBare(paths, fixture) {
  return spawnListening(process.execPath, (port) => [paths.peerHttp, fixture.file, String(port)]);
}

/** One row: CLIENTS clients, warm-up, then `durationMs` of closed-loop reads. */
async function runRow({ server, era, uri, durationMs, onSample }) {
  const clients = Array.from({ length: CLIENTS }, () => new HttpMcpClient({ port: server.port, era }));
  try {
    await Promise.all(clients.map((c) => c.initialize()));
    const pid = server.child.pid;
    const read = (client) => async () => {
      const { message } = await client.post('resources/read', { uri });
      if (message.error !== undefined) throw new Error(`resources/read: JSON-RPC ${message.error.code}: ${message.error.message}`);
      if (message.result?.contents?.[0]?.text?.length !== 4096) throw new Error('resources/read: wrong content length');
    };
    // Warm-up: every client, not measured.
    await Promise.all(clients.map((c) => closedLoop(read(c), { concurrency: 1, durationMs: WARMUP_MS })));
    const before = memoryOf(pid).rss;
    const sampler = sampleRss(pid, 100);
    let total = 0;
    const t0 = performance.now();
    // RSS once a second (every SOAK_SAMPLE_MS in a soak): the trend, not just the two ends.
    const samples = [];
    const sampleTimer = setInterval(
      () => {
        const sample = { seconds: (performance.now() - t0) / 1000, requests: total, rss: memoryOf(pid).rss };
        samples.push(sample);
        onSample?.(sample);
      },
      onSample === undefined ? 1000 : SOAK_SAMPLE_MS,
    );
    const start = performance.now();
    let runs;
    try {
      runs = await Promise.all(
        clients.map((c) => {
          const call = read(c);
          return closedLoop(
            async () => {
              await call();
              total += 1;
            },
            { concurrency: 1, durationMs, maxRequests: 50_000_000 },
          );
        }),
      );
    } finally {
      clearInterval(sampleTimer);
    }
    const seconds = (performance.now() - start) / 1000;
    const { peak } = sampler.stop();
    const after = memoryOf(pid).rss;
    const { count, latencies } = mergeRuns(runs);
    samples.push({ seconds, requests: count, rss: after });
    return { count, seconds, rate: count / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), before, after, peak, growth: secondHalfGrowth(samples) };
  } finally {
    for (const c of clients) c.close();
  }
}

/**
 * RSS growth per request over the second half of a run. The heap grows to its working size in the
 * first seconds (young generation, code, caches); that is not a leak. Growth that continues
 * through the second half is: the reference everything-server grows ~18 KiB per request.
 */
function secondHalfGrowth(samples) {
  const last = samples[samples.length - 1];
  const base = samples.find((s) => s.seconds >= last.seconds / 2 - 0.5);
  if (base === undefined || base === last || last.requests === base.requests) return { perRequest: NaN, bytes: 0, base, last };
  return { perRequest: (last.rss - base.rss) / (last.requests - base.requests), bytes: last.rss - base.rss, base, last };
}

export async function httpSection(ctx) {
  const { paths, fixture, opts } = ctx;
  const uri = pathToFileURL(fixture.file).href;
  if (opts.soakMs !== undefined) return soak(ctx, uri);

  const rows = [];
  const measured = {};
  const plan = [
    { name: 'Reservoir, 2025-11-25 sessions', start: startReservoir, era: 'legacy' },
    { name: 'bare SDK, 2025-11-25 sessions', start: startBare, era: 'legacy' },
    { name: 'Reservoir, 2026-07-28 per-request', start: startReservoir, era: 'modern' },
  ];
  for (const row of plan) {
    const server = await row.start(paths, fixture);
    try {
      const r = await runRow({ server, era: row.era, uri, durationMs: opts.httpMs });
      measured[row.name] = r;
      ctx.progress(`http: ${row.name}: ${fmtInt(r.rate)} reads/s`);
    } catch (error) {
      throw new Error(`${row.name}: ${error.message}; server stderr: ${server.child.stderrTail.trim().slice(-500)}`, { cause: error });
    } finally {
      await stopChild(server.child);
    }
  }
  const ours = measured['Reservoir, 2025-11-25 sessions'];
  for (const row of plan) {
    const r = measured[row.name];
    rows.push([
      row.name,
      fmtInt(r.rate),
      fmtMs(r.p50),
      fmtMs(r.p99),
      row.name.startsWith('bare') ? fmtRatio(ours.rate, r.rate) : '—',
      fmtMB(r.before),
      fmtMB(r.peak),
      fmtMB(r.after),
      `${(((r.after - r.before) / r.count) || 0).toFixed(1)} B`,
      `${r.growth.perRequest.toFixed(1)} B`,
      fmtInt(r.count),
    ]);
  }
  printTable(
    `3. Streamable HTTP, ${CLIENTS} clients × 1 connection, 4 KiB resources/read, ${(opts.httpMs / 1000).toFixed(0)} s per row (after a ${WARMUP_MS / 1000} s warm-up)`,
    ['server / era', 'reads/s', 'p50', 'p99', 'Reservoir ÷ this', 'RSS before', 'RSS peak', 'RSS after', 'RSS Δ / request', '2nd-half Δ / request', 'requests'],
    rows,
  );
  const modern = measured['Reservoir, 2026-07-28 per-request'];
  for (const [label, r] of [['2025 sessions', ours], ['2026-07-28', modern]]) {
    ctx.target(`http (${label}): ≥ 2,500 reads/s`, `${fmtInt(r.rate)} reads/s`, r.rate >= 2500);
    ctx.target(`http (${label}): p99 ≤ 30 ms`, fmtMs(r.p99), r.p99 <= 30);
  }
  // RSS "flat over a 10-minute run" is judged by --soak (second-half growth per request): in a 10 s
  // row the heap is still growing to its working size, which says nothing about a leak.
  console.log('   RSS flatness is a 10-minute property: `npm run bench -- --only http --soak 600` judges it (second-half growth per request).');
}

async function soak(ctx, uri) {
  const { paths, fixture, opts } = ctx;
  const eras = opts.soakEra === 'both' ? ['legacy', 'modern'] : [opts.soakEra];
  for (const era of eras) {
    const server = await startReservoir(paths, fixture);
    const samples = [];
    try {
      ctx.progress(`soak: Reservoir ${era} for ${opts.soakMs / 1000} s`);
      const r = await runRow({
        server,
        era,
        uri,
        durationMs: opts.soakMs,
        onSample: (s) => {
          samples.push(s);
          ctx.progress(`soak ${era}: ${s.seconds.toFixed(0)} s, ${fmtInt(s.requests)} requests, RSS ${fmtMB(s.rss)}`);
        },
      });
      samples.push({ seconds: r.seconds, requests: r.count, rss: r.after });
      printTable(
        `3s. Soak: Reservoir ${era === 'legacy' ? '2025-11-25 sessions' : '2026-07-28 per-request'}, ${CLIENTS} clients, ${(opts.soakMs / 1000).toFixed(0)} s — RSS every ${SOAK_SAMPLE_MS / 1000} s`,
        ['t', 'requests', 'RSS'],
        [['0 s', '0', fmtMB(r.before)], ...samples.map((s) => [`${s.seconds.toFixed(0)} s`, fmtInt(s.requests), fmtMB(s.rss)])],
      );
      const { perRequest, base, last } = r.growth;
      console.log(
        `   ${fmtInt(r.rate)} reads/s, p50 ${fmtMs(r.p50)}, p99 ${fmtMs(r.p99)}; RSS ${fmtMB(r.before)} → peak ${fmtMB(r.peak)} → ${fmtMB(r.after)}; ` +
          `second-half growth: ${perRequest.toFixed(2)} B/request (${fmtMB(last.rss - (base?.rss ?? last.rss))} over ${fmtInt(last.requests - (base?.requests ?? last.requests))} requests)`,
      );
      ctx.target(`soak (${era}): RSS flat in the second half (< 100 B/request)`, `${perRequest.toFixed(2)} B/request`, perRequest < 100);
      ctx.target(`soak (${era}): RSS ≤ 150 MB throughout`, `peak ${fmtMB(r.peak)}`, r.peak <= 150 * 1024 * 1024);
    } finally {
      await stopChild(server.child);
    }
  }
}
