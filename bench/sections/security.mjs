/**
 * Section — the cost of being safe to share. One Reservoir process serves the 4 KiB read fixture
 * twice over: with a static bearer token, access rules and the audit log (file sink) ON, and with all
 * of them OFF. 64 concurrent clients (2025-era sessions, one keep-alive connection each) read the
 * file in a closed loop; the rows alternate (OFF, ON, OFF, ON, each half of --http-seconds) so drift
 * on a shared machine falls on both. Prints reads/s, p50/p99 and the cost of ON in %.
 * Target: the cost is at most 15%.
 */
import { randomBytes, createHash } from 'node:crypto';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { HttpMcpClient } from '../lib/http-client.mjs';
import { memoryOf, spawnListening, stopChild } from '../lib/proc.mjs';
import { closedLoop, mergeRuns } from '../lib/stdio-client.mjs';
import { fmtInt, fmtMB, fmtMs, percentile, printTable } from '../lib/stats.mjs';

const CLIENTS = 64;
const WARMUP_MS = 1000;
const ROUNDS = 2;

// The server, run as `node --input-type=module -e SERVER` with its settings in the environment.
const SERVER = `
const { createReservoir, filesProvider, AccessPolicy, createAuthenticator } = await import(process.env.RESERVOIR_LIB);
const cfg = JSON.parse(process.env.RESERVOIR_SECURITY_BENCH);
const reservoir = createReservoir({
  providers: [filesProvider({ root: cfg.root })],
  ...(cfg.secure ? {
    access: new AccessPolicy({ rules: [{ scopes: ['bench'], allow: [cfg.rootUri + '**'], deny: [cfg.rootUri + 'private/**'] }] }),
    policy: { audit: { sink: 'file', path: cfg.auditPath } },
  } : {}),
});
await reservoir.listen({
  host: '127.0.0.1',
  port: cfg.port,
  // Every client is one principal, and all of them open their session at once.
  sessions: { initialize: { perSecond: 1000, burst: 1000 } },
  ...(cfg.secure ? { auth: createAuthenticator({ tokens: [{ name: 'bench', sha256: cfg.sha256, scopes: ['bench'] }] }) } : {}),
});
const stop = async () => { await reservoir.close(); process.exit(0); };
process.stdin.on('end', stop);
process.stdin.resume();
process.on('SIGTERM', stop);
`;

function startServer(ctx, settings) {
  return spawnListening(
    process.execPath,
    () => ['--input-type=module', '-e', SERVER],
    (port) => ({
      env: {
        ...process.env,
        RESERVOIR_LIB: pathToFileURL(join(ctx.paths.repo, 'dist/index.js')).href,
        RESERVOIR_SECURITY_BENCH: JSON.stringify({ ...settings, port }),
      },
    }),
  );
}

async function measure(clients, uri, durationMs) {
  const runs = await Promise.all(
    clients.map((client) =>
      closedLoop(
        async () => {
          const { message } = await client.post('resources/read', { uri });
          if (message.error !== undefined)
            throw new Error(
              `resources/read: JSON-RPC ${message.error.code}: ${message.error.message}`,
            );
          if (message.result?.contents?.[0]?.text?.length !== 4096)
            throw new Error('resources/read: wrong content length');
        },
        { concurrency: 1, durationMs, maxRequests: 1_000_000 },
      ),
    ),
  );
  const seconds = Math.max(...runs.map((r) => r.seconds));
  return { ...mergeRuns(runs), seconds };
}

