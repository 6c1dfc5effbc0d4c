/**
 * 2025-era Streamable HTTP sessions. The SDK's combined handler serves 2025 traffic statelessly
 * only (no GET stream, no subscriptions, no server-to-client requests), so 2025 requests are routed
 * here: `initialize` opens a session with its own transport and server instance, later requests
 * carry `Mcp-Session-Id`, DELETE ends it. Idle sessions are closed, and their number is bounded:
 * in all, and per principal (session-quota.ts), whose `initialize` requests are rate-limited too.
 * Each session's GET stream holds one of its principal's notification-stream slots while open
 * (session-stream.ts); a session is built in session-build.ts; the refusals are session-replies.ts.
 */
import { randomUUID } from 'node:crypto';
import {
  isInitializeRequest,
  isJsonContentType,
  type AuthInfo,
  type RequestId,
} from '@modelcontextprotocol/server';
import type { RunningRead } from '../mcp/direct/reads-in-flight.js';
import type { SessionReadHost } from '../mcp/direct/session.js';
import { BATCH_REVISION } from '../mcp/revisions.js';
import { negotiate } from './accept.js';
import {
  buildSession,
  DEFAULT_SESSION_IDLE_MS,
  ownerOf,
  type Session,
  type SessionHooks,
  type SessionOptions,
} from './session-build.js';
import type { SessionRecord } from './session-directory.js';
import { initializeId, quotaKey, SessionQuota } from './session-quota.js';
import {
  directoryDown,
  DirectoryUnavailable,
  initializeParams,
  resumeRefused,
  rpcError,
  touchesSubscriptions,
} from './session-replies.js';
import { applyRecord, followRecord, recordEdit } from './session-follow.js';
import { detachStream, serveSessionStream } from './session-stream.js';

export class LegacySessions implements SessionReadHost {
  private readonly sessions = new Map<string, Session>();
  private readonly idleMs: number;
  private readonly maxSessions: number;
  private readonly sweeper: NodeJS.Timeout;
  private readonly quota: SessionQuota;
  /** Session ids by quota key, and sessions being opened (not yet in `sessions`) by quota key. */
  private readonly held = new Map<string, Set<string>>();
  private readonly opening = new Map<string, number>();
  private openingTotal = 0;
  /** Cluster mode: how long a session's "streaming" mark lasts unless renewed by a sweep. */
  private readonly streamMarkMs: number;

  private readonly adopting = new Map<string, Promise<Session | undefined>>();
  private readonly unlisten: (() => void) | undefined;
  private readonly hooks: SessionHooks;

