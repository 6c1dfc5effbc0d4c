/**
 * The Redis connections of one cluster member: one for commands, one for pub/sub (a subscribed
 * connection can run nothing else). ioredis reconnects with backoff on its own; commands issued
 * while the connection is down fail at once (no offline queue), so a read never waits on Redis.
 * The member's Redis health is tracked here: one log line when an outage starts, one when it ends.
 */
import { createRequire } from 'node:module';
import type * as IORedis from 'ioredis';
import type { Redis as RedisClient, RedisOptions } from 'ioredis';
import type { Logger } from '../core/log.js';

export type RedisState = { status: 'up' } | { status: 'degraded'; reason: string; since: number };

export interface RedisLink {
  /** Commands. Keys are prefixed by ioredis (`keyPrefix`); channels are not, so they use `prefix`. */
  readonly client: RedisClient;
  /** Pub/sub only. */
  readonly subscriber: RedisClient;
  readonly prefix: string;
  /** Up, or degraded since the first connection error of the outage. */
  state(): RedisState;
  /** Outages since start. */
  readonly outages: number;
  close(): Promise<void>;
}

/** Backoff between reconnection attempts: 50 ms doubling, at most 2 s. */
export function reconnectDelay(attempt: number): number {
  return Math.min(2_000, 50 * 2 ** Math.min(attempt, 6));
}

export function connectRedis(url: string, keyPrefix: string, logger: Logger): RedisLink {
  // ioredis is CommonJS and loaded only here, so a server without --redis never loads it.
  const { Redis } = createRequire(import.meta.url)('ioredis') as typeof IORedis;
  const options: RedisOptions = {
    keyPrefix,
    lazyConnect: false,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    retryStrategy: reconnectDelay,
  };
  const client = new Redis(url, options);
  // The subscriber queues its SUBSCRIBE until connected, and re-subscribes after a reconnection.
  const subscriber = new Redis(url, { ...options, keyPrefix: '', enableOfflineQueue: true, maxRetriesPerRequest: null });
  let state: RedisState = { status: 'up' };
  let outages = 0;
  const down = (reason: string): void => {
    if (state.status === 'degraded') return;
    state = { status: 'degraded', reason, since: Date.now() };
    outages += 1;
    logger.warn({ reason, redis: redact(url) }, 'Redis is unreachable: serving on; cross-instance notifications, shared sessions and shared limits pause until it returns');
  };
  const up = (): void => {
    if (state.status === 'up') return;
    logger.warn({ downMs: Date.now() - state.since, redis: redact(url) }, 'Redis is back: cross-instance notifications resume');
    state = { status: 'up' };
  };
  for (const connection of [client, subscriber]) {
    connection.on('error', (error: Error) => down(error.message));
    connection.on('close', () => down('connection closed'));
    connection.on('ready', () => {
      if (client.status === 'ready' && subscriber.status === 'ready') up();
    });
  }
  return {
    client,
    subscriber,
    prefix: keyPrefix,
    state: () => state,
    get outages() {
      return outages;
    },
    async close() {
      await Promise.allSettled([client.quit(), subscriber.quit()]);
      client.disconnect();
      subscriber.disconnect();
    },
  };
}

/** The URL without its password, for logs. */
export function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.href;
  } catch {
    return 'redis';
  }
}
