/**
 * The listening socket under the endpoint: plain HTTP, or HTTPS with certificate files that are
 * read again when they change, and the timeouts that cut off slow clients (slowloris) on time.
 */
import { createServer as createHttpServer, type RequestListener, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { ConfigError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { CertificateFiles, type TlsOptions } from './tls.js';
import { tlsServerSettings } from './tls-policy.js';

/** The whole request head must arrive within this, ms. */
export const DEFAULT_HEADERS_TIMEOUT_MS = 15_000;
/** The whole request (head and body) must arrive within this, ms. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
/** Idle keep-alive connections are closed after this, ms. */
export const KEEP_ALIVE_TIMEOUT_MS = 10_000;

export interface SocketTimeouts {
  /** @default 15000 */
  headersMs?: number;
  /** @default 60000 */
  requestMs?: number;
}

/** What Node is told: its timeouts, and how often it looks for connections past them. */
export interface TimeoutSettings {
  headersTimeout: number;
  requestTimeout: number;
  connectionsCheckingInterval: number;
}

/**
 * Node looks for connections past their head or request timeout only every
 * `connectionsCheckingInterval` (30 s by default), so a 15 s head timeout used to fire anywhere
 * between 15 and 45 s. The interval is a tenth of the shorter timeout, within 50 ms … 1 s: a slow
 * client is cut off within a second of its timeout, and the check costs one pass over the open
 * connections a second at most.
 */
export function timeoutSettings(timeouts: SocketTimeouts = {}): TimeoutSettings {
  const headersTimeout = timeouts.headersMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
  const requestTimeout = timeouts.requestMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  for (const [field, value] of [
    ['headersMs', headersTimeout],
    ['requestMs', requestTimeout],
  ] as const) {
    if (!(Number.isSafeInteger(value) && value > 0))
      throw new ConfigError(
        `http.timeouts.${field}`,
        `expected a whole number of milliseconds of at least 1, got ${value}`,
      );
  }
  if (headersTimeout > requestTimeout) {
    throw new ConfigError(
      'http.timeouts.headersMs',
      `the head timeout (${headersTimeout} ms) cannot be longer than the request timeout (${requestTimeout} ms)`,
    );
  }
  const connectionsCheckingInterval = Math.min(
    1_000,
    Math.max(50, Math.floor(Math.min(headersTimeout, requestTimeout) / 10)),
  );
  return { headersTimeout, requestTimeout, connectionsCheckingInterval };
}

export interface Listener {
  server: Server;
  /** `https` when serving TLS. */
  scheme: 'http' | 'https';
}

/** Builds the Node server (not yet listening); throws ConfigError for unusable timeouts or TLS files. */
export function createListener(
  handle: RequestListener,
  options: { timeouts?: SocketTimeouts | undefined; tls?: TlsOptions | undefined; logger: Logger },
): Listener {
  const settings = timeoutSettings(options.timeouts);
  const common = { ...settings, keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS };
  if (options.tls === undefined)
    return { server: applyTimeouts(createHttpServer(common, handle), settings), scheme: 'http' };
  const policy = tlsServerSettings(options.tls);
  const files = new CertificateFiles(options.tls, options.logger);
  // The TLS handshake comes before any of the head, and by default may take 120 s: a client that
  // dribbles its handshake is held to the head timeout too.
  const server = createHttpsServer(
    { ...common, handshakeTimeout: settings.headersTimeout, ...policy, ...files.initial() },
    handle,
  );
  // Before the TLS handshake of each new connection (this listener runs ahead of the one that starts
  // it): certificate files that changed on disk are read again and used from this connection on.
  // setSecureContext builds a new context from what it is given alone, so the policy goes again.
  server.prependListener('connection', () => {
    const pair = files.changed();
    if (pair !== undefined) server.setSecureContext({ ...policy, ...pair });
  });
  return { server: applyTimeouts(server, settings), scheme: 'https' };
}

function applyTimeouts<S extends Server>(server: S, settings: TimeoutSettings): S {
  server.headersTimeout = settings.headersTimeout;
  server.requestTimeout = settings.requestTimeout;
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  return server;
}
