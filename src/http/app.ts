/**
 * The Streamable HTTP endpoint at `/mcp`. It only translates: DNS-rebinding checks on `Host` and
 * `Origin`, a body cap, then each request goes to the 2025 session map or to the SDK's 2026-07-28
 * handler, decided by the SDK's own classifier. Both legs build their instances from one factory.
 */
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import {
  createMcpHandler,
  isJsonContentType,
  isLegacyRequest,
  localhostAllowedHostnames,
  type AuthInfo,
  type McpServerFactory,
} from '@modelcontextprotocol/server';
import { hostHeaderValidation, originValidation } from '@modelcontextprotocol/node';
import { getRequestListener } from '@hono/node-server';
import { ConfigError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import type { Registry } from '../core/registry.js';
import type { ConcurrencyLimiter, Metrics } from '../policy/index.js';
import { ANONYMOUS_PRINCIPAL, type Principal } from '../core/principal.js';
import type { Subscriptions } from '../core/subscriptions.js';
import type { Authenticator } from './auth.js';
import { createAuthFailureGuard, presentedCredential, type AuthFailureGuard, type AuthFailureLimit } from './auth-failures.js';
import type { AuditLog } from '../policy/audit.js';
import { PROTECTED_RESOURCE_METADATA_PATH } from './auth.js';
import { readJsonBody } from './body.js';
import { answerDirectRead } from './direct-read.js';
import { answerSessionRead } from './session-read.js';
import type { DirectRead } from '../mcp/direct-read.js';
import type { EventStoreLimits } from './event-store.js';
import { health, HEALTH_PATH, METRICS_PATH, READY_PATH, serveMetrics } from './health.js';
import { listenServer } from './listen.js';
import { ListenFanout } from './listen-fanout.js';
import { createListener, type SocketTimeouts } from './listener.js';
import { EndpointDrain } from './drain.js';
import type { SessionDirectory } from './session-directory.js';
import type { SessionLimitOptions } from './session-options.js';
import type { RateLimitStore } from '../policy/rate-limit.js';
import { DEFAULT_SESSION_IDLE_MS, LegacySessions } from './sessions.js';
import type { TlsOptions } from './tls.js';
import { uiAssets } from './ui.js';
import { serveResourceIcon } from './icons.js';
import { RESOURCE_ICONS_PATH } from '../mcp/resource-icons.js';

export const MCP_PATH = '/mcp';
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface HttpOptions {
  /** Address to bind. @default '127.0.0.1' */
  host?: string;
  /** Port; 0 picks a free one. @default 7337 */
  port?: number;
  /**
   * Host names (no port) accepted in `Host` and `Origin`, beyond the localhost names. A server
   * bound to a non-loopback address must list the names clients use to reach it.
   */
  allowedHosts?: string[];
  /** Largest request body, bytes. @default 4194304 (4 MiB) */
  maxBodyBytes?: number;
  /** 2025-era sessions idle this long are closed. @default 900000 */
  sessionIdleMs?: number;
  /** Concurrent 2025-era sessions. @default 1000 */
  maxSessions?: number;
  /**
   * 2025-era sessions per principal (anonymous callers: per address) and the rate of `initialize`.
   * Over the cap, the principal's least recently used session is closed.
   * @default { perPrincipal: 100, initialize: { perSecond: 5, burst: 50 } }
   */
  sessions?: SessionLimitOptions;
  /**
   * Serve HTTPS with these PEM files (paths). Both are read again when either changes on disk, so
   * a renewed certificate is served from the next connection on, without a restart. `ciphers` and
   * `minVersion` override the defaults (forward-secret AEAD suites, TLS 1.2 and up: tls-policy.ts).
   */
  tls?: TlsOptions;
  /**
   * What each 2025-era session keeps of its SSE events for `Last-Event-ID` resumption.
   * @default { maxEvents: 256, maxBytes: 1048576, maxAgeMs: 300000 }
   */
  sseEvents?: EventStoreLimits;
  /**
   * Who may connect (see createAuthenticator). Without one, requests are anonymous — allowed only
   * on a loopback address unless `anonymous` says otherwise.
   */
  auth?: Authenticator;
  /** Serve anonymous requests on a non-loopback address without an authenticator. @default false */
  anonymous?: boolean;
  /**
   * Refusals by authentication one client address may collect in a window before its requests are
   * answered 429 with Retry-After (http/auth-failures.ts). @default { failures: 30, windowMs: 60000 }
   */
  authFailureLimit?: AuthFailureLimit;
  /**
   * Socket timeouts against slow clients: the whole request head must arrive within `headersMs`,
   * the whole request within `requestMs`; a connection past either is closed within a second of it.
   * @default { headersMs: 15000, requestMs: 60000 }
   */
  timeouts?: SocketTimeouts;
  /**
   * Serve the explorer (a browser client of this endpoint) at `/ui/`, with `/` redirecting there.
   * `reservoir serve --http` turns it on unless `--no-ui`. @default false
   */
  ui?: boolean;
}

/** What the server layer hands the endpoint besides the user's options. */
export interface HttpInternals {
  /** Rendered at /metrics. */
  metrics?: Metrics;
  /** Where requests refused by authentication are recorded. */
  audit?: AuditLog;
  /** Asked at /readyz whether every source can answer. */
  registry?: Registry;
  /** Caps the notification streams (2026 `subscriptions/listen`, 2025 GET) each principal holds open (`maxListenStreamsPerPrincipal`). */
  concurrency?: ConcurrencyLimiter;
  /** Called each time the explorer's page (`/ui/` itself) is served: someone is about to search. */
  onPageOpened?: () => void;
  /** Cluster mode: shared session records and limits, and Redis health for /readyz. */
  cluster?: ClusterMembership;
  /** Answers plain 2026-07-28 `resources/read` requests without an SDK instance (http/direct-read.ts). */
  directRead?: DirectRead;
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

export async function listenHttp(
  factory: McpServerFactory,
  subscriptions: Subscriptions,
  logger: Logger,
  options: HttpOptions & HttpInternals = {},
): Promise<HttpEndpoint> {
  const host = options.host ?? '127.0.0.1';
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const auth = options.auth;
  const guard = auth === undefined ? undefined : createAuthFailureGuard({ audit: options.audit, metrics: options.metrics, limit: options.authFailureLimit });
  if (auth === undefined && options.anonymous !== true && !isLoopback(host)) {
    throw new ConfigError('http', `serving ${host} to the network needs authentication (server.http.auth: tokens or oauth), or anonymous access turned on explicitly: --anonymous, or server.http.anonymous: true in the config`);
  }
  const allowed = allowedHostnames(host, options.allowedHosts ?? []);
  if (isWildcard(host) && (options.allowedHosts ?? []).length === 0) {
    logger.warn(
      { host, fix: '--allowed-host NAME (server.http.allowedHosts)' },
      `listening on ${host} without an allowed host: requests from other machines name this host in their Host header and are answered 403; add --allowed-host NAME (or server.http.allowedHosts) for each name clients use, e.g. --allowed-host ${hostname()}`,
    );
  }
  const checkHost = hostHeaderValidation(allowed);
  const checkOrigin = originValidation(allowed);
  const onerror = (error: Error): void => logger.debug({ err: error }, 'http request rejected');

  const modern = createMcpHandler(factory, { legacy: 'reject', maxRequestBodySize: maxBodyBytes, onerror });
  const sessions = new LegacySessions({
    factory,
    logger,
    maxBodyBytes,
    ...(options.sessionIdleMs === undefined ? {} : { idleMs: options.sessionIdleMs }),
    ...(options.maxSessions === undefined ? {} : { maxSessions: options.maxSessions }),
    ...(options.sessions === undefined ? {} : { limits: options.sessions }),
    ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
    ...(options.sseEvents === undefined ? {} : { events: options.sseEvents }),
    ...(options.cluster === undefined
      ? {}
      : { directory: options.cluster.sessions(options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS), rateLimitStore: options.cluster.rateLimitStore('initialize') }),
  });
  // 2026-07-28 listen streams are delivered through the handler's bus, one publish per change.
  const fanout = new ListenFanout();
  const bus = subscriptions.channel(
    {
      // Resource changes are written to the listen streams directly (listen-fanout.ts), not through the SDK's router.
      updated: (uri) => fanout.updated(uri),
      listChanged: () => modern.notify.resourcesChanged(),
      promptsChanged: () => modern.notify.promptsChanged(),
      toolsChanged: () => modern.notify.toolsChanged(),
    },
    Number.POSITIVE_INFINITY,
  );
  const serveListen = listenServer({ modern, bus, fanout, maxUris: subscriptions.maxPerChannel, logger, ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }) });
  const route = async (request: Request, parsedBody: unknown, authInfo: AuthInfo, address: string | undefined, out: ServerResponse): Promise<Response> => {
    if (await isLegacyRequest(request, parsedBody, { maxRequestBodySize: maxBodyBytes })) return sessions.handle(request, parsedBody, authInfo, address);
    if (request.method === 'POST' && request.headers.get('mcp-method') === 'subscriptions/listen') return serveListen(request, parsedBody, authInfo, out);
    return modern.fetch(request, parsedBody === undefined ? { authInfo } : { parsedBody, authInfo });
  };
  // Hono's Node adapter (the one the SDK's own Node transport uses) builds a lazy Request and writes
  // the Response with few syscalls; it aborts the request's signal when the client goes away. The
  // POST body was already read and parsed once (readJsonBody) and is handed over beside the request.
  const bodies = new WeakMap<IncomingMessage, unknown>();
  const callers = new WeakMap<IncomingMessage, AuthInfo>();
  const mcp = getRequestListener(
    (request, env) => {
      const incoming = env.incoming as IncomingMessage;
      return route(request, bodies.get(incoming), callers.get(incoming) ?? ANONYMOUS_AUTH, incoming.socket.remoteAddress, env.outgoing as ServerResponse);
    },
    {
      overrideGlobalObjects: false,
      errorHandler: (error) => {
        logger.error({ err: error }, 'http handler failed');
        return new Response(null, { status: 500 });
      },
    },
  );

  const drainer = new EndpointDrain(logger);

  const ui = options.ui === true ? uiAssets(undefined, options.onPageOpened) : undefined;
  const wellKnown = auth === undefined ? undefined : getRequestListener((request) => auth.wellKnown(request) ?? new Response(null, { status: 404 }), { overrideGlobalObjects: false });

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (wellKnown !== undefined && path.startsWith(PROTECTED_RESOURCE_METADATA_PATH)) {
      // Browsers fetch the metadata cross-origin: the Host check applies, the Origin check does not.
      if (checkHost(req, res)) void wellKnown(req, res);
      return;
    }
    if (path === READY_PATH && drainer.draining) {
      if (checkHost(req, res)) drainer.refuseReadiness(res);
      return;
    }
    if (path === HEALTH_PATH || path === READY_PATH) {
      // Liveness and readiness are for orchestrators: no credentials, nothing about the data. An
      // authenticated caller also gets the details (roots as mounted, error messages).
      if (checkHost(req, res)) void authenticated(req, auth).then((detailed) => health(path, res, options.registry, options.cluster, detailed));
      return;
    }
    if (path === METRICS_PATH && options.metrics !== undefined) {
      const metrics = options.metrics;
      if (checkHost(req, res)) {
        void (async () => {
          if (auth === undefined || (await authenticateOrRefuse(req, res, auth, guard!)) !== undefined) serveMetrics(res, metrics);
        })();
      }
      return;
    }
    // The pictures resources' icons name: no data, no credentials; the Host check applies.
    if (path.startsWith(RESOURCE_ICONS_PATH)) {
      if (checkHost(req, res)) serveResourceIcon(path, req, res);
      return;
    }
    // The explorer's files hold no data (it reads everything through /mcp with the user's token).
    if (ui !== undefined && path !== MCP_PATH) {
      if (!checkHost(req, res)) return;
      if (ui.handle(path, req, res)) return;
    }
    if (path !== MCP_PATH) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: `Not found; the MCP endpoint is ${MCP_PATH}` }));
      return;
    }
    if (!checkHost(req, res) || !checkOrigin(req, res)) return;
    // A request on a connection kept alive from before the drain: refused, and the connection closed.
    if (drainer.draining) return drainer.refuse(res);
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBodyBytes) {
      res.writeHead(413, { 'content-type': 'application/json', connection: 'close' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: `Request body too large (limit ${maxBodyBytes} bytes)` } }));
      return;
    }
    // Every request but a notification stream is waited for by a drain, until its response ends.
    drainer.track(req, res);
    const serve = async (): Promise<void> => {
      // Who is asking is settled before any body is read: an unauthenticated client costs nothing.
      if (auth !== undefined) {
        const authInfo = await authenticateOrRefuse(req, res, auth, guard!);
        if (authInfo === undefined) return;
        callers.set(req, authInfo);
      }
      // Anything but a JSON POST goes to the SDK as it is (it answers a wrong content type with 415).
      if (req.method !== 'POST' || !isJsonContentType(req.headers['content-type'] ?? null)) return mcp(req, res);
      const body = await readJsonBody(req, maxBodyBytes);
      if (!body.ok) {
        res.writeHead(body.status, { 'content-type': 'application/json', ...(body.status === 413 ? { connection: 'close' } : {}) });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: body.code, message: body.message } }));
        return;
      }
      if (options.directRead !== undefined) {
        const authInfo = callers.get(req) ?? ANONYMOUS_AUTH;
        const direct = req.headers['mcp-session-id'] === undefined ? answerDirectRead(req, res, body.value, authInfo, options.directRead) : answerSessionRead(req, res, body.value, authInfo, sessions, options.directRead);
        if (await direct) return;
      }
      bodies.set(req, body.value);
      return mcp(req, res);
    };
    serve().catch((error: unknown) => {
      logger.error({ err: error }, 'http handler failed');
      if (!res.headersSent) res.writeHead(500).end();
      else res.end();
    });
  };

  let listener: ReturnType<typeof createListener>;
  try {
    listener = createListener(handle, {
      logger,
      ...(options.timeouts === undefined ? {} : { timeouts: options.timeouts }),
      ...(options.tls === undefined ? {} : { tls: options.tls }),
    });
  } catch (error) {
    // Unusable timeouts or TLS files: nothing was served; leave nothing running.
    bus.close();
    await Promise.allSettled([sessions.close(), modern.close()]);
    throw error;
  }
  const { server, scheme } = listener;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 7337, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `${scheme}://${shownHost}:${address.port}${MCP_PATH}`;

  drainer.attach(server);
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      const stopping = drainer.stopAccepting();
      await Promise.allSettled([sessions.close(), modern.close()]);
      // Connections that carried the sessions just closed are idle now: close them too.
      server.closeIdleConnections();
      bus.close();
      const grace = setTimeout(() => server.closeAllConnections(), 2_000).unref();
      await stopping;
      clearTimeout(grace);
    })());

  return { url, server, drain: (signal) => drainer.drain(signal), close };
}