  constructor(private readonly options: SessionOptions) {
    this.idleMs = options.idleMs ?? DEFAULT_SESSION_IDLE_MS;
    this.maxSessions = options.maxSessions ?? 1000;
    this.quota = new SessionQuota(options.limits, options.rateLimitStore);
    const sweepMs = Math.min(60_000, this.idleMs);
    // A streaming mark outlives two sweeps (each renews it): a crashed member's marks lapse by themselves.
    this.streamMarkMs = 2 * sweepMs + 1_000;
    this.sweeper = setInterval(() => this.sweep(), sweepMs).unref();
    this.unlisten = options.directory?.listen(
      (id, action, version) => void this.heard(id, action, version),
    );
    this.hooks = {
      options,
      register: (sessionId, quota, session) => {
        this.sessions.set(sessionId, session);
        let ids = this.held.get(quota);
        if (ids === undefined) this.held.set(quota, (ids = new Set()));
        ids.add(sessionId);
      },
      forget: (sessionId) => this.forget(sessionId),
    };
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Sessions held by one quota key (a principal, or `anonymous@<address>`). */
  heldBy(key: string): number {
    return this.held.get(key)?.size ?? 0;
  }

  /**
   * Starts a direct read (mcp/direct/session.ts) in session `id` when one may be answered there: held by
   * this member, opened by this caller, its `initialize` answered at a revision `accepts` takes, and
   * no request `requestId` open in it. When it may, the session is touched as any request touches
   * it, and the read is tracked until done (a cancellation or the session's end aborts it).
   */
  startRead(
    id: string,
    authInfo: AuthInfo,
    requestId: RequestId,
    accepts: (revision: string) => boolean,
  ): RunningRead | undefined {
    const session = this.sessions.get(id);
    if (session === undefined || session.owner !== ownerOf(authInfo)) return undefined;
    const revision = session.revision();
    if (revision === undefined || !accepts(revision) || session.answers.waiting(requestId))
      return undefined;
    const read = session.reads.start(requestId);
    if (read === undefined) return undefined;
    session.lastSeen = Date.now();
    this.options.directory?.touch(id, session.quota);
    return read;
  }

  /**
   * Serves one 2025-era request; `body` is the POST body already parsed (undefined for GET/DELETE),
   * `address` the client's, which tells anonymous callers apart.
   */
  async handle(
    original: Request,
    body: unknown,
    authInfo: AuthInfo,
    address?: string,
  ): Promise<Response> {
    const negotiated = negotiate(original);
    if (negotiated instanceof Response) return negotiated;
    const { request, jsonOnly } = negotiated;
    const id = request.headers.get('mcp-session-id');
    if (id !== null) {
      const session =
        this.sessions.get(id) ?? (await this.adopt(id, request, authInfo).catch(directoryDown));
      if (session instanceof Response) return session;
      // Another principal presenting someone's session id is told the session does not exist.
      if (session === undefined || session.owner !== ownerOf(authInfo))
        return rpcError(404, -32001, 'Session not found');
      session.lastSeen = Date.now();
      this.options.directory?.touch(id, session.quota);
      const lastEventId = request.method === 'GET' ? request.headers.get('last-event-id') : null;
      const refusal = lastEventId === null ? undefined : session.events.refusal(lastEventId);
      if (refusal !== undefined) return resumeRefused(lastEventId!, refusal);
      // A client resuming a stream has left its old connection (which may still look open here):
      // close it, so the stream can be re-attached (the SDK refuses a second one with 409).
      if (lastEventId !== null) detachStream(session, lastEventId);
      if (request.method === 'GET')
        return serveSessionStream(id, session, request, authInfo, this.options, this.streamMarkMs);
      // Batches exist only at 2025-03-26 (2025-06-18 removed them): one rule for HTTP and stdio.
      const revision = session.revision();
      if (Array.isArray(body) && revision !== BATCH_REVISION) {
        return rpcError(
          400,
          -32600,
          `Invalid Request: JSON-RPC batches are allowed only at protocol revision ${BATCH_REVISION}; this session uses ${revision ?? 'none yet'}; send one message per request`,
        );
      }
      const serve = (): Promise<Response> =>
        session.transport.handleRequest(
          request,
          body === undefined ? { authInfo } : { parsedBody: body, authInfo },
        );
      if (request.method !== 'POST') return serve();
      session.reads.cancelNamedIn(body);
      const answer = (): Promise<Response> =>
        session.answers.answer(body, request.signal, jsonOnly, serve);
      if (this.options.directory === undefined || !touchesSubscriptions(body)) return answer();
      return session.serial.run(async () => {
        const before = session.subscriptions();
        const response = await answer();
        await recordEdit(this.options.directory!, this.options.logger, id, session, before);
        return response;
      });
    }
    if (request.method !== 'POST')
      return rpcError(400, -32000, 'Bad Request: Mcp-Session-Id header is required');
    if (!isJsonContentType(request.headers.get('content-type')))
      return rpcError(415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
    const opening = Array.isArray(body)
      ? body.some((m) => isInitializeRequest(m))
      : isInitializeRequest(body);
    if (!opening) return rpcError(400, -32000, 'Bad Request: no session; send initialize first');
    const key = quotaKey(authInfo, address);
    const refused = await this.quota.admit(key, initializeId(body));
    if (refused !== undefined) return refused;
    const pending = this.opening.get(key) ?? 0;
    let active = this.heldBy(key) + pending;
    // Cluster mode: the cap counts the principal's sessions on every instance.
    const shared =
      this.options.directory === undefined
        ? undefined
        : await this.options.directory.count(key).catch(() => undefined);
    if (shared !== undefined) active = Math.max(active, shared + pending);
    if (
      active >= this.quota.perPrincipal &&
      !(shared === undefined ? this.evictOldest(key) : await this.evictInCluster(key))
    )
      return this.quota.full(initializeId(body), active);
    if (this.sessions.size + this.openingTotal >= this.maxSessions) {
      return rpcError(
        503,
        -32000,
        `Too many sessions (limit ${this.maxSessions}); try again later`,
      );
    }
    this.opening.set(key, pending + 1);
    this.openingTotal += 1;
    try {
      return await this.open(request, body, authInfo, key, jsonOnly);
    } finally {
      this.openingTotal -= 1;
      const left = (this.opening.get(key) ?? 1) - 1;
      if (left > 0) this.opening.set(key, left);
      else this.opening.delete(key);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.unlisten?.();
    const sessions = [...this.sessions.values()];
    this.sessions.clear();
    this.held.clear();
    await Promise.allSettled(sessions.map((s) => s.close()));
  }

  private async open(
    request: Request,
    body: unknown,
    authInfo: AuthInfo,
    quota: string,
    jsonOnly: boolean,
  ): Promise<Response> {
    const init = initializeParams(body);
    const record: SessionRecord | undefined =
      this.options.directory === undefined
        ? undefined
        : { owner: ownerOf(authInfo), quota, init, subscriptions: [] };
    const { transport, answers } = await buildSession(this.hooks, request, authInfo, quota, {
      id: randomUUID(),
      record,
      adopted: false,
    });
    return answers.answer(body, request.signal, jsonOnly, () =>
      transport.handleRequest(request, { parsedBody: body, authInfo }),
    );
  }

  /**
   * Cluster mode: rebuilds a session another member opened, from its record. The SDK's transport
   * and server keep the handshake in memory, so the recorded `initialize` is replayed into fresh
   * ones (its answer discarded), then `notifications/initialized`, then its subscriptions.
   */
  private adopt(id: string, request: Request, authInfo: AuthInfo): Promise<Session | undefined> {
    const directory = this.options.directory;
    if (directory === undefined) return Promise.resolve(undefined);
    let adopting = this.adopting.get(id);
    if (adopting === undefined) {
      adopting = (async () => {
        const record = await directory.find(id).catch((error: unknown) => {
          throw new DirectoryUnavailable(error);
        });
        if (record === undefined || record.owner !== ownerOf(authInfo)) return undefined;
        const { transport, answers } = await buildSession(
          this.hooks,
          request,
          authInfo,
          record.quota,
          { id, record, adopted: true },
        );
        const replay = (message: unknown): Request =>
          new Request(request.url, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
            },
            body: JSON.stringify(message),
          });
        const initialize = {
          jsonrpc: '2.0',
          id: `reservoir-adopt-${id}`,
          method: 'initialize',
          params: record.init,
        };
        const answered = await answers.answer(initialize, request.signal, true, () =>
          transport.handleRequest(replay(initialize), { parsedBody: initialize, authInfo }),
        );
        await answered.body?.cancel().catch(() => undefined);
        const initialized = { jsonrpc: '2.0', method: 'notifications/initialized' };
        await transport.handleRequest(replay(initialized), { parsedBody: initialized, authInfo });
        const session = this.sessions.get(id);
        // A newer record may have been applied since it registered (heard from another member).
        if (session !== undefined) await session.serial.run(() => applyRecord(session, record));
        this.options.logger.debug(
          { session: id },
          'serving a 2025-era session another instance opened',
        );
        return session;
      })().finally(() => this.adopting.delete(id));
      this.adopting.set(id, adopting);
    }
    return adopting;
  }

  /** Word from another member about a session this member holds, or is adopting, a copy of. */
  private async heard(id: string, action: 'sync' | 'end', version?: number): Promise<void> {
    const session = this.sessions.get(id) ?? (await this.adopting.get(id)?.catch(() => undefined));
    if (session === undefined) return;
    if (action === 'end') {
      this.forget(id);
      await session.close();
      return;
    }
    const directory = this.options.directory!;
    await session.serial.run(() => followRecord(directory, id, session, version));
  }

  /**
   * Closes the principal's least recently used idle session (no GET stream open) to make room;
   * false when it has none: every one is streaming or still being opened.
   */
  private evictOldest(key: string): boolean {
    let oldest: [string, Session] | undefined;
    for (const id of this.held.get(key) ?? []) {
      const session = this.sessions.get(id);
      if (
        session !== undefined &&
        session.streams === 0 &&
        (oldest === undefined || session.lastSeen < oldest[1].lastSeen)
      )
        oldest = [id, session];
    }
    if (oldest === undefined) return false;
    this.options.logger.info(
      { session: oldest[0], principal: key, limit: this.quota.perPrincipal },
      "closing a principal's least recently used idle 2025-era session: over its session cap",
    );
    this.forget(oldest[0]);
    void oldest[1].close();
    void this.options.directory?.ended(oldest[0]).catch(() => undefined);
    return true;
  }

  /**
   * Cluster mode: ends the principal's least recently used session that streams nowhere, wherever
   * it is held. Every member marks the sessions whose GET stream it holds in the directory, so a
   * session streaming on another instance is not the one ended (this member's copy of a session
   * knows nothing of a stream elsewhere): as on one process, when every session is in use the new
   * one is refused.
   */
  private async evictInCluster(key: string): Promise<boolean> {
    const directory = this.options.directory!;
    const id = await directory.oldest(key).catch(() => undefined);
    if (id === undefined) return false;
    const here = this.sessions.get(id);
    // Its stream opened here an instant ago, before the mark reached Redis.
    if (here !== undefined && here.streams > 0) return false;
    this.options.logger.info(
      { session: id, principal: key, limit: this.quota.perPrincipal },
      "ending a principal's least recently used idle 2025-era session: over its session cap",
    );
    if (here !== undefined) {
      this.forget(id);
      void here.close();
    }
    await directory.ended(id).catch(() => undefined);
    return true;
  }

  private forget(id: string): void {
    const session = this.sessions.get(id);
    if (session === undefined) return;
    this.sessions.delete(id);
    const ids = this.held.get(session.quota);
    ids?.delete(id);
    if (ids?.size === 0) this.held.delete(session.quota);
  }

  private sweep(): void {
    const now = Date.now();
    const cutoff = now - this.idleMs;
    for (const [id, session] of this.sessions) {
      if (session.lastSeen < cutoff) {
        this.options.logger.info({ session: id }, 'closing an idle 2025-era session');
        void session.close();
      } else if (session.streams > 0) {
        this.options.directory?.streaming(id, session.quota, now + this.streamMarkMs);
      }
    }
  }
}
