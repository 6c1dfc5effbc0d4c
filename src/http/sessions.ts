/**
 * 2025-era Streamable HTTP sessions. The SDK's combined handler serves 2025 traffic statelessly
 * only (no GET stream, no subscriptions, no server-to-client requests), so 2025 requests are routed
 * here: `initialize` opens a session with its own transport and server instance, later requests
 * carry `Mcp-Session-Id`, DELETE ends it. Idle sessions are closed, and their number is bounded.
 */
import { randomUUID } from 'node:crypto';
import {
  WebStandardStreamableHTTPServerTransport,
  isInitializeRequest,
  isJsonContentType,
  type AuthInfo,
  type McpServerFactory,
} from '@modelcontextprotocol/server';
import type { Logger } from '../core/log.js';
import { principalOfAuth } from '../mcp/guard.js';
import { BATCH_REVISION } from '../mcp/stdio-batch.js';
import { negotiate } from './accept.js';
import { SessionEventStore, type EventStoreLimits } from './event-store.js';
import { PlainAnswers } from './plain-answers.js';

/** The `retry:` a priming event advises: how long a client waits before resuming a dropped stream. */
const RETRY_MS = 1_000;

export interface SessionOptions {
  factory: McpServerFactory;
  logger: Logger;
  /** Largest POST body, bytes. */
  maxBodyBytes: number;
  /** Sessions with no request for this long are closed. @default 900000 (15 min) */
  idleMs?: number;
  /** Concurrent sessions; `initialize` beyond it is answered 503. @default 1000 */
  maxSessions?: number;
  /** Bounds of each session's SSE event store (for `Last-Event-ID` resumption). */
  events?: EventStoreLimits;
}

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  /** Who opened it (`kind:id`): a session id is no credential for anyone else. */
  owner: string;
  events: SessionEventStore;
  answers: PlainAnswers;
  /** The protocol revision `initialize` negotiated. */
  revision: () => string | undefined;
  close: () => Promise<void>;
  lastSeen: number;
}

