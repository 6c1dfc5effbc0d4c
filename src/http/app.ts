/**
 * The Streamable HTTP endpoint at `/mcp`. It only translates: DNS-rebinding checks on `Host` and
 * `Origin`, a body cap, then each request goes to the 2025 session map or to the SDK's 2026-07-28
 * handler, decided by the SDK's own classifier. Both legs build their instances from one factory.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import {
  createMcpHandler,
  isJsonContentType,
  isLegacyRequest,
  type AuthInfo,
  type McpServerFactory,
} from '@modelcontextprotocol/server';
import { hostHeaderValidation, originValidation } from '@modelcontextprotocol/node';
import { getRequestListener } from '@hono/node-server';
import { ConfigError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import type { Subscriptions } from '../core/subscriptions.js';
import type { HttpDirectEntry } from '../mcp/direct/http-answer.js';
import { ListenFanout } from '../mcp/direct/listen-fanout.js';
import { ReadsInFlight } from '../mcp/direct/reads-in-flight.js';
import { answerSessionRead } from '../mcp/direct/session.js';
import { answerDirectRead } from '../mcp/direct/stateless.js';
import { RESOURCE_ICONS_PATH } from '../mcp/resource-icons.js';
import { acceptance } from './accept.js';
import { createAuthFailureGuard } from './auth-failures.js';
import { PROTECTED_RESOURCE_METADATA_PATH } from './auth.js';
import { readJsonBody } from './body.js';
import { EndpointDrain } from './drain.js';
import type { HttpEndpoint, HttpInternals, HttpOptions } from './endpoint-options.js';
import { health, HEALTH_PATH, METRICS_PATH, READY_PATH, serveMetrics } from './health.js';
import { allowedHostnames, isLoopback, isWildcard } from './hosts.js';
import { serveResourceIcon } from './icon-route.js';
import { LegacySessions } from './legacy-sessions.js';
import { DEFAULT_SESSION_IDLE_MS } from './session-build.js';
import { listenServer } from './listen-streams.js';
import { isSsePath, serveSse } from './sse-route.js';
import { SseSessions } from './sse-sessions.js';
import { createListener } from './listener.js';
import { ANONYMOUS_AUTH, authenticated, authenticateOrRefuse } from './request-auth.js';
import { uiAssets } from './ui.js';
import { definedProps } from '../core/defined.js';

export const MCP_PATH = '/mcp';
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;

export type {
  ClusterMembership,
  HttpEndpoint,
  HttpInternals,
  HttpOptions,
} from './endpoint-options.js';

export async function listenHttp(
  factory: McpServerFactory,
  subscriptions: Subscriptions,
  logger: Logger,
  options: HttpOptions & HttpInternals = {},
): Promise<HttpEndpoint> {
  const host = options.host ?? '127.0.0.1';
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const auth = options.auth;
  const guard =
    auth === undefined
      ? undefined
      : createAuthFailureGuard({
          audit: options.audit,
          metrics: options.metrics,
          limit: options.authFailureLimit,
        });
  if (auth === undefined && options.anonymous !== true && !isLoopback(host)) {
    throw new ConfigError(
      'http',
      `serving ${host} to the network needs authentication (server.http.auth: tokens or oauth), or anonymous access turned on explicitly: --anonymous, or server.http.anonymous: true in the config`,
    );
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

  const modern = createMcpHandler(factory, {
    legacy: 'reject',
    maxRequestBodySize: maxBodyBytes,
    onerror,
  });
  const sessions = new LegacySessions({
    factory,
    logger,
    maxBodyBytes,
    idleMs: options.sessionIdleMs,
    maxSessions: options.maxSessions,
    limits: options.sessions,
    concurrency: options.concurrency,
    events: options.sseEvents,
    // In cluster mode, sessions and the initialize rate limit are shared through Redis.
    ...definedProps({
      directory: options.cluster?.sessions(options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS),
      rateLimitStore: options.cluster?.rateLimitStore('initialize'),
    }),
  });
  // 2026-07-28 listen streams are delivered through the handler's bus, one publish per change.
  const fanout = new ListenFanout();
  const bus = subscriptions.channel(
    {
      // Resource changes are written to the listen streams directly (mcp/direct/listen-fanout.ts), not through the SDK's router.
      updated: (uri) => fanout.updated(uri),
      listChanged: () => modern.notify.resourcesChanged(),
      promptsChanged: () => modern.notify.promptsChanged(),
      toolsChanged: () => modern.notify.toolsChanged(),
    },
    Number.POSITIVE_INFINITY,
  );
  const serveListen = listenServer({
    modern,
    bus,
    fanout,
    maxUris: subscriptions.maxPerChannel,
    logger,
    concurrency: options.concurrency,
  });
  const route = async (
    request: Request,
    parsedBody: unknown,
    authInfo: AuthInfo,
    address: string | undefined,
    out: ServerResponse,
  ): Promise<Response> => {
    if (await isLegacyRequest(request, parsedBody, { maxRequestBodySize: maxBodyBytes }))
      return sessions.handle(request, parsedBody, authInfo, address);
    if (request.method === 'POST' && request.headers.get('mcp-method') === 'subscriptions/listen')
      return serveListen(request, parsedBody, authInfo, out);
    return modern.fetch(
      request,
      parsedBody === undefined ? { authInfo } : { parsedBody, authInfo },
    );
  };
  // Hono's Node adapter (the one the SDK's own Node transport uses) builds a lazy Request and writes
  // the Response with few syscalls; it aborts the request's signal when the client goes away. The
  // POST body was already read and parsed once (readJsonBody) and is handed over beside the request.
  const bodies = new WeakMap<IncomingMessage, unknown>();
  const callers = new WeakMap<IncomingMessage, AuthInfo>();
  const mcp = getRequestListener(
    (request, env) => {
      const incoming = env.incoming as IncomingMessage;
      return route(
        request,
        bodies.get(incoming),
        callers.get(incoming) ?? ANONYMOUS_AUTH,
        incoming.socket.remoteAddress,
        env.outgoing as ServerResponse,
      );
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
  // The 2024-11-05 HTTP+SSE transport, for clients that do not speak Streamable HTTP.
  const sse =
    options.sse === false
      ? undefined
      : {
          sessions: new SseSessions({
            factory,
            logger,
            idleMs: options.sessionIdleMs,
            maxSessions: options.maxSessions,
            limits: options.sessions,
            concurrency: options.concurrency,
            maxBufferedBytes: options.sseMaxBufferedBytes,
          }),
          auth,
          guard,
          drainer,
          maxBodyBytes,
          logger,
        };
  // Plain reads answered without the SDK (mcp/direct/); the 2026-07-28 ones tracked by response.
  const direct: HttpDirectEntry | undefined =
    options.directRead === undefined
      ? undefined
      : {
          read: options.directRead,
          acceptsJson: (header) => acceptance(header).json,
          stateless: new ReadsInFlight<ServerResponse>(),
        };

  const ui = options.ui === true ? uiAssets(undefined, options.onPageOpened) : undefined;
  const wellKnown =
    auth === undefined
      ? undefined
      : getRequestListener(
          (request) => auth.wellKnown(request) ?? new Response(null, { status: 404 }),
          { overrideGlobalObjects: false },
        );

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
      if (checkHost(req, res))
        void authenticated(req, auth).then((detailed) =>
          health(path, res, options.registry, options.cluster, detailed),
        );
      return;
    }
    if (path === METRICS_PATH && options.metrics !== undefined) {
      const metrics = options.metrics;
      if (checkHost(req, res)) {
        void (async () => {
          if (
            auth === undefined ||
            (await authenticateOrRefuse(req, res, auth, guard!)) !== undefined
          )
            serveMetrics(res, metrics);
        })();
      }
      return;
    }
    // The pictures resources' icons name: no data, no credentials; the Host check applies.
    if (path.startsWith(RESOURCE_ICONS_PATH)) {
      if (checkHost(req, res)) serveResourceIcon(path, req, res);
      return;
    }
    if (sse !== undefined && isSsePath(path)) {
      if (checkHost(req, res) && checkOrigin(req, res)) serveSse(path, req, res, sse);
      return;
    }
    // The explorer's files hold no data (it reads everything through /mcp with the user's token).
    if (ui !== undefined && path !== MCP_PATH) {
      if (!checkHost(req, res)) return;
      if (ui.handle(path, req, res)) return;
    }
    if (path !== MCP_PATH) {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: `Not found; the MCP endpoint is ${MCP_PATH}` }));
      return;
    }
    if (!checkHost(req, res) || !checkOrigin(req, res)) return;
    // A request on a connection kept alive from before the drain: refused, and the connection closed.
    if (drainer.draining) return drainer.refuse(res);
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBodyBytes) {
      res.writeHead(413, { 'content-type': 'application/json', connection: 'close' });
      res.end(
        JSON.stringify({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32600, message: `Request body too large (limit ${maxBodyBytes} bytes)` },
        }),
      );
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
      if (req.method !== 'POST' || !isJsonContentType(req.headers['content-type'] ?? null))
        return mcp(req, res);
      const body = await readJsonBody(req, maxBodyBytes);
      if (!body.ok) {
        res.writeHead(body.status, {
          'content-type': 'application/json',
          ...definedProps({ connection: body.status === 413 ? 'close' : undefined }),
        });
        res.end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: null,
            error: { code: body.code, message: body.message },
          }),
        );
        return;
      }
      if (direct !== undefined) {
        const authInfo = callers.get(req) ?? ANONYMOUS_AUTH;
        const answered =
          req.headers['mcp-session-id'] === undefined
            ? answerDirectRead(req, res, body.value, authInfo, direct)
            : answerSessionRead(req, res, body.value, authInfo, sessions, direct);
        if (await answered) return;
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
      timeouts: options.timeouts,
      tls: options.tls,
    });
  } catch (error) {
    // Unusable timeouts or TLS files: nothing was served; leave nothing running.
    bus.close();
    await Promise.allSettled([sessions.close(), modern.close(), sse?.sessions.close()]);
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
      direct?.stateless.close();
      await Promise.allSettled([sessions.close(), modern.close(), sse?.sessions.close()]);
      // Connections that carried the sessions just closed are idle now: close them too.
      server.closeIdleConnections();
      bus.close();
      const grace = setTimeout(() => server.closeAllConnections(), 2_000).unref();
      await stopping;
      clearTimeout(grace);
    })());

  // A drain waits for the requests of both transports: the SSE ones are answered on their streams.
  const drain = async (signal?: AbortSignal): Promise<number> => {
    const [unanswered] = await Promise.all([drainer.drain(signal), sse?.sessions.idle(signal)]);
    return unanswered + (sse?.sessions.unanswered ?? 0);
  };
  return { url, server, drain, close };
}
