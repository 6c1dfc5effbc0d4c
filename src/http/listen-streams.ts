/**
 * 2026-07-28 `subscriptions/listen` over HTTP: the request is admitted before the SDK's handler
 * sees it — watches retained on the endpoint's bus, the filter narrowed to what can be watched, one
 * of the principal's listen-stream slots held — and everything is released when the stream ends.
 * The SDK serves the stream; this module writes it to the Node response itself, so that resource
 * changes can be written to it directly (mcp/direct/listen-fanout.ts) rather than through the SDK's router.
 */
import type { ServerResponse } from 'node:http';
import type { AuthInfo, McpHttpHandler } from '@modelcontextprotocol/server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import type { Logger } from '../core/log.js';
import type { Channel } from '../core/subscriptions.js';
import { principalOfAuth } from '../mcp/guarded-call.js';
import { admitListen, isModernListen, listenError } from '../mcp/listen-admission.js';
import type { ConcurrencyLimiter } from '../policy/index.js';
import type { ListenFanout } from '../mcp/direct/listen-fanout.js';
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
  concurrency?: ConcurrencyLimiter | undefined;
  /** Where resource changes are written to the streams (the bus's `updated` must go there, not to the SDK). */
  fanout: ListenFanout;
}

export type ListenServer = (
  request: Request,
  message: unknown,
  authInfo: AuthInfo,
  out: ServerResponse,
) => Promise<Response>;

/** Serves a POST whose `Mcp-Method` is `subscriptions/listen` (anything else goes to `modern`). */
export function listenServer({
  modern,
  bus,
  maxUris,
  logger,
  concurrency,
  fanout,
}: ListenServerOptions): ListenServer {
  return async (
    request: Request,
    message: unknown,
    authInfo: AuthInfo,
    out: ServerResponse,
  ): Promise<Response> => {
    if (!isModernListen(message)) return modern.fetch(request, { parsedBody: message, authInfo });
    const principal = principalOfAuth(authInfo);
    // One of the principal's listen-stream slots is held from admission until the stream ends.
    let slot: (() => void) | undefined;
    let admitted;
    try {
      if (concurrency !== undefined && principal !== undefined)
        slot = concurrency.acquire(principal, 'listen');
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
    // collection cuts the chain and the SDK's listener stays until the next keep-alive write (15 s).
    const keepAlive = [request, narrowed];
    if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      // A refusal answered as JSON: nothing is streamed.
      return new Response(
        whenDone(response.body, () => {
          keepAlive.length = 0;
          release();
        }),
        { status: response.status, headers: response.headers },
      );
    }
    pipeListen(response, out, fanout, message.id, () => {
      keepAlive.length = 0;
      release();
    });
    return RESPONSE_ALREADY_SENT;
  };
}

/**
 * Writes the SDK's listen stream to `out` and, once its acknowledgement is written, registers the
 * URIs it acknowledged with `fanout`. `done` runs once, when either side ends.
 */
function pipeListen(
  response: Response,
  out: ServerResponse,
  fanout: ListenFanout,
  id: string | number,
  done: () => void,
): void {
  const reader = response.body!.getReader();
  let unregister: (() => void) | undefined;
  let finished = false;
  const finish = (): void => {
    if (finished) return;
    finished = true;
    unregister?.();
    done();
    void reader.cancel().catch(() => undefined);
  };
  out.once('close', finish);
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => (headers[name] = value));
  out.writeHead(response.status, headers);
  out.flushHeaders();
  void (async () => {
    try {
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done || finished) break;
        out.write(chunk.value);
        if (unregister === undefined)
          unregister = fanout.add(acknowledgedUris(chunk.value), id, out);
      }
    } catch {
      // The SDK's stream failed or was cancelled: end the response.
    }
    // Nothing is written after the SDK's closing result.
    unregister?.();
    if (!out.writableEnded) out.end();
    finish();
  })();
}

/** The resource URIs of a `notifications/subscriptions/acknowledged` frame (the stream's first). */
function acknowledgedUris(frame: Uint8Array): string[] {
  try {
    const text = Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength).toString('utf8');
    const data = text.slice(text.indexOf('data: ') + 6).trim();
    const ack = JSON.parse(data) as {
      method?: string;
      params?: { notifications?: { resourceSubscriptions?: unknown } };
    };
    const uris = ack.params?.notifications?.resourceSubscriptions;
    return ack.method === 'notifications/subscriptions/acknowledged' && Array.isArray(uris)
      ? uris.filter((u): u is string => typeof u === 'string')
      : [];
  } catch {
    return [];
  }
}