/**
 * Authenticates from the request's headers alone (no body is read). Resolves with the auth info to
 * pass on, or undefined after writing the refusal (401, 403, 400, 503) the authenticator chose — or
 * a 429 when the client's address has been refused too often (the guard records every refusal).
 */
async function authenticateOrRefuse(req: IncomingMessage, res: ServerResponse, auth: Authenticator, guard: AuthFailureGuard): Promise<AuthInfo | undefined> {
  // Duplicate Authorization headers stay visible (joined), so the authenticator can refuse them.
  const authorization = req.headersDistinct['authorization']?.join(', ');
  const address = req.socket.remoteAddress ?? 'unknown';
  const presented = presentedCredential(authorization);
  const wait = guard.retryAfter(address);
  if (wait !== undefined) {
    guard.refused({ address, status: 429, reason: 'too_many_failures', presented });
    res.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(wait), 'cache-control': 'no-store' });
    res.end(JSON.stringify({ error: 'too_many_failures', error_description: `Too many failed authentications from this address; retry after ${wait} s` }));
    return undefined;
  }
  const outcome = await auth.authenticate(new Request(new URL(req.url ?? '/', 'http://local'), authorization === undefined ? {} : { headers: { authorization } }));
  if (!(outcome instanceof Response)) return outcome.authInfo ?? anonymousAuth(outcome.principal);
  const headers: Record<string, string> = {};
  outcome.headers.forEach((value, name) => (headers[name] = value));
  const body = Buffer.from(await outcome.arrayBuffer());
  if (outcome.status === 400 || outcome.status === 401 || outcome.status === 403) {
    // The challenge's error code; a bare challenge (no code) means no bearer credentials came.
    const code = /\berror="([^"]*)"/.exec(headers['www-authenticate'] ?? '')?.[1];
    const reason = code ?? (outcome.status === 401 ? 'missing_token' : 'refused');
    guard.refused({ address, status: outcome.status, reason, presented });
  }
  res.writeHead(outcome.status, headers).end(body);
  return undefined;
}

