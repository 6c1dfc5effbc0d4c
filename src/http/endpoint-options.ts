/**
 * What the Streamable HTTP endpoint (app.ts) is given and gives back: the user's options, what the
 * server layer adds (metrics, audit, cluster, the direct read), and the endpoint handle.
 */
import type { Server as HttpServer } from 'node:http';
import type { Registry } from '../core/registry.js';
import type { DirectRead } from '../mcp/direct/read.js';
import type { AuditLog } from '../policy/audit.js';
import type { ConcurrencyLimiter, Metrics } from '../policy/index.js';
import type { RateLimitStore } from '../policy/rate-limit.js';
import type { Authenticator } from './auth.js';
import type { AuthFailureLimit } from './auth-failures.js';
import type { EventStoreLimits } from './event-store.js';
import type { SocketTimeouts } from './listener.js';
import type { SessionDirectory } from './session-directory.js';
import type { SessionLimitOptions } from './session-options.js';
import type { TlsOptions } from './tls.js';

export interface HttpOptions {
  /** Address to bind. @default '127.0.0.1' */
  host?: string | undefined;
  /** Port; 0 picks a free one. @default 7337 */
  port?: number | undefined;
  /**
   * Host names (no port) accepted in `Host` and `Origin`, beyond the localhost names. A server
   * bound to a non-loopback address must list the names clients use to reach it.
   */
  allowedHosts?: string[] | undefined;
  /** Largest request body, bytes. @default 4194304 (4 MiB) */
  maxBodyBytes?: number | undefined;
  /** 2025-era sessions idle this long are closed. @default 900000 */
  sessionIdleMs?: number | undefined;
  /** Concurrent 2025-era sessions. @default 1000 */
  maxSessions?: number | undefined;
  /**
   * 2025-era sessions per principal (anonymous callers: per address) and the rate of `initialize`.
   * Over the cap, the principal's least recently used session is closed.
   * @default { perPrincipal: 100, initialize: { perSecond: 5, burst: 50 } }
   */
  sessions?: SessionLimitOptions | undefined;
  /**
   * Serve HTTPS with these PEM files (paths). Both are read again when either changes on disk, so
   * a renewed certificate is served from the next connection on, without a restart. `ciphers` and
   * `minVersion` override the defaults (forward-secret AEAD suites, TLS 1.2 and up: tls-policy.ts).
   */
  tls?: TlsOptions | undefined;
  /**
   * What each 2025-era session keeps of its SSE events for `Last-Event-ID` resumption.
   * @default { maxEvents: 256, maxBytes: 1048576, maxAgeMs: 300000 }
   */
  sseEvents?: EventStoreLimits | undefined;
  /**
   * Who may connect (see createAuthenticator). Without one, requests are anonymous — allowed only
   * on a loopback address unless `anonymous` says otherwise.
   */
  auth?: Authenticator | undefined;
  /** Serve anonymous requests on a non-loopback address without an authenticator. @default false */
  anonymous?: boolean | undefined;
  /**
   * Refusals by authentication one client address may collect in a window before its requests are
   * answered 429 with Retry-After (http/auth-failures.ts). @default { failures: 30, windowMs: 60000 }
   */
  authFailureLimit?: AuthFailureLimit | undefined;
  /**
   * Socket timeouts against slow clients: the whole request head must arrive within `headersMs`,
   * the whole request within `requestMs`; a connection past either is closed within a second of it.
   * @default { headersMs: 15000, requestMs: 60000 }
   */
  timeouts?: SocketTimeouts | undefined;
  /**
   * Serve the explorer (a browser client of this endpoint) at `/ui/`, with `/` redirecting there.
   * `reservoir serve --http` turns it on unless `--no-ui`. @default false
   */
  ui?: boolean | undefined;
  /**
   * Serve the 2024-11-05 HTTP+SSE transport (`GET /sse`, `POST /messages?sessionId=…`) for
   * clients that do not speak Streamable HTTP, with the same auth, limits and access. @default true
   */
  sse?: boolean | undefined;
  /** Unsent bytes an SSE client may leave on its stream before its session closes. @default 67108864 (64 MiB) */
  sseMaxBufferedBytes?: number | undefined;
}

/** What the server layer hands the endpoint besides the user's options. */
export interface HttpInternals {
  /** Rendered at /metrics. */
  metrics?: Metrics | undefined;
  /** Where requests refused by authentication are recorded. */
  audit?: AuditLog | undefined;
  /** Asked at /readyz whether every source can answer. */
  registry?: Registry | undefined;
  /** Caps the notification streams (2026 `subscriptions/listen`, 2025 GET) each principal holds open (`maxListenStreamsPerPrincipal`). */
  concurrency?: ConcurrencyLimiter | undefined;
  /** Called each time the explorer's page (`/ui/` itself) is served: someone is about to search. */
  onPageOpened?: (() => void) | undefined;
  /** Cluster mode: shared session records and limits, and Redis health for /readyz. */
  cluster?: ClusterMembership | undefined;
  /** Answers plain `resources/read` requests without an SDK instance (mcp/direct/). */
  directRead?: DirectRead | undefined;
}

/** What the endpoint uses of a cluster membership (cluster/index.ts). */
export interface ClusterMembership {
  sessions(idleMs: number): SessionDirectory;
  rateLimitStore(name: string): RateLimitStore;
  health(): { status: 'up' } | { status: 'degraded'; reason: string };
}

export interface HttpEndpoint {
  /** The endpoint's URL, e.g. `http://127.0.0.1:7337/mcp` (`https://` when serving TLS). */
  url: string;
  server: HttpServer;
  /**
   * Drains for shutdown: stops accepting connections, answers new requests 503 (`shutting_down`,
   * `Connection: close`), and resolves once every request taken has been answered, or when `signal`
   * aborts first, with the number still unanswered. Notification streams (2025 GET, 2026 listen)
   * are not waited for: close() ends them. Call close() next.
   */
  drain(signal?: AbortSignal): Promise<number>;
  /** Stops accepting, ends sessions and streams (2026 listens with their final result), then closes connections. */
  close(): Promise<void>;
}
