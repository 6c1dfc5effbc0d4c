/**
 * Sessions of the 2024-11-05 HTTP+SSE transport (for clients that do not speak Streamable HTTP:
 * TS SDK ≤ 1.9, `mcp-remote --transport sse-only`). `GET /sse` opens one: its own server instance
 * (the factory's 2025 era) and an SseTransport on the response; `POST /messages?sessionId=…`
 * hands it messages, answered on the stream. The stream is the session: when it closes, the
 * session ends.
 *
 * Bounded like the Streamable HTTP sessions (legacy-sessions.ts), with the same options: sessions
 * in all (`maxSessions`), per principal (`sessions.perPrincipal`; every SSE session streams, so
 * none is closed to make room: one more is refused), the rate of opening them per principal, one
 * of the principal's notification-stream slots each, an idle timeout (no POST for `idleMs`), and
 * a cap on the unsent bytes a client that does not read may leave behind. The JSON-RPC requests
 * taken are counted until answered, for the drain. The counts are apart from the Streamable HTTP
 * ones, and per instance (a session lives where its stream is, also in cluster mode).
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import {
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type AuthInfo,
  type JSONRPCMessage,
  type McpServerFactory,
} from '@modelcontextprotocol/server';
import { InFlight } from '../core/in-flight.js';
import { isReservoirError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { principalOfAuth } from '../mcp/guarded-call.js';
import { withSend } from '../mcp/transport-proxy.js';
import type { ConcurrencyLimiter } from '../policy/limits.js';
import { DEFAULT_SESSION_IDLE_MS, ownerOf } from './session-build.js';
import type { SessionLimitOptions } from './session-options.js';
import { quotaKey, SessionQuota } from './session-quota.js';
import { rpcError } from './session-replies.js';
import { SseTransport } from './sse-transport.js';

export const SSE_PATH = '/sse';
export const MESSAGES_PATH = '/messages';
/** Unsent bytes a client may leave on its stream before its session is closed: room for a few of the largest answers. */
export const DEFAULT_SSE_MAX_BUFFERED_BYTES = 64 * 1024 * 1024;
/** How often an idle stream gets a keep-alive comment, ms. */
const KEEP_ALIVE_MS = 25_000;

export interface SseSessionOptions {
  factory: McpServerFactory;
  logger: Logger;
  /** No POST for this long closes the session. @default 900000 */
  idleMs?: number | undefined;
  /** Concurrent SSE sessions. @default 1000 */
  maxSessions?: number | undefined;
  /** Per-principal cap and opening rate (the Streamable HTTP sessions' options). */
  limits?: SessionLimitOptions | undefined;
  /** Each stream holds one of its principal's notification-stream slots. */
  concurrency?: ConcurrencyLimiter | undefined;
  /** @default DEFAULT_SSE_MAX_BUFFERED_BYTES */
  maxBufferedBytes?: number | undefined;
}

interface SseSession {
  transport: SseTransport;
  owner: string;
  quota: string;
  lastSeen: number;
  close: () => Promise<void>;
}

export class SseSessions {
  private readonly sessions = new Map<string, SseSession>();
  private readonly held = new Map<string, number>();
  private readonly quota: SessionQuota;
  private readonly idleMs: number;
  private readonly maxSessions: number;
  private readonly sweeper: NodeJS.Timeout;
  private readonly keepAlive: NodeJS.Timeout;
  /** JSON-RPC requests taken (`session id` + request id) and not yet answered. */
  private readonly answering = new InFlight<string>();
  private opening = 0;

