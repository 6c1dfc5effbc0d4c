/**
 * 2026-07-28 `subscriptions/listen` over HTTP: the request is admitted before the SDK's handler
 * sees it — watches retained on the endpoint's bus, the filter narrowed to what can be watched, one
 * of the principal's listen-stream slots held — and everything is released when the stream ends.
 */
import type { AuthInfo, McpHttpHandler } from '@modelcontextprotocol/server';
import type { Logger } from '../core/log.js';
import type { Channel } from '../core/subscriptions.js';
import { principalOfAuth } from '../mcp/guard.js';
import { admitListen, isModernListen, listenError } from '../mcp/listen.js';
import type { ConcurrencyLimiter } from '../policy/index.js';
import { whenDone } from './stream.js';

export interface ListenServerOptions {
  /** The SDK's 2026-07-28 handler, which serves the admitted stream. */
  modern: McpHttpHandler;
  /** The endpoint's delivery route: listen streams deliver through the handler's bus. */
  bus: Channel;
  /** URIs one listen may watch. */
  maxUris: number;
  logger: Logger;
  /** Caps each principal's open listen streams. */
  concurrency?: ConcurrencyLimiter;
}

export type ListenServer = (request: Request, message: unknown, authInfo: AuthInfo) => Promise<Response>;

/** Serves a POST whose `Mcp-Method` is `subscriptions/listen` (anything else goes to `modern`). */
export function listenServer({ modern, bus, maxUris, logger, concurrency }: ListenServerOptions): ListenServer {
  return async (request: Request, message: unknown, authInfo: AuthInfo): Promise<Response> => {
    if (!isModernListen(message)) return modern.fetch(request, { parsedBody: message, authInfo });
    const principal = principalOfAuth(authInfo);
    // One of the principal's listen-stream slots is held from admission until the stream ends.
    let slot: (() => void) | undefined;
    let admitted;
    try {
      if (concurrency !== undefined && principal !== undefined) slot = concurrency.acquire(principal, 'listen');
      admitted = await admitListen(bus, message.params, maxUris, logger, principal);
    } catch (error) {
      slot?.();
      return Response.json({ jsonrpc: '2.0', id: message.id, error: listenError(error, logger) });
    }
    const release = (): void => {
      admitted.release();
      slot?.();
    };
    const headers = new Headers(request.headers);
    headers.delete('content-length');
    const narrowed = new Request(request.url, {
      method: 'POST',
      headers,
      body: JSON.stringify({ ...message, params: admitted.params }),
      signal: request.signal,
    });
    let response: Response;
    try {
      response = await modern.fetch(narrowed, { authInfo });
    } catch (error) {
      release();
      throw error;
    }
    if (response.body === null) {
      release();
      return response;
    }
    // A client disconnect reaches the SDK's stream as an abort of `narrowed.signal`, which follows
    // `request.signal`, which follows the Node adapter's controller: each link is held only weakly
    // by the one before. Keep both requests reachable while the stream is open, or a garbage
    // collection cuts the chain and the watches stay held until the next keep-alive write (15 s).
    const keepAlive = [request, narrowed];
    return new Response(
      whenDone(response.body, () => {
        keepAlive.length = 0;
        release();
      }),
      { status: response.status, headers: response.headers },
    );
  };
}