/** Whether `req` carries credentials the authenticator accepts (never refuses: /readyz answers either way). */
async function authenticated(req: IncomingMessage, auth: Authenticator | undefined): Promise<boolean> {
  const authorization = req.headersDistinct['authorization']?.join(', ');
  if (auth === undefined || authorization === undefined) return false;
  try {
    const outcome = await auth.authenticate(new Request(new URL(req.url ?? '/', 'http://local'), { headers: { authorization } }));
    return !(outcome instanceof Response) && outcome.principal.kind !== 'anonymous';
  } catch {
    return false;
  }
}

/** The auth info of a request made without credentials, where that is allowed. */
const ANONYMOUS_AUTH: AuthInfo = anonymousAuth(ANONYMOUS_PRINCIPAL);

function anonymousAuth(principal: Principal): AuthInfo {
  return { token: '', clientId: principal.id, scopes: [...principal.scopes], extra: { principal } };
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

function isWildcard(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '[::]';
}

/** Localhost names always; the bound address when it is a specific one; plus what the user lists. */
function allowedHostnames(host: string, extra: string[]): string[] {
  const names = new Set(localhostAllowedHostnames());
  if (!isWildcard(host)) names.add(host.includes(':') && !host.startsWith('[') ? `[${host}]` : host);
  for (const name of extra) names.add(name.toLowerCase());
  return [...names];
}