export async function securitySection(ctx) {
  const { paths, fixture, opts } = ctx;
  const uri = pathToFileURL(fixture.file).href;
  const rootUri = `${pathToFileURL(fixture.dir).href}/`;
  const token = randomBytes(32).toString('base64url');
  const sha256 = createHash('sha256').update(token).digest('hex');
  const auditDir = join(paths.benchDir, 'security-audit');
  rmSync(auditDir, { recursive: true, force: true });
  mkdirSync(auditDir, { recursive: true });
  const auditPath = join(auditDir, 'audit.log');
  if (opts.soakMs !== undefined) return soak(ctx, { uri, rootUri, token, sha256, auditPath });

  const plan = [
    { name: 'all OFF (anonymous, no rules, no audit)', secure: false },
    { name: 'auth + access rules + audit (file) ON', secure: true },
  ];
  const servers = [];
  const results = new Map(plan.map((row) => [row.name, { count: 0, seconds: 0, latencies: [] }]));
  try {
    for (const row of plan) {
      const server = await startServer(ctx, {
        secure: row.secure,
        root: fixture.dir,
        rootUri,
        sha256,
        auditPath,
      });
      const clients = Array.from(
        { length: CLIENTS },
        () =>
          new HttpMcpClient({ port: server.port, era: 'legacy', ...(row.secure ? { token } : {}) }),
      );
      servers.push({ row, server, clients });
      await Promise.all(clients.map((c) => c.initialize()));
      // Sanity: the secured server refuses a client without the token.
      if (row.secure) {
        const stranger = new HttpMcpClient({ port: server.port, era: 'legacy' });
        try {
          await stranger.initialize().then(
            () => {
              throw new Error('the secured server served a client without a token');
            },
            (error) => {
              if (!/HTTP 401/.test(String(error?.message))) throw error;
            },
          );
        } finally {
          stranger.close();
        }
      }
      await measure(clients, uri, WARMUP_MS);
    }
    const slice = Math.max(1000, opts.httpMs / ROUNDS);
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const { row, clients } of servers) {
        const r = await measure(clients, uri, slice);
        const total = results.get(row.name);
        total.count += r.count;
        total.seconds += r.seconds;
        total.latencies.push(r.latencies);
        ctx.progress(
          `security: round ${round + 1}, ${row.name}: ${fmtInt(r.count / r.seconds)} reads/s`,
        );
      }
    }
    const rss = new Map(
      servers.map(({ row, server }) => [row.name, memoryOf(server.child.pid).rss]),
    );
    for (const { clients } of servers) for (const c of clients) c.close();
    await Promise.all(servers.map(({ server }) => stopChild(server.child)));
    let auditBytes = 0;
    try {
      auditBytes = statSync(auditPath).size;
    } catch {
      auditBytes = 0;
    }

    const rate = (name) => {
      const r = results.get(name);
      return r.count / r.seconds;
    };
    const off = rate(plan[0].name);
    const on = rate(plan[1].name);
    const cost = ((off - on) / off) * 100;
    printTable(
      `Safe to share: ${CLIENTS} clients × 1 connection (2025-11-25 sessions), 4 KiB resources/read, ${ROUNDS} alternating rounds of ${(slice / 1000).toFixed(1)} s per row`,
      ['server', 'reads/s', 'p50', 'p99', 'server RSS', 'requests'],
      plan.map((row) => {
        const r = results.get(row.name);
        const all = new Float64Array(r.latencies.reduce((n, l) => n + l.length, 0));
        let offset = 0;
        for (const l of r.latencies) {
          all.set(l, offset);
          offset += l.length;
        }
        return [
          row.name,
          fmtInt(r.count / r.seconds),
          fmtMs(percentile(all, 50)),
          fmtMs(percentile(all, 99)),
          fmtMB(rss.get(row.name) ?? 0),
          fmtInt(r.count),
        ];
      }),
    );
    console.log(
      `   cost of auth + rules + audit: ${cost.toFixed(1)}% of reads/s (${fmtInt(off)} → ${fmtInt(on)}); audit log written: ${fmtMB(auditBytes)}`,
    );
    if (auditBytes === 0) throw new Error('the secured server wrote no audit lines');
    ctx.target(
      'security: auth + rules + audit cost ≤ 15% of reads/s',
      `${cost.toFixed(1)}%`,
      cost <= 15,
    );
  } finally {
    for (const { clients } of servers) for (const c of clients) c.close();
    await Promise.all(servers.map(({ server }) => stopChild(server.child)));
    rmSync(auditDir, { recursive: true, force: true });
  }
}

/**
 * `--only security --soak SECONDS`: the secured server (auth + rules + audit to a file) under 64
 * clients for the whole time, RSS sampled every 10 s; "flat" compares the end with the sample taken
 * once the first fifth of the run has warmed the heap up.
 */
async function soak(ctx, { uri, rootUri, token, sha256, auditPath }) {
  const { fixture, opts, progress, target } = ctx;
  const server = await startServer(ctx, {
    secure: true,
    root: fixture.dir,
    rootUri,
    sha256,
    auditPath,
  });
  const clients = Array.from(
    { length: CLIENTS },
    () => new HttpMcpClient({ port: server.port, era: 'legacy', token }),
  );
  const samples = [];
  try {
    await Promise.all(clients.map((c) => c.initialize()));
    const started = performance.now();
    let count = 0;
    const sampler = setInterval(() => {
      samples.push({
        s: (performance.now() - started) / 1000,
        rss: memoryOf(server.child.pid).rss,
        count,
      });
      progress(`security soak: ${samples.length * 10} s, ${samples.at(-1).rss >> 20} MB`);
    }, 10_000);
    try {
      await Promise.all(
        clients.map((client) =>
          closedLoop(
            async () => {
              const { message } = await client.post('resources/read', { uri });
              if (message.error !== undefined)
                throw new Error(
                  `resources/read: JSON-RPC ${message.error.code}: ${message.error.message}`,
                );
              count += 1;
            },
            { concurrency: 1, durationMs: opts.soakMs, maxRequests: 100_000_000 },
          ),
        ),
      );
    } finally {
      clearInterval(sampler);
    }
    const warm = samples[Math.floor(samples.length / 5)] ?? samples[0];
    const last = samples.at(-1);
    printTable(
      `Safe to share, soak: ${CLIENTS} clients, auth + rules + audit ON, ${Math.round(opts.soakMs / 1000)} s`,
      ['time', 'server RSS', 'requests'],
      samples.map((x) => [
        `${x.s.toFixed(0)} s`,
        `${(x.rss / 1048576).toFixed(1)} MB`,
        x.count.toLocaleString('en-US'),
      ]),
    );
    const growth = (last.rss - warm.rss) / warm.rss;
    const perRequest = (last.rss - warm.rss) / Math.max(1, last.count - warm.count);
    console.log(
      `   RSS from ${(warm.rss / 1048576).toFixed(1)} MB (at ${warm.s.toFixed(0)} s) to ${(last.rss / 1048576).toFixed(1)} MB: ${(growth * 100).toFixed(1)}%, ${perRequest.toFixed(1)} B per request`,
    );
    target(
      'security soak: server RSS flat (±10%) with auth on',
      `${(growth * 100).toFixed(1)}%`,
      Math.abs(growth) <= 0.1,
    );
  } finally {
    for (const client of clients) client.close();
    await stopChild(server.child);
  }
}
