// A hung Redis never hangs a request. The test's own redis-server is paused with SIGSTOP (the
// process keeps its connections and answers nothing), or reached through a TCP proxy that stops
// forwarding: reads (rate-limited), new 2025 sessions, and requests in a session another instance
// holds are each answered — a success, a local session, or a clear 503 — and /readyz says
// `degraded` (the log names the configured timeout), then `ready` once Redis answers again.
// The Redis timeout is set small here; the 2 s / 5 s targets at the default are in docs/cluster.md.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Cleanup, connectHttp } from '../helpers/clients.js';
import { ownRedis, REDIS_SERVER } from '../helpers/redis-server.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { waitFor } from '../subscriptions/harness.js';
import {
  Backend,
  MEM_ROOT,
  openOutages,
  outageReason,
  startMember,
  uniquePrefix,
  type Member,
} from './harness.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());
afterAll(() => cleanup.run());

const TIMEOUT_MS = 150;
/** A generous cap on each answer: a request that waited on the hung Redis would never settle. */
const ANSWER_CAP_MS = 10_000;
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 't', version: '0' },
  },
};

/** Settles with `work`'s outcome, or fails the test if it is still pending after the cap. */
async function answered<T>(
  work: Promise<T>,
  what: string,
): Promise<{ value?: T; error?: unknown }> {
  let timer: NodeJS.Timeout | undefined;
  const cap = new Promise<never>(
    (_, reject) =>
      (timer = setTimeout(
        () => reject(new Error(`no answer within ${ANSWER_CAP_MS} ms: ${what}`)),
        ANSWER_CAP_MS,
      )),
  );
  try {
    return await Promise.race([
      work.then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      ),
      cap,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function rpc(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

type Ready = { status: string; redis?: { status: string; reason?: string } };
async function readyz(member: Member): Promise<Ready> {
  return (await (await fetch(new URL('/readyz', member.url))).json()) as Ready;
}

/** Polls /readyz (each answer itself capped) until `check` holds. */
async function readyzUntil(
  member: Member,
  check: (body: Ready) => boolean,
  what: string,
): Promise<Ready> {
  let last: Ready | undefined;
  let polling = false;
  await waitFor(
    () => {
      if (last !== undefined && check(last)) return true;
      if (!polling) {
        polling = true;
        void answered(readyz(member), '/readyz').then(({ value }) => {
          last = value;
          polling = false;
        });
      }
      return false;
    },
    () => `${what} (last /readyz: ${JSON.stringify(last)})`,
    ANSWER_CAP_MS,
  );
  return last!;
}

/** Two members on `redisUrl`; A rate-limits, B holds a 2025 session (`foreign` to A). */
async function cluster(
  redisUrl: string,
): Promise<{ a: Member; b: Member; foreign: string; backend: Backend }> {
  const backend = new Backend();
  backend.values.set('row', 'v1');
  const prefix = uniquePrefix();
  const policy = { rateLimit: { requests: { perSecond: 1_000, burst: 10_000 } } };
  const a = await startMember('A', prefix, backend, {
    redisUrl,
    redisTimeoutMs: TIMEOUT_MS,
    reservoir: { policy },
  });
  cleanup.add(() => a.close());
  const b = await startMember('B', prefix, backend, {
    redisUrl,
    redisTimeoutMs: TIMEOUT_MS,
    reservoir: { policy },
  });
  cleanup.add(() => b.close());
  const opened = await rpc(b.url, INITIALIZE);
  expect(opened.status).toBe(200);
  const foreign = opened.headers.get('mcp-session-id')!;
  // (a health PING unanswered within the short timeout on a loaded machine is an outage of its
  // own, ended at the next connection: ready is waited for, not read once)
  await readyzUntil(
    a,
    (body) => body.status === 'ready' && body.redis?.status === 'up',
    'A to be ready with Redis up',
  );
  return { a, b, foreign, backend };
}

const LIST = { jsonrpc: '2.0', id: 2, method: 'resources/list', params: {} };
const inSession = (id: string): Record<string, string> => ({
  'mcp-session-id': id,
  'mcp-protocol-version': '2025-11-25',
});

/** Everything a request may need of Redis, while it does not answer: each is answered. */
async function expectAnsweredWhileHung(a: Member, foreign: string): Promise<void> {
  const uri = `${MEM_ROOT}row`;
  // Reads on both eras, through A's rate limit (counted in memory while Redis does not answer).
  const modern = await answered(connectHttp('2026', a.url, cleanup), 'a 2026 client connecting');
  expect(modern.error).toBeUndefined();
  for (let i = 0; i < 5; i += 1) {
    const read = await answered(modern.value!.client.readResource({ uri }), 'a 2026 read');
    expect(read.value?.contents[0]).toMatchObject({ text: 'v1' });
  }
  // A new 2025 session: initialize is answered with a session this instance serves itself.
  const legacy = await answered(connectHttp('2025', a.url, cleanup), 'a 2025 initialize');
  expect(legacy.error).toBeUndefined();
  const listed = await answered(legacy.value!.client.listResources(), 'a 2025 list');
  expect(listed.value?.resources.map((r) => r.uri)).toEqual([uri]);
  // A session another instance holds cannot be looked up: a clear 503, not a hang and not a 404.
  const stranger = await answered(
    rpc(a.url, LIST, inSession(foreign)),
    'a request in a foreign session',
  );
  expect(stranger.value?.status).toBe(503);
  expect(await stranger.value!.json()).toMatchObject({
    error: {
      code: -32000,
      message: expect.stringMatching(/session directory cannot be reached.*retry/) as unknown,
    },
  });
}

describe.skipIf(REDIS_SERVER === undefined)('cluster mode while Redis is hung', () => {
  it('answers reads, initialize and foreign-session requests while redis-server is paused (SIGSTOP), reports degraded with the timeout, and recovers on SIGCONT', async () => {
    const redis = await ownRedis(cleanup);
    cleanup.add(() => redis.resume());
    const { a, foreign } = await cluster(redis.url);

    redis.pause();
    await expectAnsweredWhileHung(a, foreign);
    const during = await readyzUntil(
      a,
      (body) => body.status === 'degraded',
      '/readyz to say degraded',
    );
    // Without credentials /readyz gives no reason; the log names the timeout.
    expect(during.redis).toEqual({ status: 'degraded' });
    expect(outageReason(a)).toContain(`within ${TIMEOUT_MS} ms`);
    // Degraded, every request keeps being answered (nothing is sent to Redis, nothing piles up on
    // it), and the outage is logged once: one start, no end yet.
    await expectAnsweredWhileHung(a, foreign);
    expect(openOutages(a)).toBe(1);

    redis.resume();
    await readyzUntil(
      a,
      (body) => body.status === 'ready',
      '/readyz to say ready once Redis answers',
    );
    await waitFor(() => openOutages(a) === 0, 'the end of the outage to be logged', ANSWER_CAP_MS);
    // The foreign session is served again: looked up in Redis and adopted.
    const adopted = await answered(
      rpc(a.url, LIST, inSession(foreign)),
      'a foreign session after the outage',
    );
    expect(adopted.value?.status).toBe(200);
    expect(JSON.stringify(await adopted.value!.json())).toContain(`${MEM_ROOT}row`);
  });

  it('answers the same requests while the network to Redis stops forwarding (connections open, nothing arrives), and recovers when it forwards again', async () => {
    const redis = await ownRedis(cleanup);
    const proxy = new TcpProxy('127.0.0.1', redis.port);
    await proxy.up();
    cleanup.add(() => proxy.down());
    cleanup.add(() => proxy.resume());
    const { a, foreign } = await cluster(`redis://127.0.0.1:${proxy.port}`);

    proxy.stall();
    await expectAnsweredWhileHung(a, foreign);
    await readyzUntil(a, (body) => body.status === 'degraded', '/readyz to say degraded');
    expect(outageReason(a)).toContain(`within ${TIMEOUT_MS} ms`);

    proxy.resume();
    await readyzUntil(
      a,
      (body) => body.status === 'ready',
      '/readyz to say ready once Redis answers',
    );
    const adopted = await answered(
      rpc(a.url, LIST, inSession(foreign)),
      'a foreign session after the outage',
    );
    expect(adopted.value?.status).toBe(200);
  });

  it('goes degraded on its own when Redis stops answering, with no request to notice it, and sends nothing more to the hung connection meanwhile', async () => {
    const redis = await ownRedis(cleanup);
    cleanup.add(() => redis.resume());
    const { a, b } = await cluster(redis.url);
    redis.pause();
    await readyzUntil(a, (body) => body.status === 'degraded', 'A to notice the hang by itself');
    await readyzUntil(b, (body) => body.status === 'degraded', 'B to notice the hang by itself');
    // What waited on the hung connections was dropped with them; while degraded nothing new is queued.
    const queued = (m: Member): number =>
      (m.reservoir.cluster!.link.client as unknown as { commandQueue: { length: number } })
        .commandQueue.length;
    const onA = await answered(connectHttp('2026', a.url, cleanup), 'a 2026 client connecting');
    for (let i = 0; i < 50; i += 1)
      await answered(onA.value!.client.readResource({ uri: `${MEM_ROOT}row` }), 'a read');
    expect(queued(a)).toBeLessThan(5);
  });
});