export class LegacySessions {
  private readonly sessions = new Map<string, Session>();
  private readonly idleMs: number;
  private readonly maxSessions: number;
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly options: SessionOptions) {
    this.idleMs = options.idleMs ?? 15 * 60_000;
    this.maxSessions = options.maxSessions ?? 1000;
    this.sweeper = setInterval(() => this.sweep(), Math.min(60_000, this.idleMs)).unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Serves one 2025-era request; `body` is the POST body already parsed (undefined for GET/DELETE). */
  async handle(original: Request, body: unknown, authInfo: AuthInfo): Promise<Response> {
    const negotiated = negotiate(original);
    if (negotiated instanceof Response) return negotiated;
    const { request, jsonOnly } = negotiated;
    const id = request.headers.get('mcp-session-id');
    if (id !== null) {
      const session = this.sessions.get(id);
      // Another principal presenting someone's session id is told the session does not exist.
      if (session === undefined || session.owner !== ownerOf(authInfo)) return rpcError(404, -32001, 'Session not found');
      session.lastSeen = Date.now();
      const lastEventId = request.method === 'GET' ? request.headers.get('last-event-id') : null;
      const refusal = lastEventId === null ? undefined : session.events.refusal(lastEventId);
      if (refusal !== undefined) return resumeRefused(lastEventId!, refusal);
      // A client resuming a stream has left its old connection (which may still look open here):
      // close it, so the stream can be re-attached (the SDK refuses a second one with 409).
      if (lastEventId !== null) detachStream(session, lastEventId);
      // Batches exist only at 2025-03-26 (2025-06-18 removed them): one rule for HTTP and stdio.
      const revision = session.revision();
      if (Array.isArray(body) && revision !== BATCH_REVISION) {
        return rpcError(400, -32600, `Invalid Request: JSON-RPC batches are allowed only at protocol revision ${BATCH_REVISION}; this session uses ${revision ?? 'none yet'}; send one message per request`);
      }
      const serve = (): Promise<Response> => session.transport.handleRequest(request, body === undefined ? { authInfo } : { parsedBody: body, authInfo });
      return request.method === 'POST' ? session.answers.answer(body, request.signal, jsonOnly, serve) : serve();
    }
    if (request.method !== 'POST') return rpcError(400, -32000, 'Bad Request: Mcp-Session-Id header is required');
    if (!isJsonContentType(request.headers.get('content-type'))) return rpcError(415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
    const opening = Array.isArray(body) ? body.some((m) => isInitializeRequest(m)) : isInitializeRequest(body);
    if (!opening) return rpcError(400, -32000, 'Bad Request: no session; send initialize first');
    if (this.sessions.size >= this.maxSessions) {
      return rpcError(503, -32000, `Too many sessions (limit ${this.maxSessions}); try again later`);
    }
    return this.open(request, body, authInfo, jsonOnly);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const sessions = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.allSettled(sessions.map((s) => s.close()));
  }

  private async open(request: Request, body: unknown, authInfo: AuthInfo, jsonOnly: boolean): Promise<Response> {
    const owner = ownerOf(authInfo);
    const events = new SessionEventStore(this.options.events);
    const answers = new PlainAnswers(events);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      maxRequestBodySize: this.options.maxBodyBytes,
      eventStore: events,
      retryInterval: RETRY_MS,
      onsessioninitialized: (sessionId) => {
        this.sessions.set(sessionId, { transport, owner, events, answers, revision, close, lastSeen: Date.now() });
      },
      onsessionclosed: (sessionId) => {
        this.sessions.delete(sessionId);
      },
    });
    const server = await this.options.factory({ era: 'legacy', requestInfo: request, authInfo });
    const protocol = 'server' in server ? server.server : server;
    // On a 2025-era instance this is the revision `initialize` negotiated (the accessor is deprecated
    // only in favour of the per-request envelope, which 2025 requests do not carry).
    const revision = (): string | undefined => protocol.getNegotiatedProtocolVersion();
    let closed = false;
    const close = async (): Promise<void> => {
      if (closed) return;
      closed = true;
      if (transport.sessionId !== undefined) this.sessions.delete(transport.sessionId);
      answers.close();
      await server.close().catch((error: unknown) => this.options.logger.debug({ err: error }, 'closing a session'));
    };
    transport.onclose = () => {
      if (transport.sessionId !== undefined) this.sessions.delete(transport.sessionId);
      answers.close();
    };
    await server.connect(answers.wrap(transport));
    return answers.answer(body, request.signal, jsonOnly, () => transport.handleRequest(request, { parsedBody: body, authInfo }));
  }

  private sweep(): void {
    const cutoff = Date.now() - this.idleMs;
    for (const [id, session] of this.sessions) {
      if (session.lastSeen < cutoff) {
        this.options.logger.info({ session: id }, 'closing an idle 2025-era session');
        void session.close();
      }
    }
  }
}

function ownerOf(authInfo: AuthInfo): string {
  const principal = principalOfAuth(authInfo);
  return `${principal?.kind ?? 'anonymous'}:${principal?.id ?? authInfo.clientId}`;
}

function detachStream(session: Session, lastEventId: string): void {
  const stream = session.events.streamOf(lastEventId);
  if (stream.kind === 'standalone') session.transport.closeStandaloneSSEStream();
  else if (stream.kind === 'request') session.transport.closeSSEStream(stream.requestId);
}

/** A `Last-Event-ID` this session cannot resume from, answered in words the client can act on. */
function resumeRefused(lastEventId: string, why: 'foreign' | 'expired'): Response {
  const reason = why === 'foreign' ? 'was not issued in this session' : 'has expired (the events after it are no longer kept)';
  return rpcError(400, -32000, `Bad Request: Last-Event-ID ${JSON.stringify(lastEventId.slice(0, 64))} ${reason}; open the stream again without Last-Event-ID`);
}

export function rpcError(status: number, code: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}
