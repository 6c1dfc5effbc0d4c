/**
 * Section 3 — Streamable HTTP on 127.0.0.1: 32 concurrent clients (one keep-alive connection each)
 * read the 4 KiB file for a fixed time (--http-seconds, default 10): reads/s, p50/p99, server CPU
 * per request (/proc/PID/stat), server RSS before, peak and after. Rows: Reservoir with 2025-era
 * sessions (initialize → Mcp-Session-Id), a bare SDK v2 server with 2025-era sessions
 * (bench/peers/bare-sdk-http.mjs), Reservoir with 2026-07-28 per-request `_meta` envelopes (no
 * session; Mcp-Method / Mcp-Name headers), and the no-SDK `node:http` ceiling
 * (bench/peers/ceiling-http.mjs) in both eras. Every row runs --reps times (rows interleaved, a
 * fresh server each time); cells are medians with min / median / max beside them.
 * `--soak SECONDS` instead runs the Reservoir rows for that long, sampling RSS every 10 s, and
 * prints RSS growth per request.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { HttpMcpClient } from '../lib/http-client.mjs';
import { cpuWindow } from '../lib/cpu.mjs';
import { memoryOf, sampleRss, spawnListening, stopChild } from '../lib/proc.mjs';
import { closedLoop, mergeRuns } from '../lib/stdio-client.mjs';
import {
  fmtInt,
  fmtMB,
  fmtMs,
  fmtRatio,
  fmtSpread,
  fmtUs,
  median,
  percentile,
  printTable,
} from '../lib/stats.mjs';

const CLIENTS = 32;
const WARMUP_MS = 1000;
const SOAK_SAMPLE_MS = 10_000;

/**
 * All clients are anonymous, so one principal: `serve --http` caps a principal at 16 requests in
 * flight by default, and the rows need CLIENTS. The config raises that cap and changes nothing else.
 */
function startReservoir(paths, fixture) {
  const config = join(mkdtempSync(join(tmpdir(), 'reservoir-bench-http-')), 'reservoir.yaml');
  writeFileSync(
    config,
    `sources: [{ type: files, root: ${JSON.stringify(fixture.dir)} }]\nserver:\n  limits:\n    concurrency: { perPrincipal: ${CLIENTS * 2} }\n`,
  );
  return spawnListening(process.execPath, (port) => [
    paths.cli,
    'serve',
    '--config',
    config,
    '--http',
    `127.0.0.1:${port}`,
    '--log-level',
    'warn',
  ]);
}

function startBare(paths, fixture) {
  return spawnListening(process.execPath, (port) => [paths.peerHttp, fixture.file, String(port)]);
}

function startCeiling(paths, fixture) {
  return spawnListening(process.execPath, (port) => [
    paths.ceilingHttp,
    fixture.file,
    String(port),
  ]);
}

