/**
 * Cluster mode: several Reservoir processes serving one service behind a load balancer, sharing
 * Redis. One event bus (bus.ts), one poller per source (watch-relay.ts), 2025-era sessions any
 * member can serve (sessions.ts), shared rate limits (policy/rate-limit.ts with a Redis store),
 * and Redis trouble that is no outage (redis.ts). What members write for each other is sealed with
 * the shared secret (seal.ts) and dropped by readers when it does not verify. Loaded only when cluster mode is asked for.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from '../core/log.js';
import type { Subscriptions } from '../core/subscriptions.js';
import type { SessionDirectory } from '../http/session-directory.js';
import type { Metrics } from '../policy/metrics.js';
import type { RateLimitStore } from '../policy/rate-limit.js';
import { EventBus } from './bus.js';
import { ConfigError } from '../core/errors.js';
import {
  DEFAULT_KEY_PREFIX,
  MIN_SECRET_BYTES,
  SECRET_HOWTO,
  type RedisOptions,
} from './options.js';
import { connectRedis, type RedisLink, type RedisState } from './redis.js';
import { Seal } from './seal.js';
import { RedisSessionDirectory } from './sessions.js';
import { createTracer, type ReservoirTracer } from './tracing.js';
import { ClusterWatches, type LeaseOptions } from './watch-relay.js';

export {
  redisOptions,
  resolveSecret,
  requireSecret,
  SECRET_HOWTO,
  type RedisOptions,
} from './options.js';
export type { LeaseOptions } from './watch-relay.js';
export { createTracer, type ReservoirTracer } from './tracing.js';

export interface ClusterOptions extends RedisOptions {
  /**
   * The secret every instance of the service shares (at least 32 bytes; the same as the
   * reservoir's `secret`): it seals what members put in Redis — bus messages, session records,
   * leases — so what anyone else writes there is dropped.
   */
  secret: string;
  /** This member's name in logs, leases and metrics. @default `<hostname>-<pid>-<random>` */
  instance?: string;
  /** Lease timings of the one-poller-per-source rule. */
  leases?: LeaseOptions;
  logger?: Logger;
}

export class Cluster {
  readonly instance: string;
  readonly link: RedisLink;
  readonly bus: EventBus;
  readonly watches: ClusterWatches;
  /** How to make the shared secret cluster mode needs (said when it is missing). */
  readonly secretHowto = SECRET_HOWTO;
  /** Spans per operation and provider call (a no-op unless an OpenTelemetry SDK is registered). */
  readonly tracer: ReservoirTracer;
  private readonly directories = new Map<number, RedisSessionDirectory>();
  private readonly seal: Seal;

  constructor(
    options: ClusterOptions,
    private readonly logger: Logger,
  ) {
    this.instance =
      options.instance ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
    if (
      typeof options.secret !== 'string' ||
      Buffer.byteLength(options.secret, 'utf8') < MIN_SECRET_BYTES
    ) {
      throw new ConfigError(
        'server.secret',
        `cluster mode needs the secret every instance shares, at least ${MIN_SECRET_BYTES} bytes: ${SECRET_HOWTO}`,
        { limit: MIN_SECRET_BYTES },
      );
    }
    this.seal = new Seal(options.secret);
    this.link = connectRedis(
      options.url,
      options.keyPrefix ?? DEFAULT_KEY_PREFIX,
      logger,
      options.timeoutMs,
    );
    this.bus = new EventBus(this.link, logger, this.seal);
    this.watches = new ClusterWatches(
      this.link,
      this.bus,
      this.instance,
      logger,
      this.seal,
      options.leases,
    );
    this.tracer = createTracer(this.instance);
  }

  /** Resolves once this member hears the bus (so nothing published from now on is missed). */
  ready(): Promise<void> {
    return this.bus.subscribed();
  }

  /** Relays the hub's polled-source watches through the cluster. */
  attach(subscriptions: Subscriptions): void {
    subscriptions.relayThrough(this.watches);
  }

  /** Where rate-limit budgets are counted: Redis, with an in-memory insurance limiter that counts alone while Redis is degraded. */
  rateLimitStore(name: string): RateLimitStore {
    return {
      redis: this.link.client,
      keyPrefix: `rate:${name}:`,
      available: () => this.link.available(),
    };
  }

  /** The 2025-era session records, expiring after `idleMs` without a request. */
  sessions(idleMs: number): SessionDirectory {
    let directory = this.directories.get(idleMs);
    if (directory === undefined)
      this.directories.set(
        idleMs,
        (directory = new RedisSessionDirectory(
          this.link,
          this.bus,
          this.instance,
          idleMs,
          this.logger,
          this.seal,
        )),
      );
    return directory;
  }

  /** For /readyz: `degraded` with the reason while Redis is unreachable or hung (the instance serves on). */
  health(): RedisState {
    return this.link.state();
  }

  /** Redis, bus and lease health on /metrics. */
  instrument(metrics: Metrics): void {
    metrics.gauge(
      'reservoir_cluster_redis_up',
      'Whether this instance reaches Redis (1) or serves degraded without it (0).',
      () => (this.link.state().status === 'up' ? 1 : 0),
    );
    metrics.gauge(
      'reservoir_cluster_redis_outages',
      'Redis outages this instance has seen since it started.',
      () => this.link.outages,
    );
    metrics.gauge(
      'reservoir_cluster_bus_published',
      'Messages this instance published on the cluster bus.',
      () => this.bus.published,
    );
    metrics.gauge(
      'reservoir_cluster_bus_received',
      'Messages this instance heard on the cluster bus.',
      () => this.bus.received,
    );
    metrics.gauge(
      'reservoir_cluster_bus_dropped',
      'Cluster bus messages this instance dropped because they did not verify with the shared secret.',
      () => this.bus.drops.total,
    );
    metrics.gauge(
      'reservoir_cluster_leases_forged',
      'Source leases found in Redis that did not verify with the shared secret (taken over).',
      () => this.watches.leaseDrops.total,
    );
    metrics.gauge(
      'reservoir_cluster_session_records_refused',
      'Session records found in Redis that were not adopted (did not verify, or over their bounds).',
      () =>
        [...this.directories.values()].reduce((sum, directory) => sum + directory.refused.total, 0),
    );
    metrics.gauge(
      'reservoir_cluster_leases_held',
      'Sources this instance polls for the cluster (leases held).',
      () => this.watches.held().length,
    );
    metrics.gauge(
      'reservoir_cluster_leases_acquired',
      'Source leases this instance has taken over since it started.',
      () => this.watches.acquired,
    );
    metrics.gauge(
      'reservoir_cluster_fenced_out',
      'Changes not published because this instance had lost the lease (fencing).',
      () => this.watches.fencedOut,
    );
  }

  async close(): Promise<void> {
    await this.watches.close();
    await this.link.close();
  }
}

/** Joins the cluster on the Redis at `options.url`; the connection is made in the background. */
export function createCluster(options: ClusterOptions): Cluster {
  const { logger = silent } = options;
  return new Cluster(options, logger);
}

const noop = (): void => undefined;
const silent: Logger = { error: noop, warn: noop, info: noop, debug: noop };
