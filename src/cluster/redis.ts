/**
 * The Redis connections of one cluster member: one for commands, one for pub/sub (a subscribed
 * connection can run nothing else). ioredis reconnects with backoff on its own; commands issued
 * while the connection is down fail at once (no offline queue), so a read never waits on Redis.
 *
 * A Redis that keeps the connection but stops answering (a paused process, a black-holed network)
 * is caught too: every command has a short timeout (`timeoutMs`, ioredis' `commandTimeout` and
 * {@link RedisLink.call}), and each connection is PINGed every second with the same timeout. A
 * command or PING left unanswered marks Redis degraded and drops both connections, so what waited
 * on them is rejected and nothing piles up; while degraded `call` refuses at once without sending
 * anything, so callers fall back (in-memory limits, local sessions). ioredis reconnects (a
 * handshake stuck for ten timeouts is dropped and made again), and the outage ends when both new
 * connections are ready, which takes Redis answering. The member's Redis
 * health is tracked here: one log line when an outage starts, one when it ends.
 */
import { createRequire } from 'node:module';
import type * as IORedis from 'ioredis';
import type { Redis as RedisClient, RedisOptions } from 'ioredis';
import { ReservoirError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { DEFAULT_REDIS_TIMEOUT_MS } from './options.js';

export type RedisState = { status: 'up' } | { status: 'degraded'; reason: string; since: number };

export interface RedisLink {
  /** Commands. Keys are prefixed by ioredis (`keyPrefix`); channels are not, so they use `prefix`. */
  readonly client: RedisClient;
  /** Pub/sub only. */
  readonly subscriber: RedisClient;
  readonly prefix: string;
  /** Longest one command may take before Redis counts as hung, ms. */
  readonly timeoutMs: number;
  /** Up, or degraded since the first connection error (or unanswered command) of the outage. */
  state(): RedisState;
  /** Whether commands are sent now: false while Redis is degraded (callers fall back instead). */
  available(): boolean;
  /**
   * One bounded call on the command connection. Rejects with ReservoirError('unavailable') at once
   * while Redis is degraded (nothing is sent), and after `timeoutMs` when Redis does not answer
   * (which marks it degraded); rejects with the signal's reason when `signal` aborts first.
   */
  call<T>(command: (client: RedisClient) => Promise<T>, signal?: AbortSignal): Promise<T>;
  /** Outages since start. */
  readonly outages: number;
  close(): Promise<void>;
}

/** Backoff between reconnection attempts: 50 ms doubling, at most 2 s. */
export function reconnectDelay(attempt: number): number {
  return Math.min(2_000, 50 * 2 ** Math.min(attempt, 6));
}

/** How often each connection is PINGed to notice a Redis that stopped answering. */
const PROBE_INTERVAL_MS = 1_000;
/** A handshake (connected, not yet ready) lasting this many timeouts is given up on. */
const STUCK_HANDSHAKES = 10;
/** ioredis' rejection of a command past `commandTimeout`. */
const COMMAND_TIMED_OUT = 'Command timed out';

export function connectRedis(
  url: string,
  keyPrefix: string,
  logger: Logger,
  timeoutMs = DEFAULT_REDIS_TIMEOUT_MS,
): RedisLink {
  // ioredis is CommonJS and loaded only here, so a server without --redis never loads it.
  const { Redis } = createRequire(import.meta.url)('ioredis') as typeof IORedis;
  // `satisfies`, not an annotation: spread below, the object carries only these keys rather than
  // every optional one of RedisOptions as `| undefined`.
  const options = {
    keyPrefix,
    lazyConnect: false,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    retryStrategy: reconnectDelay,
  } satisfies RedisOptions;
  const client = new Redis(url, {
    ...options,
    // A command's promise settles by then even when Redis never answers (callers that use the client
    // directly, as the rate limiter does, fall back on that rejection).
    commandTimeout: timeoutMs,
    // A command given up on is not sent again after a reconnection (a limit counted in memory meanwhile, a late write).
    autoResendUnfulfilledCommands: false,
  });
  // The subscriber queues its SUBSCRIBE until connected, and re-subscribes after a reconnection.
  const subscriber = new Redis(url, {
    ...options,
    keyPrefix: '',
    enableOfflineQueue: true,
    maxRetriesPerRequest: null,
  });
  handleOwnResubscribes(subscriber);
  let state: RedisState = { status: 'up' };
  let outages = 0;
  const probing = new Set<RedisClient>();
  const down = (reason: string): void => {
    if (state.status === 'degraded') return;
    state = { status: 'degraded', reason, since: Date.now() };
    outages += 1;
    logger.warn(
      { reason, redis: redact(url) },
      'Redis is unreachable: serving on; cross-instance notifications, shared sessions and shared limits pause until it returns',
    );
  };
  const up = (): void => {
    if (state.status === 'up') return;
    logger.warn(
      { downMs: Date.now() - state.since, redis: redact(url) },
      'Redis is back: cross-instance notifications resume',
    );
    state = { status: 'up' };
  };
  /**
   * Redis left a command unanswered: degraded, and the open connections are dropped — whatever
   * waits on them is rejected (nothing piles up) and ioredis reconnects; the outage ends when both
   * new connections are ready, which takes Redis answering.
   */
  const hung = (what: string): void => {
    down(`Redis did not answer ${what} within ${timeoutMs} ms`);
    for (const connection of [client, subscriber])
      if (connection.status === 'ready') connection.disconnect(true);
  };
  for (const connection of [client, subscriber]) {
    connection.on('error', (error: Error) => down(error.message));
    connection.on('close', () => down('connection closed'));
    connection.on('ready', () => {
      if (client.status === 'ready' && subscriber.status === 'ready') up();
    });
  }
  /** One PING at a time per connection; unanswered within `timeoutMs`, Redis is hung. */
  const probe = (connection: RedisClient): void => {
    if (probing.has(connection) || connection.status !== 'ready') return;
    probing.add(connection);
    let answered = false;
    const timer = overdue(timeoutMs, () => {
      if (!answered) hung('a PING');
    });
    connection.ping().then(
      () => {
        answered = true;
        clearTimeout(timer);
        probing.delete(connection);
      },
      (error: unknown) => {
        // Timed out (the command connection's own timeout), or the connection failed (its events say so).
        clearTimeout(timer);
        probing.delete(connection);
        if (!answered && error instanceof Error && error.message === COMMAND_TIMED_OUT)
          hung('a PING');
        answered = true;
      },
    );
  };
  // A connection stuck in its handshake (the subscriber's ready check has no timeout of its own)
  // is dropped and made again, so a network that comes back by another path is found.
  const connecting = new Map<RedisClient, number>();
  for (const connection of [client, subscriber])
    connection.on('connect', () => connecting.set(connection, Date.now()));
  const unstick = (connection: RedisClient): void => {
    const since = connecting.get(connection);
    if (
      connection.status === 'connect' &&
      since !== undefined &&
      Date.now() - since > STUCK_HANDSHAKES * timeoutMs
    ) {
      connecting.delete(connection);
      connection.disconnect(true);
    }
  };
  const prober = setInterval(() => {
    for (const connection of [client, subscriber]) {
      probe(connection);
      unstick(connection);
    }
  }, PROBE_INTERVAL_MS).unref();
  return {
    client,
    subscriber,
    prefix: keyPrefix,
    timeoutMs,
    state: () => state,
    available: () => state.status === 'up',
    call(command, signal) {
      if (state.status === 'degraded') return Promise.reject(unavailable(state.reason, timeoutMs));
      if (signal?.aborted === true) return Promise.reject(signal.reason as Error);
      return new Promise((resolve, reject) => {
        let settled = false;
        const finish = (): boolean => {
          if (settled) return false;
          settled = true;
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          return true;
        };
        const onAbort = (): void => {
          if (finish()) reject(signal!.reason as Error);
        };
        const timer = overdue(timeoutMs, () => {
          if (!finish()) return;
          hung('a command');
          reject(unavailable(`Redis did not answer within ${timeoutMs} ms`, timeoutMs));
        });
        signal?.addEventListener('abort', onAbort, { once: true });
        command(client).then(
          (value) => {
            if (finish()) resolve(value);
          },
          (error: unknown) => {
            if (!finish()) return;
            if (!(error instanceof Error && error.message === COMMAND_TIMED_OUT))
              return reject(error as Error);
            hung('a command');
            reject(unavailable(`Redis did not answer within ${timeoutMs} ms`, timeoutMs));
          },
        );
      });
    },
    get outages() {
      return outages;
    },
    async close() {
      clearInterval(prober);
      // A hung Redis does not hold up shutdown: QUIT gets the same timeout as any command.
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
      await Promise.race([Promise.allSettled([client.quit(), subscriber.quit()]), late]);
      clearTimeout(timer);
      client.disconnect();
      subscriber.disconnect();
    },
  };
}

/**
 * ioredis subscribes again by itself once a reconnected connection is ready, and drops the
 * promise: should that connection close before Redis answers (a shutdown, or a drop while Redis
 * hangs), the promise rejects with no handler — which ends a Node process. Every subscribe call
 * on `connection` gets a handler here; a caller's own promise still rejects as it did.
 */
function handleOwnResubscribes(connection: RedisClient): void {
  for (const name of ['subscribe', 'psubscribe', 'ssubscribe'] as const) {
    const original = connection[name].bind(connection) as (...args: unknown[]) => Promise<unknown>;
    Object.defineProperty(connection, name, {
      configurable: true,
      writable: true,
      value: (...args: unknown[]): Promise<unknown> => {
        const pending = original(...args);
        pending.catch(() => undefined);
        return pending;
      },
    });
  }
}

/**
 * Calls `late` when `ms` pass, unless cleared first. It waits one more turn of the event loop, so an
 * answer that arrived while this process was busy (a stalled loop fires timers before reading
 * sockets) is taken before Redis is called hung.
 */
function overdue(ms: number, late: () => void): NodeJS.Timeout {
  const timer = setTimeout(() => setImmediate(late), ms);
  timer.unref();
  return timer;
}

function unavailable(reason: string, timeoutMs: number): ReservoirError {
  return new ReservoirError('unavailable', `Redis is unavailable: ${reason}`, {
    data: { dependency: 'redis', reason, timeoutMs },
  });
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
