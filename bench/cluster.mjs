#!/usr/bin/env node
/**
 * `node bench/cluster.mjs` (after `npm run build`): cluster mode on a redis-server of its own (so
 * its command counts are ours alone), with members as separate processes (bench/lib/cluster-member.mjs).
 *
 *   1. change → notification, a change polled by the lease holder, heard on 1,000 2026 listen
 *      streams spread over 3 instances: p50 / p99 over 20 changes, measured from the moment the
 *      holder's poller saw the change settle (it prints the instant; all processes share the
 *      machine's clock) to the bench client reading the notification; also from the file's write,
 *      and the CPU each member and the client spend per change (/proc/PID/stat)
 *   2. reads/s (2026-07-28, 4 KiB file, 32 clients): 1 instance direct; 3 behind HAProxy (when
 *      installed); 1 instance with Redis-backed rate limits vs in-memory-equivalent (no limiter)
 *   3. Redis commands per read on the hot path (2026 read; 2025 session read; with rate limits)
 *   4. bytes per 2025 session in Redis (MEMORY USAGE of its record)
 *   5. takeover: 20 lease holders killed (SIGKILL), time to the next holder, notifications lost /
 *      duplicated for a change made right after each takeover, and for one made during the gap
 *
 * `--only latency,rates,session,takeover` runs some sections; every line ends with the load average.
 * BENCH_MEMBER_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR" profiles the members.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { HttpMcpClient, MODERN_VERSION } from './lib/http-client.mjs';
import { freePort, waitForPort } from './lib/proc.mjs';
import { percentile, fmtInt, fmtMs } from './lib/stats.mjs';
import { closedLoop } from './lib/stdio-client.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'reservoir-cluster-bench-'));
mkdirSync(join(dir, 'files'));
mkdirSync(join(dir, 'polled'));
writeFileSync(join(dir, 'files', 'a.txt'), 'x'.repeat(4096));
writeFileSync(join(dir, 'polled', 'row'), '0');
const children = new Set();
const cleanup = () => {
  for (const child of children) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
};
process.on('exit', cleanup);

async function startRedis() {
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  children.add(child);
  await waitForPort(port, 10_000);
  return { url: `redis://127.0.0.1:${port}`, port };
}

/** Epoch ms (on the machine's one clock) at which the lease holder's poller last saw the row change. */
const settled = { at: 0, count: 0 };
const epochNow = () => performance.timeOrigin + performance.now();
/** Extra node flags for members, e.g. BENCH_MEMBER_NODE_ARGS=--cpu-prof to see where their time goes. */
const memberNodeArgs = (process.env['BENCH_MEMBER_NODE_ARGS'] ?? '').split(' ').filter(Boolean);

async function startMember(redisUrl, prefix, name, extra = []) {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      ...memberNodeArgs,
      join(here, 'lib', 'cluster-member.mjs'),
      redisUrl,
      prefix,
      name,
      dir,
      String(port),
      ...extra,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  children.add(child);
  await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
      let end;
      while ((end = out.indexOf('\n')) >= 0) {
        const line = out.slice(0, end);
        out = out.slice(end + 1);
        if (line.startsWith('listening')) resolve();
        const m = /^settled \S+ ([\d.]+)$/.exec(line);
        if (m !== null) {
          settled.at = Number(m[1]);
          settled.count += 1;
        }
      }
    });
    child.once('exit', (code) => reject(new Error(`member ${name} exited ${code}`)));
  });
  return { name, port, child, url: `http://127.0.0.1:${port}/mcp` };
}

/** CPU time (user + system) a process has used so far, ms, from /proc/PID/stat. */
function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in clock ticks (USER_HZ 100)
}

function kill(member) {
  member.child.kill('SIGKILL');
  children.delete(member.child);
}

