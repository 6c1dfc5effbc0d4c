/**
 * Section 3 — Streamable HTTP on 127.0.0.1: 32 concurrent clients (one keep-alive connection each)
 * read the 4 KiB file for a fixed time (--http-seconds, default 10): reads/s, p50/p99, server RSS
 * before, peak and after. Rows: Reservoir with 2025-era sessions (initialize → Mcp-Session-Id),
 * a bare SDK v2 server with 2025-era sessions (bench/peers/bare-sdk-http.mjs), and Reservoir with
 * 2026-07-28 per-request `_meta` envelopes (no session; Mcp-Method / Mcp-Name headers).
 * `--soak SECONDS` instead runs the Reservoir rows for that long, sampling RSS every 10 s, and
 * prints RSS growth per request.
 */
import { pathToFileURL } from 'node:url';
import { HttpMcpClient } from '../lib/http-client.mjs';
import { freePort, memoryOf, sampleRss, spawnTracked, stopChild, waitForPort } from '../lib/proc.mjs';
import { closedLoop } from '../lib/stdio-client.mjs';
import { fmtInt, fmtMB, fmtMs, fmtRatio, percentile, printTable } from '../lib/stats.mjs';

const CLIENTS = 32;
const WARMUP_MS = 1000;
const SOAK_SAMPLE_MS = 10_000;

async function startReservoir(paths, fixture) {
  const port = await freePort();
  const child = spawnTracked(process.execPath, [paths.cli, 'serve', fixture.dir, '--http', `127.0.0.1:${port}`, '--log-level', 'warn']);
  try {
    await waitForPort(port, 20_000, child);
  } catch (error) {
    await stopChild(child);
    throw error;
  }
  return { child, port };
}

async function startBare(paths, fixture) {
  const port = await freePort();
  const child = spawnTracked(process.execPath, [paths.peerHttp, fixture.file, String(port)]);
  try {
    await waitForPort(port, 20_000, child);
  } catch (error) {
    await stopChild(child);
    throw error;
  }
  return { child, port };
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
    let sampleTimer;
    if (onSample !== undefined) {
      const t0 = performance.now();
      sampleTimer = setInterval(() => onSample({ seconds: (performance.now() - t0) / 1000, requests: total, rss: memoryOf(pid).rss }), SOAK_SAMPLE_MS);
    }
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
    const count = runs.reduce((n, r) => n + r.count, 0);
    const latencies = new Float64Array(runs.reduce((n, r) => n + r.latencies.length, 0));
    let offset = 0;
    for (const r of runs) {
      latencies.set(r.latencies, offset);
      offset += r.latencies.length;
    }
    return { count, seconds, rate: count / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), before, after, peak };
  } finally {
    for (const c of clients) c.close();
  }
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
      fmtInt(r.count),
    ]);
  }
  printTable(
    `3. Streamable HTTP, ${CLIENTS} clients × 1 connection, 4 KiB resources/read, ${(opts.httpMs / 1000).toFixed(0)} s per row (after a ${WARMUP_MS / 1000} s warm-up)`,
    ['server / era', 'reads/s', 'p50', 'p99', 'Reservoir ÷ this', 'RSS before', 'RSS peak', 'RSS after', 'RSS Δ / request', 'requests'],
    rows,
  );
  const modern = measured['Reservoir, 2026-07-28 per-request'];
  for (const [label, r] of [['2025 sessions', ours], ['2026-07-28', modern]]) {
    ctx.target(`http (${label}): ≥ 2,500 reads/s`, `${fmtInt(r.rate)} reads/s`, r.rate >= 2500);
    ctx.target(`http (${label}): p99 ≤ 30 ms`, fmtMs(r.p99), r.p99 <= 30);
    const growth = r.after - r.before;
    // "Flat": within 10% of the starting RSS over the row (a 10 s row is short; use --soak for leaks).
    ctx.target(`http (${label}): RSS flat (after within +10% of before)`, `${fmtMB(r.before)} → ${fmtMB(r.after)}`, growth <= 0.1 * r.before);
  }
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
      const lastSample = samples[samples.length - 1];
      if (lastSample === undefined || r.seconds - lastSample.seconds > 1) samples.push({ seconds: r.seconds, requests: r.count, rss: r.after });
      printTable(
        `3s. Soak: Reservoir ${era === 'legacy' ? '2025-11-25 sessions' : '2026-07-28 per-request'}, ${CLIENTS} clients, ${(opts.soakMs / 1000).toFixed(0)} s — RSS every ${SOAK_SAMPLE_MS / 1000} s`,
        ['t', 'requests', 'RSS'],
        [['0 s', '0', fmtMB(r.before)], ...samples.map((s) => [`${s.seconds.toFixed(0)} s`, fmtInt(s.requests), fmtMB(s.rss)])],
      );
      // Growth per request over the second half of the run: heap growth to its working size (which
      // takes tens of seconds) is not a leak; growth that continues through the second half is.
      const last = samples[samples.length - 1];
      const base = samples.find((s) => s.seconds >= r.seconds / 2 - 1) ?? { requests: 0, rss: r.before };
      const perRequest = base === last ? NaN : (last.rss - base.rss) / Math.max(1, last.requests - base.requests);
      console.log(
        `   ${fmtInt(r.rate)} reads/s, p50 ${fmtMs(r.p50)}, p99 ${fmtMs(r.p99)}; RSS ${fmtMB(r.before)} → peak ${fmtMB(r.peak)} → ${fmtMB(r.after)}; ` +
          `second-half growth: ${perRequest.toFixed(2)} B/request (${fmtMB(last.rss - base.rss)} over ${fmtInt(last.requests - base.requests)} requests)`,
      );
      ctx.target(`soak (${era}): RSS flat in the second half (< 100 B/request)`, `${perRequest.toFixed(2)} B/request`, perRequest < 100);
      ctx.target(`soak (${era}): RSS ≤ 150 MB throughout`, `peak ${fmtMB(r.peak)}`, r.peak <= 150 * 1024 * 1024);
    } finally {
      await stopChild(server.child);
    }
  }
}
