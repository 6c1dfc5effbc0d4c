/**
 * Serving: the Reservoir server and how it is created, logging, HTTP serving options (sockets,
 * sessions, TLS), and cluster mode. Re-exported by src/index.ts.
 */

/**
 * Creates a server from providers; serve it with `serveStdio()` and/or `listen()`.
 *
 * @example
 * ```ts
 * const reservoir = createReservoir({ providers: [filesProvider({ root: '/srv/docs' })], pageSize: 500 });
 * reservoir.serveStdio();
 * ```
 */
export { createReservoir, Reservoir } from '../server/index.js';
export type { ReservoirOptions, StdioHandle } from '../server/index.js';

/**
 * The idle memory reducer's setting (`ReservoirOptions.memoryReducer`): how long the server must be
 * quiet after a burst before it gives memory back. Off unless given (`reservoir serve` turns it on).
 *
 * @example
 * ```ts
 * createReservoir({ providers, memoryReducer: { quietMs: 10_000 } });
 * createReservoir({ providers, memoryReducer: true }); // the default quiet period
 * ```
 */
export type { IdleMemoryOptions } from '../server/idle-memory.js';

/**
 * Logging: pass any logger with error/warn/info/debug (pino fits), or use `createLogger`.
 *
 * @example
 * ```ts
 * createReservoir({ providers, logger: createLogger('debug') });
 * ```
 */
export { createLogger } from '../server/logger.js';
export { silentLogger } from '../core/log.js';
export type { Logger, LogFn } from '../core/log.js';
export type { LogLevel } from '../server/logger.js';

/**
 * HTTP serving options and the running endpoint.
 *
 * @example
 * ```ts
 * const { url, close } = await reservoir.listen({ host: '127.0.0.1', port: 0 });
 * ```
 */
export type { HttpOptions, HttpEndpoint } from '../http/app.js';

/**
 * Cluster mode: several instances behind a load balancer on one Redis (docs/cluster.md). The Redis
 * client and the OpenTelemetry API are loaded by `createCluster` / `createTracer`, not by importing.
 *
 * @example
 * const secret = process.env.RESERVOIR_SECRET!; // the same on every instance, at least 32 bytes
 * const cluster = createCluster({ url: 'redis://10.0.0.5:6379', keyPrefix: 'docs:', secret });
 * const reservoir = createReservoir({ cluster, secret, providers });
 */
export { createCluster, createTracer, Cluster } from '../cluster/index.js';
export type {
  ClusterOptions,
  LeaseOptions,
  RedisOptions,
  ReservoirTracer,
} from '../cluster/index.js';
export type { SocketTimeouts } from '../http/listener.js';
export type { SessionLimitOptions } from '../http/session-options.js';
export type { TlsFiles, TlsOptions } from '../http/tls.js';
export type { TlsPolicy, TlsVersion } from '../http/tls-policy.js';