/** A 2025 session's GET stream on `port`, open once its headers arrive; destroy() closes it. */
function sessionStream(port, sessionId) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/mcp',
        method: 'GET',
        headers: {
          accept: 'text/event-stream',
          'mcp-session-id': sessionId,
          'mcp-protocol-version': '2025-11-25',
        },
      },
      (res) => {
        if (res.statusCode !== 200) reject(new Error(`GET stream: HTTP ${res.statusCode}`));
        res.resume();
        resolve(req);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** A raw 2026 listen stream on `uri`; calls onUpdate(now) per notification. */
function listen(port, uri, onUpdate) {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'subscriptions/listen',
      params: {
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
          'io.modelcontextprotocol/clientCapabilities': {},
          'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
        },
        notifications: { resourceSubscriptions: [uri] },
      },
    });
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/mcp',
        method: 'POST',
        agent: false,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': MODERN_VERSION,
          'mcp-method': 'subscriptions/listen',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk) => {
          text += chunk;
          let end;
          while ((end = text.indexOf('\n\n')) >= 0) {
            const event = text.slice(0, end);
            text = text.slice(end + 2);
            if (event.includes('notifications/subscriptions/acknowledged')) resolve(req);
            if (event.includes('notifications/resources/updated')) onUpdate(epochNow());
          }
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** Changes the polled row atomically (a poller never sees a half-written file). */
const change_ = (value) => {
  writeFileSync(join(dir, 'polled', '.row.tmp'), String(value));
  renameSync(join(dir, 'polled', '.row.tmp'), join(dir, 'polled', 'row'));
};
/** `--only latency,rates,session,takeover` runs those sections alone. */
const only = process.argv.includes('--only')
  ? process.argv[process.argv.indexOf('--only') + 1].split(',')
  : undefined;
const runs = (section) => only === undefined || only.includes(section);
const lines = [];
const say = (text) => {
  const line = `${text} [load average ${loadavg()[0].toFixed(2)}]`;
  lines.push(line);
  console.log(line);
};

const redis = await startRedis();
const admin = new Redis(redis.url);
/** Commands Redis has executed so far, as it counts them (a script's inner commands and MULTI/EXEC included). */
const cmdTotal = async () => {
  const info = await admin.info('commandstats');
  let total = 0;
  for (const m of info.matchAll(/cmdstat_([\w|]+):calls=(\d+)/g))
    if (!['info', 'config', 'client', 'memory', 'select', 'ping', 'hello'].includes(m[1]))
      total += Number(m[2]);
  return total;
};

// 1. latency with 1,000 listen streams over 3 instances
if (runs('latency')) {
  const prefix = 'lat:';
  const members = [];
  for (const name of ['A', 'B', 'C']) members.push(await startMember(redis.url, prefix, name));
  const arrivals = [];
  const counts = new Array(1000).fill(0);
  const streams = [];
  for (let i = 0; i < 1000; i += 1) {
    streams.push(
      await listen(members[i % 3].port, 'poll://bench/row', (at) => {
        counts[i] += 1;
        arrivals.push(at);
      }),
    );
  }
  await sleep(3_000); // a lease holder polls
  const fromSettle = [];
  const fromWrite = [];
  const lastPerChange = [];
  let lost = 0;
  let duplicated = 0;
  const cpuBefore = members.map((m) => cpuMs(m.child.pid));
  const clientBefore = process.cpuUsage();
  for (let change = 1; change <= 20; change += 1) {
    arrivals.length = 0;
    counts.fill(0);
    const settledBefore = settled.count;
    const writtenAt = epochNow();
    change_(change);
    for (
      let waited = 0;
      waited < 2_000 && (settled.count === settledBefore || counts.some((c) => c === 0));
      waited += 5
    )
      await sleep(5);
    await sleep(200); // a duplicate would arrive by now
    if (settled.count !== settledBefore + 1)
      throw new Error(`the poller saw ${settled.count - settledBefore} changes where one was made`);
    fromSettle.push(...arrivals.map((at) => at - settled.at));
    fromWrite.push(...arrivals.map((at) => at - writtenAt));
    lastPerChange.push(Math.max(...arrivals) - settled.at);
    lost += counts.filter((c) => c === 0).length;
    duplicated += counts.filter((c) => c > 1).length;
  }
  const memberCpu = members.map((m, i) => (cpuMs(m.child.pid) - cpuBefore[i]) / 20);
  const client = process.cpuUsage(clientBefore);
  say(
    `change → notification, 1,000 listen streams over 3 instances, 20 changes, from the moment the holder's poller saw the change settle to the client reading the notification: p50 ${fmtMs(percentile(fromSettle, 50), 1)}, p99 ${fmtMs(percentile(fromSettle, 99), 1)}, last stream per change p50 ${fmtMs(percentile(lastPerChange, 50), 1)} (lost ${lost}, duplicated ${duplicated})`,
  );
  say(
    `  from the file's write (adds the 10 ms poll interval): p50 ${fmtMs(percentile(fromWrite, 50), 1)}, p99 ${fmtMs(percentile(fromWrite, 99), 1)}`,
  );
  say(
    `  CPU per change: members ${memberCpu.map((ms) => fmtMs(ms, 1)).join(' / ')} (holder polls every 10 ms meanwhile); the one bench client reading all 1,000 streams ${fmtMs((client.user + client.system) / 1000 / 20, 1)}`,
  );
  for (const s of streams) s.destroy();
  for (const m of members) m.child.kill('SIGTERM');
  await Promise.all(
    members.map(
      (m) => new Promise((r) => (m.child.exitCode === null ? m.child.once('exit', r) : r())),
    ),
  );
  for (const m of members) children.delete(m.child);
}

// 2 + 3. reads/s and Redis commands per read
async function readRate(port, era = 'modern', seconds = 5) {
  const clients = Array.from({ length: 32 }, () => new HttpMcpClient({ port, era }));
  for (const c of clients) if (era === 'legacy') await c.initialize();
  const uri = `file://${join(dir, 'files', 'a.txt')}`;
  const before = await cmdTotal();
  const runs = await Promise.all(
    clients.map((c) =>
      closedLoop(() => c.request('resources/read', { uri }), {
        concurrency: 1,
        durationMs: seconds * 1000,
      }),
    ),
  );
  const after = await cmdTotal();
  const count = runs.reduce((n, r) => n + r.count, 0);
  for (const c of clients) c.close();
  return { rate: count / runs[0].seconds, perRead: (after - before) / count };
}
if (runs('rates')) {
  const a = await startMember(redis.url, 'rate:', 'A');
  await readRate(a.port, 'modern', 2); // warm-up
  const direct = await readRate(a.port);
  say(
    `reads/s, 2026-07-28, 32 clients, 1 instance direct: ${fmtInt(direct.rate)} (Redis commands per read ${direct.perRead.toFixed(2)})`,
  );
  const legacy = await readRate(a.port, 'legacy');
  say(
    `reads/s, 2025 sessions, 32 clients, 1 instance direct: ${fmtInt(legacy.rate)} (Redis commands per read ${legacy.perRead.toFixed(2)})`,
  );
  kill(a);
  // Redis-backed limits against the same limits in memory (one plain process), alternated twice.
  const limited = await startMember(redis.url, 'rate2:', 'L', ['rate-limit']);
  const inMemory = await startMember(redis.url, 'rate3:', 'M', ['memory-limit']);
  await readRate(limited.port, 'modern', 2);
  await readRate(inMemory.port, 'modern', 2);
  const redisRuns = [];
  const memoryRuns = [];
  for (let rep = 0; rep < 2; rep += 1) {
    redisRuns.push(await readRate(limited.port));
    memoryRuns.push((await readRate(inMemory.port)).rate);
  }
  const redisRate = redisRuns.reduce((n, r) => n + r.rate, 0) / 2;
  const memoryRate = memoryRuns.reduce((n, r) => n + r, 0) / 2;
  say(
    `reads/s, 2026-07-28, Redis-backed rate limits: ${fmtInt(redisRate)} vs in-memory limits ${fmtInt(memoryRate)} = ${((100 * redisRate) / memoryRate).toFixed(0)}% (Redis commands per read ${redisRuns[0].perRead.toFixed(2)}, one EVALSHA round trip; mean of 2 alternated 5 s runs)`,
  );
  kill(limited);
  kill(inMemory);
  const { existsSync } = await import('node:fs');
  const haproxyBin = ['/usr/sbin/haproxy', '/usr/bin/haproxy'].find((p) => existsSync(p));
  if (haproxyBin !== undefined) {
    const members = [];
    for (const name of ['A', 'B', 'C']) members.push(await startMember(redis.url, 'rr:', name));
    const port = await freePort();
    const cfg = join(dir, 'haproxy.cfg');
    writeFileSync(
      cfg,
      `global\n  maxconn 4000\ndefaults\n  mode http\n  option http-keep-alive\n  timeout connect 5s\n  timeout client 1h\n  timeout server 1h\nfrontend f\n  bind 127.0.0.1:${port}\n  default_backend b\nbackend b\n  balance roundrobin\n${members.map((m, i) => `  server m${i} 127.0.0.1:${m.port}\n`).join('')}`,
    );
    const proxy = spawn(haproxyBin, ['-f', cfg, '-db'], { stdio: 'ignore' });
    children.add(proxy);
    await waitForPort(port, 10_000);
    const three = await readRate(port);
    say(
      `reads/s, 2026-07-28, 32 clients, 3 instances behind HAProxy: ${fmtInt(three.rate)} (${(three.rate / direct.rate).toFixed(2)}× 1 instance direct; 2 shared cores)`,
    );
    const legacyThree = await readRate(port, 'legacy');
    say(
      `reads/s, 2025 sessions (round robin, rebuilt from Redis on first use per instance), 3 instances behind HAProxy: ${fmtInt(legacyThree.rate)} (Redis commands per read ${legacyThree.perRead.toFixed(2)})`,
    );
    proxy.kill('SIGKILL');
    for (const m of members) kill(m);
  } else say('HAProxy not installed: 3-instance row skipped');
}

// 4. bytes per 2025 session
if (runs('session')) {
  const a = await startMember(redis.url, 'sess:', 'A');
  const client = new HttpMcpClient({ port: a.port, era: 'legacy' });
  await client.initialize();
  const bytes = await admin.memory('USAGE', `sess:session:${client.sessionId}`);
  const record = await admin.get(`sess:session:${client.sessionId}`);
  say(
    `bytes per 2025 session in Redis: ${bytes} (MEMORY USAGE; record ${Buffer.byteLength(record ?? '')} bytes of JSON) + one sorted-set member per quota key`,
  );
  client.close();

  // A subscription edited on the instance holding the session's GET stream, and on another: the
  // second merges its edit into the record and waits for the stream's instance to follow.
  const b = await startMember(redis.url, 'sess:', 'B');
  const owner = new HttpMcpClient({ port: a.port, era: 'legacy' });
  await owner.initialize();
  const stream = await sessionStream(a.port, owner.sessionId);
  const elsewhere = new HttpMcpClient({ port: b.port, era: 'legacy' });
  elsewhere.sessionId = owner.sessionId;
  const uri = `file://${join(dir, 'files', 'a.txt')}`;
  const timed = async (client, target = uri) => {
    const times = [];
    for (let i = 0; i < 200; i += 1) {
      const start = performance.now();
      await client.request(i % 2 === 0 ? 'resources/subscribe' : 'resources/unsubscribe', {
        uri: target,
      });
      times.push(performance.now() - start);
    }
    return times.slice(20);
  };
  // Each instance's first edit rebuilds or warms the session; the first 20 of each run are left out.
  const here = await timed(owner);
  const there = await timed(elsewhere);
  const commandsBefore = await cmdTotal();
  await elsewhere.request('resources/subscribe', { uri });
  const perEdit = (await cmdTotal()) - commandsBefore;
  say(
    `2025 subscribe/unsubscribe latency, 180 alternated: on the GET stream's instance p50 ${fmtMs(percentile(here, 50))} p99 ${fmtMs(percentile(here, 99))}; on another instance (merged into the record, answered once the stream's instance follows) p50 ${fmtMs(percentile(there, 50))} p99 ${fmtMs(percentile(there, 99))}; Redis commands per edit elsewhere ${perEdit}`,
  );
  // A polled resource, on the stream's instance: the subscribe also asks Redis whether the lease
  // holder has anything on record of it (HEXISTS; the first one reads it and records it, HSETNX),
  // so a change before the holder's baseline is reported; an unsubscribe does not.
  const polledUri = 'poll://bench/row';
  const polled = await timed(owner, polledUri);
  const polledBefore = await cmdTotal();
  await owner.request('resources/subscribe', { uri: polledUri });
  const perPolled = (await cmdTotal()) - polledBefore;
  say(
    `2025 subscribe/unsubscribe latency of a polled resource (relayed to the lease holder), 180 alternated, on the GET stream's instance: p50 ${fmtMs(percentile(polled, 50))} p99 ${fmtMs(percentile(polled, 99))}; Redis commands per subscribe ${perPolled}`,
  );
  stream.destroy();
  owner.close();
  elsewhere.close();
  kill(a);
  kill(b);
}

// 5. takeover over 20 killed lease holders
if (runs('takeover')) {
  const prefix = 'take:';
  const members = new Map();
  let next = 0;
  const add = async () => {
    const name = `M${next++}`;
    members.set(name, await startMember(redis.url, prefix, name));
  };
  for (let i = 0; i < 3; i += 1) await add();
  let value = 0;
  const takeovers = [];
  let lostAfter = 0,
    dupAfter = 0,
    lostGap = 0,
    dupGap = 0;
  for (let round = 0; round < 20; round += 1) {
    // One listen stream per member, opened fresh.
    const counts = new Map();
    const streams = [];
    for (const [name, m] of members) {
      counts.set(name, 0);
      streams.push(
        await listen(m.port, 'poll://bench/row', () => counts.set(name, counts.get(name) + 1)),
      );
    }
    let holder;
    for (let i = 0; i < 100 && holder === undefined; i += 1) {
      holder = leaseHolder(await admin.get(`${prefix}lease:poll://bench/`));
      if (holder === undefined) await sleep(50);
    }
    await sleep(300);
    const killedAt = performance.now();
    kill(members.get(holder));
    members.delete(holder);
    counts.delete(holder);
    // A change during the gap (before anyone else holds the lease).
    for (const k of counts.keys()) counts.set(k, 0);
    change_(++value);
    let successor;
    while (successor === undefined || successor === holder) {
      successor = leaseHolder(await admin.get(`${prefix}lease:poll://bench/`));
      if (successor === undefined || successor === holder) await sleep(20);
    }
    takeovers.push(performance.now() - killedAt);
    await sleep(500);
    for (const c of counts.values()) {
      if (c === 0) lostGap += 1;
      if (c > 1) dupGap += 1;
    }
    for (const k of counts.keys()) counts.set(k, 0);
    change_(++value);
    await sleep(500);
    for (const c of counts.values()) {
      if (c === 0) lostAfter += 1;
      if (c > 1) dupAfter += 1;
    }
    for (const s of streams) s.destroy();
    await add();
  }
  say(
    `takeover over 20 SIGKILLed lease holders: p50 ${fmtMs(percentile(takeovers, 50), 0)}, max ${fmtMs(Math.max(...takeovers), 0)} (lease 3 s, tick 1 s)`,
  );
  say(
    `  change after each takeover: ${lostAfter} lost, ${dupAfter} duplicated (of ${20 * 2} deliveries)`,
  );
  say(
    `  change made during the gap (holder dead, no successor yet): ${lostGap} lost, ${dupGap} duplicated (of ${20 * 2}) — reported by the new holder from the last-seen digest in Redis`,
  );
  for (const m of members.values()) kill(m);
}
admin.disconnect();
process.exit(0);

/** The holder a lease value names: `<member>\n<seal>` (the seal is the members' to check). */
function leaseHolder(value) {
  if (value === null || value === undefined) return undefined;
  const cut = value.lastIndexOf('\n');
  return cut < 0 ? undefined : value.slice(0, cut);
}
