/**
 * One 2025-era session as the endpoint holds it, and how it is built: its own SDK transport (with
 * the event store for `Last-Event-ID` resumption and the plain-answers shaper) and server instance,
 * the registry of its direct reads in flight, and in cluster mode its record and subscriptions.
 */
import {
  WebStandardStreamableHTTPServerTransport,
  type AuthInfo,
  type McpServerFactory,
} from '@modelcontextprotocol/server';
import { principalOfAuth } from '../mcp/guarded-call.js';
import { ReadsInFlight } from '../mcp/direct/reads-in-flight.js';
import { legacyChannel } from '../mcp/subscribe.js';
import { SessionEventStore } from './event-store.js';
import type { Logger } from '../core/log.js';
import type { ConcurrencyLimiter } from '../policy/limits.js';
import type { RateLimitStore } from '../policy/rate-limit.js';
import type { EventStoreLimits } from './event-store.js';
import type { SessionLimitOptions } from './session-options.js';
import { Serial } from '../core/serial.js';
import { PlainAnswers } from './plain-answers.js';
import type { SessionDirectory, SessionRecord } from './session-directory.js';

/** The `retry:` a priming event advises: how long a client waits before resuming a dropped stream. */
const RETRY_MS = 1_000;

export interface SessionOptions {
  factory: McpServerFactory;
  logger: Logger;
  /** Largest POST body, bytes. */
  maxBodyBytes: number;
  /** Sessions with no request for this long are closed. @default 900000 (15 min) */
  idleMs?: number | undefined;
  /** Concurrent sessions; `initialize` beyond it is answered 503. @default 1000 */
  maxSessions?: number | undefined;
  /** Per-principal cap and `initialize` rate. @default { perPrincipal: 100, initialize: { perSecond: 5, burst: 50 } } */
  limits?: SessionLimitOptions | undefined;
  /** Caps the GET streams each principal holds open (shared with 2026 listen streams). */
  concurrency?: ConcurrencyLimiter | undefined;
  /** Bounds of each session's SSE event store (for `Last-Event-ID` resumption). */
  events?: EventStoreLimits | undefined;
  /**
   * Cluster mode: sessions recorded where every member finds them, so a request may land on any
   * member; a member rebuilds a session it does not hold from its record.
   */
  directory?: SessionDirectory | undefined;
  /** Cluster mode: the `initialize` rate counted in Redis. */
  rateLimitStore?: RateLimitStore | undefined;
}

export const DEFAULT_SESSION_IDLE_MS = 15 * 60_000;

export interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  /** Who opened it (`kind:id`): a session id is no credential for anyone else. */
  owner: string;
  /** What it counts against: the principal, or an anonymous caller's address (see quotaKey). */
  quota: string;
  events: SessionEventStore;
  answers: PlainAnswers;
  /** Reads answered beside the SDK server (mcp/direct/session.ts), cancelled here. */
  reads: ReadsInFlight;
  /** The protocol revision `initialize` negotiated. */
  revision: () => string | undefined;
  close: () => Promise<void>;
  lastSeen: number;
  /** Open GET streams: a session with one is in use, and never closed to make room. */
  streams: number;
  /** Cluster mode: the record, as last applied to this copy of the session. */
  record?: SessionRecord | undefined;
  /** The session server's subscriptions (mcp/subscribe.ts), followed across the cluster. */
  subscriptions: () => string[];
  sync: (uris: string[]) => Promise<void>;
  /**
   * Cluster mode: what changes its subscriptions runs here one at a time (a POST that subscribes or
   * unsubscribes, with its edit of the record; a record another member edited, applied), so no
   * change is made on top of a copy another is halfway through updating.
   */
  serial: Serial;
}

/** What building a session needs of the session map. */
export interface SessionHooks {
  options: SessionOptions;
  /** Holds the session, initialised under `sessionId`, against its quota key. */
  register(sessionId: string, quota: string, session: Session): void;
  /** Drops the session from the map (it closed). */
  forget(sessionId: string): void;
}

/** Who opened a session (`kind:id`): a session id is no credential for anyone else. */
export function ownerOf(authInfo: AuthInfo): string {
  const principal = principalOfAuth(authInfo);
  return `${principal?.kind ?? 'anonymous'}:${principal?.id ?? authInfo.clientId}`;
}

/** A session's transport and server, registered (`hooks.register`) under `id` once `initialize` passes. */
export async function buildSession(
  hooks: SessionHooks,
  request: Request,
  authInfo: AuthInfo,
  quota: string,
  how: { id: string; record: SessionRecord | undefined; adopted: boolean },
): Promise<{ transport: WebStandardStreamableHTTPServerTransport; answers: PlainAnswers }> {
  const owner = ownerOf(authInfo);
  const principal = principalOfAuth(authInfo);
  const events = new SessionEventStore(hooks.options.events);
  const answers = new PlainAnswers(events);
  const reads = new ReadsInFlight();
  const directory = hooks.options.directory;
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: () => how.id,
    maxRequestBodySize: hooks.options.maxBodyBytes,
    eventStore: events,
    retryInterval: RETRY_MS,
    onsessioninitialized: async (sessionId) => {
      if (directory !== undefined && how.record !== undefined && !how.adopted)
        await directory.created(sessionId, how.record);
      hooks.register(sessionId, quota, {
        transport,
        owner,
        quota,
        events,
        answers,
        reads,
        revision,
        close,
        lastSeen: Date.now(),
        streams: 0,
        record: how.record,
        serial: new Serial(),
        subscriptions: () => legacyChannel(protocol)?.uris() ?? [],
        sync: async (uris) => {
          const channel = legacyChannel(protocol);
          if (channel === undefined) return;
          const wanted = new Set(uris);
          for (const uri of channel.uris()) if (!wanted.has(uri)) channel.remove(uri);
          for (const uri of wanted) {
            if (!channel.has(uri))
              await channel
                .add(uri, principal)
                .catch((error: unknown) =>
                  hooks.options.logger.debug(
                    { err: error, uri },
                    'a recorded subscription could not be restored',
                  ),
                );
          }
        },
      });
    },
    onsessionclosed: async (sessionId) => {
      hooks.forget(sessionId);
      // DELETE ends the session on every member.
      await directory?.ended(sessionId).catch(() => undefined);
    },
  });
  const server = await hooks.options.factory({ era: 'legacy', requestInfo: request, authInfo });
  const protocol = 'server' in server ? server.server : server;
  // On a 2025-era instance this is the revision `initialize` negotiated (the accessor is deprecated
  // only in favour of the per-request envelope, which 2025 requests do not carry).
  const revision = (): string | undefined => protocol.getNegotiatedProtocolVersion();
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    if (transport.sessionId !== undefined) hooks.forget(transport.sessionId);
    answers.close();
    reads.close();
    await server
      .close()
      .catch((error: unknown) => hooks.options.logger.debug({ err: error }, 'closing a session'));
  };
  transport.onclose = () => {
    if (transport.sessionId !== undefined) hooks.forget(transport.sessionId);
    answers.close();
    reads.close();
  };
  await server.connect(answers.wrap(transport));
  return { transport, answers };
}