  constructor(private readonly options: SseSessionOptions) {
    this.quota = new SessionQuota(options.limits);
    this.idleMs = options.idleMs ?? DEFAULT_SESSION_IDLE_MS;
    this.maxSessions = options.maxSessions ?? 1000;
    this.sweeper = setInterval(() => this.sweep(), Math.min(60_000, this.idleMs)).unref();
    this.keepAlive = setInterval(() => {
      for (const session of this.sessions.values()) session.transport.keepAlive();
    }, KEEP_ALIVE_MS).unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Requests taken and not yet answered. */
  get unanswered(): number {
    return this.answering.size;
  }

  /** Resolves true once every request taken is answered, false when `signal` aborts first. */
  idle(signal?: AbortSignal): Promise<boolean> {
    return this.answering.idle(signal);
  }

  /** `GET /sse`: opens a session on `res`, or answers why not. */
  async open(
    res: ServerResponse,
    request: Request,
    authInfo: AuthInfo,
    address: string | undefined,
  ): Promise<void> {
    const key = quotaKey(authInfo, address);
    const refused = await this.quota.admit(key, null);
    if (refused !== undefined) return send(res, refused);
    const active = this.held.get(key) ?? 0;
    if (active >= this.quota.perPrincipal) {
      const limit = this.quota.perPrincipal;
      const error = {
        code: -32013,
        message: `Too many SSE sessions: at most ${limit} per principal, each with its stream open; close one, or retry later`,
        data: { code: 'limit_exceeded', kind: 'sessions_per_principal', limit, active },
      };
      return send(res, Response.json({ jsonrpc: '2.0', id: null, error }, { status: 429 }));
    }
    if (this.sessions.size + this.opening >= this.maxSessions)
      return send(
        res,
        rpcError(503, -32000, `Too many sessions (limit ${this.maxSessions}); try again later`),
      );
    const principal = principalOfAuth(authInfo);
    let release: (() => void) | undefined;
    if (this.options.concurrency !== undefined && principal !== undefined) {
      try {
        release = this.options.concurrency.acquire(principal, 'listen');
      } catch (error) {
        if (!isReservoirError(error)) throw error;
        const data = { code: error.code, ...error.data };
        const body = {
          jsonrpc: '2.0',
          id: null,
          error: { code: -32013, message: error.message, data },
        };
        return send(res, Response.json(body, { status: 429 }));
      }
    }
    this.opening += 1;
    this.held.set(key, (this.held.get(key) ?? 0) + 1);
    let opened = false;
    try {
      await this.build(res, request, authInfo, key, release);
      opened = true;
    } finally {
      this.opening -= 1;
      if (!opened) {
        release?.();
        this.unhold(key);
      }
    }
  }

  /**
   * `POST /messages?sessionId=…` with its body parsed: the messages go to the session, answered
   * 202 (their answers come on the stream); 404 when the session is unknown here or another's.
   */
  post(id: string | null, body: unknown, authInfo: AuthInfo, request: Request): Response {
    const session = id === null ? undefined : this.sessions.get(id);
    // Another principal presenting someone's session id is told the session does not exist.
    if (session === undefined || session.transport.isClosed || session.owner !== ownerOf(authInfo))
      return rpcError(404, -32001, 'Session not found; open a new one with GET /sse');
    const messages: unknown[] = Array.isArray(body) ? body : [body];
    if (messages.length === 0 || !messages.every(isMessage))
      return rpcError(400, -32600, 'Invalid Request: the body is not a JSON-RPC message');
    session.lastSeen = Date.now();
    for (const message of messages as JSONRPCMessage[]) {
      if (isJSONRPCRequest(message)) this.answering.add(requestKey(id!, message.id));
      else if (isJSONRPCNotification(message) && message.method === 'notifications/cancelled') {
        // A cancelled request is never answered: the drain does not wait for it.
        const cancelled = (message.params as { requestId?: unknown } | undefined)?.requestId;
        if (typeof cancelled === 'string' || typeof cancelled === 'number')
          this.answering.delete(requestKey(id!, cancelled));
      }
      session.transport.receive(message, authInfo, request);
    }
    return new Response('Accepted', { status: 202, headers: { 'content-type': 'text/plain' } });
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    clearInterval(this.keepAlive);
    const sessions = [...this.sessions.values()];
    await Promise.allSettled(sessions.map((s) => s.close()));
  }

  private async build(
    res: ServerResponse,
    request: Request,
    authInfo: AuthInfo,
    key: string,
    release: (() => void) | undefined,
  ): Promise<void> {
    const id = randomUUID();
    const transport = new SseTransport(
      id,
      res,
      `${MESSAGES_PATH}?sessionId=${id}`,
      this.options.maxBufferedBytes ?? DEFAULT_SSE_MAX_BUFFERED_BYTES,
      (buffered) =>
        this.options.logger.warn(
          { session: id, principal: key, buffered },
          'closing an SSE session: its client does not read its stream',
        ),
    );
    const server = await this.options.factory({ era: 'legacy', requestInfo: request, authInfo });
    let ended = false;
    const end = (): void => {
      if (ended) return;
      ended = true;
      this.sessions.delete(id);
      this.unhold(key);
      release?.();
      for (const pending of this.answering.values())
        if (pending.startsWith(`${id} `)) this.answering.delete(pending);
    };
    const session: SseSession = {
      transport,
      owner: ownerOf(authInfo),
      quota: key,
      lastSeen: Date.now(),
      close: async () => {
        end();
        await server
          .close()
          .catch((error: unknown) =>
            this.options.logger.debug({ err: error }, 'closing an SSE session'),
          );
      },
    };
    // Answers leave the in-flight count as they go out.
    const counted = withSend(transport, (message) => {
      if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message))
        if (message.id !== undefined) this.answering.delete(requestKey(id, message.id));
      return transport.send(message);
    });
    this.sessions.set(id, session);
    // The client went away (or the stream was closed here): the session ends with its stream.
    res.once('close', () => void session.close());
    await server.connect(counted);
  }

  private unhold(key: string): void {
    const left = (this.held.get(key) ?? 1) - 1;
    if (left > 0) this.held.set(key, left);
    else this.held.delete(key);
  }

  private sweep(): void {
    const cutoff = Date.now() - this.idleMs;
    for (const [id, session] of this.sessions) {
      if (session.lastSeen < cutoff) {
        this.options.logger.info({ session: id }, 'closing an idle SSE session');
        void session.close();
      }
    }
  }
}

function requestKey(session: string, id: string | number): string {
  return `${session} ${typeof id}:${id}`;
}

function isMessage(value: unknown): boolean {
  return (
    isJSONRPCRequest(value) ||
    isJSONRPCNotification(value) ||
    isJSONRPCResultResponse(value) ||
    isJSONRPCErrorResponse(value)
  );
}

/** Writes a refusal (a fetch Response with a small body) to the Node response. */
async function send(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => (headers[name] = value));
  res.writeHead(response.status, headers).end(Buffer.from(await response.arrayBuffer()));
}
