// Redis trouble is not an outage: the test runs its own redis-server on a free port (never the
// shared one), stops it under a running instance, and starts it again.
import { once } from 'node:events';
import { createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, eventuallyAccepted } from '../helpers/eventually.js';
import { Cleanup, connectHttp } from '../helpers/clients.js';
import { freePort } from '../helpers/ports.js';
import { ownRedis as startRedis, REDIS_SERVER } from '../helpers/redis-server.js';
import { Recorder, waitFor, watchUris } from '../subscriptions/harness.js';
import {
  Backend,
  MEM_ROOT,
  openOutages,
  outageReason,
  startMember,
  uniquePrefix,
} from './harness.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const ownRedis = (port: number): ReturnType<typeof startRedis> => startRedis(cleanup, port);

/** A listener on `port` that hangs up on every connection, counting them. */
async function refuser(port: number): Promise<{ readonly count: number; close(): Promise<void> }> {
  let count = 0;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    count += 1;
    socket.on('error', () => undefined);
    socket.destroy();
  });
  server.on('connection', (socket: Socket) => sockets.add(socket));
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return {
    get count() {
      return count;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function readyz(url: string): Promise<{
  status: number;
  body: { status: string; redis?: { status: string; reason?: string } };
}> {
  const answer = await fetch(new URL('/readyz', url));
  return {
    status: answer.status,
    body: (await answer.json()) as { status: string; redis?: { status: string; reason?: string } },
  };
}

/**
 * Waits until /readyz at `url` says ready with Redis up: a health PING unanswered in time on a
 * loaded machine is a short outage of its own, so one read could catch it.
 */
async function readyAndUp(url: string): Promise<void> {
  await eventuallyAccepted(
    () => readyz(url),
    (r) => r.body.status === 'ready' && r.body.redis?.status === 'up',
    '/readyz to say ready with Redis up',
  );
}

describe.skipIf(REDIS_SERVER === undefined)('cluster mode while Redis is down', () => {
  it('keeps serving reads and lists (rate limits counted in memory meanwhile), reports degraded on /readyz (the reason in the log), logs one line per outage, and resumes cross-instance notifications when Redis returns', async () => {
    const port = await freePort();
    let redis = await ownRedis(port);
    const url = `redis://127.0.0.1:${port}`;
    const backend = new Backend();
    backend.values.set('row', 'v1');
    const prefix = uniquePrefix();
    // A's rate limits count in Redis; while it is away, the in-memory insurance limiter counts.
    const a = await startMember('A', prefix, backend, {
      redisUrl: url,
      reservoir: { policy: { rateLimit: { requests: { perSecond: 100, burst: 1_000 } } } },
    });
    cleanup.add(() => a.close());
    const b = await startMember('B', prefix, backend, { redisUrl: url });
    cleanup.add(() => b.close());
    const uri = `${MEM_ROOT}row`;
    const onA = await connectHttp('2026', a.url, cleanup);
    const onB = await connectHttp('2025', b.url, cleanup);
    const aEvents = new Recorder(onA.client);
    const bEvents = new Recorder(onB.client);
    await watchUris(onA.client, '2026', [uri]);
    await watchUris(onB.client, '2025', [uri]);
    await waitFor(() => backend.pollers().length === 1, 'one instance to poll the source');
    await readyAndUp(a.url);

    await redis.stop();
    await waitFor(() => openOutages(a) === 1, 'the outage to be logged');
    const during = await readyz(a.url);
    expect(during.status).toBe(200);
    expect(during.body.status).toBe('degraded');
    expect(during.body.redis?.status).toBe('degraded');
    // Without credentials the reason (which names Redis's address) is not given; the log has it.
    expect(during.body.redis).toEqual({ status: 'degraded' });
    expect(JSON.stringify(during.body)).not.toContain(String(port));
    expect(
      outageReason(a),
      // Refused, reset or closed, or, when the killed server's health PING was in flight and the
      // machine was loaded, that PING going unanswered: which the client notices first is scheduling.
    ).toMatch(/ECONNREFUSED|ECONNRESET|closed|did not answer a PING/);
    // Reads and lists go on, on both eras (A's rate limit on its insurance limiter).
    for (let i = 0; i < 5; i += 1)
      expect((await onA.client.readResource({ uri })).contents[0]).toMatchObject({ text: 'v1' });
    expect((await onB.client.listResources()).resources.map((r) => r.uri)).toEqual([uri]);
    // The pollers stop while no lease can be renewed.
    await waitFor(
      () => backend.pollers().length === 0,
      'polling to pause while Redis is away',
      5_000,
    );
    // Several reconnection attempts fail meanwhile: a stand-in on Redis's port counts them, hanging up on each.
    const attempts = await refuser(port);
    await eventually(
      () => attempts.count >= 6,
      () => `six reconnection attempts (${attempts.count} so far)`,
    );
    await attempts.close();
    expect(openOutages(a)).toBe(1);

    redis = await ownRedis(port);
    await waitFor(() => openOutages(a) === 0, 'the end of the outage to be logged', 10_000);
    await waitFor(() => backend.pollers().length === 1, 'one instance to poll again', 10_000);
    await readyAndUp(a.url);
    backend.values.set('row', 'v2');
    await waitFor(
      () => aEvents.updates(uri) >= 1 && bEvents.updates(uri) >= 1,
      'both clients to hear a change after Redis returned',
    );
    await waitFor(() => openOutages(a) === 0, 'no outage to be open');
  });
});