/** One row: CLIENTS clients, warm-up, then `durationMs` of closed-loop reads. */
async function runRow({ server, era, uri, durationMs, onSample }) {
  const clients = Array.from(
    { length: CLIENTS },
    () => new HttpMcpClient({ port: server.port, era }),
  );
  try {
    await Promise.all(clients.map((c) => c.initialize()));
    const pid = server.child.pid;
    const read = (client) => async () => {
      const { message } = await client.post('resources/read', { uri });
      if (message.error !== undefined)
        throw new Error(`resources/read: JSON-RPC ${message.error.code}: ${message.error.message}`);
      if (message.result?.contents?.[0]?.text?.length !== 4096)
        throw new Error('resources/read: wrong content length');
    };
    // Warm-up: every client, not measured.
    await Promise.all(
      clients.map((c) => closedLoop(read(c), { concurrency: 1, durationMs: WARMUP_MS })),
    );
    const before = memoryOf(pid).rss;
    const sampler = sampleRss(pid, 100);
    let total = 0;
    const t0 = performance.now();
    // RSS once a second (every SOAK_SAMPLE_MS in a soak): the trend, not just the two ends.
    const samples = [];
    const sampleTimer = setInterval(
      () => {
        const sample = {
          seconds: (performance.now() - t0) / 1000,
          requests: total,
          rss: memoryOf(pid).rss,
        };
        samples.push(sample);
        onSample?.(sample);
      },
      onSample === undefined ? 1000 : SOAK_SAMPLE_MS,
    );
    const cpu = cpuWindow(pid);
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
    const { count, latencies } = mergeRuns(runs);
    const cpuUs = cpu.stop(count);
    const { peak } = sampler.stop();
    const after = memoryOf(pid).rss;
    samples.push({ seconds, requests: count, rss: after });
    return {
      count,
      seconds,
      rate: count / seconds,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      cpuUs,
      before,
      after,
      peak,
      growth: secondHalfGrowth(samples),
    };
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
  if (base === undefined || base === last || last.requests === base.requests)
    return { perRequest: NaN, bytes: 0, base, last };
  return {
    perRequest: (last.rss - base.rss) / (last.requests - base.requests),
    bytes: last.rss - base.rss,
    base,
    last,
  };
}

export async function httpSection(ctx) {
  const { paths, fixture, opts } = ctx;
  const uri = pathToFileURL(fixture.file).href;
  if (opts.soakMs !== undefined) return soak(ctx, uri);

  const LEGACY = 'Reservoir, 2025-11-25 sessions';
  const MODERN = 'Reservoir, 2026-07-28 per-request';
  const plan = [
    { name: LEGACY, start: startReservoir, era: 'legacy' },
    { name: 'bare SDK, 2025-11-25 sessions', start: startBare, era: 'legacy' },
    {
      name: 'no-SDK ceiling, 2025-style session',
      start: startCeiling,
      era: 'legacy',
      ceilingOf: 'legacy',
    },
    { name: MODERN, start: startReservoir, era: 'modern' },
    {
      name: 'no-SDK ceiling, 2026-style request',
      start: startCeiling,
      era: 'modern',
      ceilingOf: 'modern',
    },
  ];
  /** runs[name] = one result per repetition */
  const runs = Object.fromEntries(plan.map((row) => [row.name, []]));
  for (let rep = 0; rep < opts.reps; rep += 1) {
    for (const row of plan) {
      const server = await row.start(paths, fixture);
      try {
        const r = await runRow({ server, era: row.era, uri, durationMs: opts.httpMs });
        runs[row.name].push(r);
        ctx.progress(
          `http: ${row.name} (${rep + 1}/${opts.reps}): ${fmtInt(r.rate)} reads/s, ${fmtUs(r.cpuUs)} CPU/request`,
        );
      } catch (error) {
        throw new Error(
          `${row.name}: ${error.message}; server stderr: ${server.child.stderrTail.trim().slice(-500)}`,
          { cause: error },
        );
      } finally {
        await stopChild(server.child);
      }
    }
  }
  const med = (name, field) => median(runs[name].map((r) => r[field]));
  const m = Object.fromEntries(
    plan.map((row) => [
      row.name,
      {
        rate: med(row.name, 'rate'),
        p50: med(row.name, 'p50'),
        p99: med(row.name, 'p99'),
        cpuUs: med(row.name, 'cpuUs'),
      },
    ]),
  );
  const ceilingFor = (era) => m[plan.find((row) => row.ceilingOf === era).name];
  const rows = [];
  for (const row of plan) {
    const r = m[row.name];
    const last = runs[row.name][runs[row.name].length - 1];
    const ours = row.era === 'modern' ? m[MODERN] : m[LEGACY];
    const ceiling = ceilingFor(row.era);
    ctx.record({ section: 'http', name: row.name, reads: r.rate, cpuUs: r.cpuUs, p99: r.p99 });
    rows.push([
      row.name,
      fmtInt(r.rate),
      fmtSpread(runs[row.name].map((x) => x.rate)),
      fmtMs(r.p50),
      fmtMs(r.p99),
      fmtUs(r.cpuUs),
      fmtSpread(
        runs[row.name].map((x) => x.cpuUs),
        fmtUs,
      ),
      fmtRatio(r.rate, ceiling.rate),
      fmtRatio(r.cpuUs, ceiling.cpuUs),
      row.name === LEGACY || row.name === MODERN ? '1.00×' : fmtRatio(ours.rate, r.rate),
      fmtMB(last.before),
      fmtMB(last.peak),
      fmtMB(last.after),
      `${last.growth.perRequest.toFixed(1)} B`,
    ]);
  }
  printTable(
    `3. Streamable HTTP, ${CLIENTS} clients × 1 connection, 4 KiB resources/read, ${(opts.httpMs / 1000).toFixed(0)} s per row × ${opts.reps} (after a ${WARMUP_MS / 1000} s warm-up; ratios against the same era's ceiling / Reservoir row; RSS from the last repetition)`,
    [
      'server / era',
      'reads/s',
      'min / med / max',
      'p50',
      'p99',
      'CPU/req',
      'CPU min / med / max',
      'reads ÷ ceiling',
      'CPU ÷ ceiling',
      'Reservoir ÷ this',
      'RSS before',
      'RSS peak',
      'RSS after',
      '2nd-half Δ / request',
    ],
    rows,
  );
  const legacy = m[LEGACY];
  const modern = m[MODERN];
  for (const [label, r, era] of [
    ['2025 sessions', legacy, 'legacy'],
    ['2026-07-28', modern, 'modern'],
  ]) {
    const ceiling = ceilingFor(era);
    ctx.target(
      `http (${label}): ≥ 0.6× the no-SDK node:http ceiling`,
      `${fmtInt(r.rate)} vs ${fmtInt(ceiling.rate)} reads/s (${fmtRatio(r.rate, ceiling.rate)})`,
      r.rate >= 0.6 * ceiling.rate,
    );
    ctx.target(`http (${label}): p99 ≤ 20 ms`, fmtMs(r.p99), r.p99 <= 20);
  }
  ctx.target(
    'http: 2026-07-28 reads/s ≥ 2025 sessions',
    `${fmtInt(modern.rate)} vs ${fmtInt(legacy.rate)} (${fmtRatio(modern.rate, legacy.rate)})`,
    modern.rate >= legacy.rate,
  );
  ctx.target(
    'http: 2026-07-28 server CPU per read ≤ 2025 sessions',
    `${fmtUs(modern.cpuUs)} vs ${fmtUs(legacy.cpuUs)} (${fmtRatio(modern.cpuUs, legacy.cpuUs)})`,
    modern.cpuUs <= legacy.cpuUs,
  );
  // RSS "flat over a 10-minute run" is judged by --soak (second-half growth per request): in a 10 s
  // row the heap is still growing to its working size, which says nothing about a leak.
  console.log(
    '   RSS flatness is a 10-minute property: `npm run bench -- --only http --soak 600` judges it (second-half growth per request).',
  );
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
          ctx.progress(
            `soak ${era}: ${s.seconds.toFixed(0)} s, ${fmtInt(s.requests)} requests, RSS ${fmtMB(s.rss)}`,
          );
        },
      });
      samples.push({ seconds: r.seconds, requests: r.count, rss: r.after });
      printTable(
        `3s. Soak: Reservoir ${era === 'legacy' ? '2025-11-25 sessions' : '2026-07-28 per-request'}, ${CLIENTS} clients, ${(opts.soakMs / 1000).toFixed(0)} s — RSS every ${SOAK_SAMPLE_MS / 1000} s`,
        ['t', 'requests', 'RSS'],
        [
          ['0 s', '0', fmtMB(r.before)],
          ...samples.map((s) => [`${s.seconds.toFixed(0)} s`, fmtInt(s.requests), fmtMB(s.rss)]),
        ],
      );
      const { perRequest, base, last } = r.growth;
      console.log(
        `   ${fmtInt(r.rate)} reads/s, p50 ${fmtMs(r.p50)}, p99 ${fmtMs(r.p99)}; RSS ${fmtMB(r.before)} → peak ${fmtMB(r.peak)} → ${fmtMB(r.after)}; ` +
          `second-half growth: ${perRequest.toFixed(2)} B/request (${fmtMB(last.rss - (base?.rss ?? last.rss))} over ${fmtInt(last.requests - (base?.requests ?? last.requests))} requests)`,
      );
      ctx.target(
        `soak (${era}): RSS flat in the second half (< 100 B/request)`,
        `${perRequest.toFixed(2)} B/request`,
        perRequest < 100,
      );
      ctx.target(
        `soak (${era}): RSS ≤ 150 MB throughout`,
        `peak ${fmtMB(r.peak)}`,
        r.peak <= 150 * 1024 * 1024,
      );
    } finally {
      await stopChild(server.child);
    }
  }
}
