/**
 * What a 2025-era session request is answered when it is not served: JSON-RPC errors with their
 * HTTP statuses, a refused resumption, a session directory that cannot be reached; and what a POST
 * body says about the session (its `initialize`, whether it touches subscriptions).
 */
import { isReservoirError } from '../core/errors.js';

/** Whether a POST body may have changed the session's subscriptions. */
export function touchesSubscriptions(body: unknown): boolean {
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  return messages.some((m) => {
    const method = (m as { method?: unknown } | null)?.method;
    return method === 'resources/subscribe' || method === 'resources/unsubscribe';
  });
}

/** The params of the `initialize` in a body, as recorded for rebuilding the session elsewhere. */
export function initializeParams(body: unknown): Record<string, unknown> {
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  const initialize = messages.find(
    (m) => (m as { method?: unknown } | null)?.method === 'initialize',
  ) as { params?: Record<string, unknown> } | undefined;
  return initialize?.params ?? {};
}

/** A `Last-Event-ID` this session cannot resume from, answered in words the client can act on. */
export function resumeRefused(lastEventId: string, why: 'foreign' | 'expired'): Response {
  const reason =
    why === 'foreign'
      ? 'was not issued in this session'
      : 'has expired (the events after it are no longer kept)';
  return rpcError(
    400,
    -32000,
    `Bad Request: Last-Event-ID ${JSON.stringify(lastEventId.slice(0, 64))} ${reason}; open the stream again without Last-Event-ID`,
  );
}

/** The session directory (Redis) could not be asked about a session this member does not hold. */
export class DirectoryUnavailable extends Error {
  constructor(cause: unknown) {
    super(isReservoirError(cause) || cause instanceof Error ? cause.message : String(cause), {
      cause,
    });
  }
}

/**
 * A session held elsewhere that cannot be looked up is neither found nor missing: 503, so the
 * client retries instead of opening a new session (a 404 would tell it the session is gone).
 */
export function directoryDown(error: unknown): Response {
  if (!(error instanceof DirectoryUnavailable)) throw error;
  return rpcError(
    503,
    -32000,
    `Service Unavailable: this session is not held by this instance and the session directory cannot be reached (${error.message}); retry shortly`,
  );
}

export function rpcError(status: number, code: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}
