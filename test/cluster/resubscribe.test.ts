// ioredis subscribes a reconnected connection again by itself and drops that promise. Closed before
// Redis answers (a shutdown while Redis hangs, or just after it returned), that promise rejected
// with no handler: in a server, that ends the process. Here a proxy between the subscriber and Redis
// swallows the re-subscription, the subscriber is closed while it waits, and no rejection goes
// unhandled; a caller's own subscribe still hears its failure.
import { afterEach, describe, expect, it } from 'vitest';
import { connectRedis, type RedisLink } from '../../src/cluster/redis.js';
import { silentLogger } from '../../src/core/log.js';
import { Cleanup } from '../helpers/clients.js';
import { ownRedis, REDIS_SERVER } from '../helpers/redis-server.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { waitFor } from '../subscriptions/harness.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

/**
 * A Redis link to a redis-server of the test's own through a proxy that forwards everything but
 * SUBSCRIBE commands once `swallow.on` is set; its subscriber already subscribed to `channel`.
 */
async function subscribedThroughProxy(
  channel: string,
): Promise<{ link: RedisLink; swallow: { on: boolean } }> {
  const redis = await ownRedis(cleanup);
  const swallow = { on: false };
  const proxy = new TcpProxy('127.0.0.1', redis.port, {
    clientFilter: () => (chunk, send) => {
      if (swallow.on && /subscribe/i.test(chunk.toString('latin1'))) return;
      send(chunk);
    },
  });
  await proxy.up();
  cleanup.add(() => proxy.down());
  const link = connectRedis(`redis://127.0.0.1:${proxy.port}`, 'resub:', silentLogger, 500);
  cleanup.add(() => link.close());
  await link.subscriber.subscribe(channel);
  return { link, swallow };
}

/** Rejections nobody handled while `work` ran and two turns of the event loop after it. */
async function unhandledDuring(work: () => Promise<void>): Promise<unknown[]> {
  const seen: unknown[] = [];
  const note = (reason: unknown): void => void seen.push(reason);
  process.on('unhandledRejection', note);
  try {
    await work();
    for (let i = 0; i < 2; i += 1) await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('unhandledRejection', note);
  }
  return seen;
}

describe.skipIf(REDIS_SERVER === undefined)('Redis re-subscription after a reconnection', () => {
  it('leaves no rejection unhandled when the connection closes before Redis answers it', async () => {
    const { link, swallow } = await subscribedThroughProxy('resub-channel');
    const queued = (): number =>
      (link.subscriber as unknown as { commandQueue: { length: number } }).commandQueue.length;
    const unhandled = await unhandledDuring(async () => {
      swallow.on = true;
      link.subscriber.disconnect(true); // dropped, and reconnected at once
      await waitFor(
        () => link.subscriber.status === 'ready' && queued() > 0,
        'the re-subscription to be written and waiting',
      );
      link.subscriber.disconnect();
      await waitFor(() => queued() === 0, 'the re-subscription to be given up on');
    });
    expect(unhandled).toEqual([]);
  });

  it('still rejects a caller’s own subscribe whose connection closes before the answer', async () => {
    const { link, swallow } = await subscribedThroughProxy('first');
    swallow.on = true;
    const pending = link.subscriber.subscribe('second');
    link.subscriber.disconnect();
    await expect(pending).rejects.toThrow(/Connection is closed/);
  });
});
