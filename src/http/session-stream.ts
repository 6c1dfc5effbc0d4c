/**
 * A 2025-era session's GET stream (server-to-client notifications). It holds one of the
 * principal's notification-stream slots (shared with 2026 listen streams), and keeps its session in
 * use (never closed to make room; in cluster mode marked "streaming" in the directory), until it ends.
 */
import type { AuthInfo } from '@modelcontextprotocol/server';
import { isReservoirError } from '../core/errors.js';
import { principalOfAuth } from '../mcp/guarded-call.js';
import type { Session, SessionOptions } from './session-build.js';
import { whenDone } from './stream.js';

/** A GET stream holds one of the principal's notification-stream slots, and keeps its session in use, until it ends. */
export async function serveSessionStream(
  id: string,
  session: Session,
  request: Request,
  authInfo: AuthInfo,
  options: Pick<SessionOptions, 'concurrency' | 'directory'>,
  streamMarkMs: number,
): Promise<Response> {
  const principal = principalOfAuth(authInfo);
  let release: (() => void) | undefined;
  if (options.concurrency !== undefined && principal !== undefined) {
    try {
      release = options.concurrency.acquire(principal, 'listen');
    } catch (error) {
      if (!isReservoirError(error)) throw error;
      return new Response(
        JSON.stringify({
          jsonrpc: '2.0',
          id: null,
          error: {
            code: -32013,
            message: error.message,
            data: { code: error.code, ...error.data },
          },
        }),
        {
          status: 429,
          headers: { 'content-type': 'application/json' },
        },
      );
    }
  }
  session.streams += 1;
  if (session.streams === 1)
    options.directory?.streaming(id, session.quota, Date.now() + streamMarkMs);
  const done = (): void => {
    session.streams -= 1;
    session.lastSeen = Date.now();
    if (session.streams === 0) options.directory?.streaming(id, session.quota, undefined);
    release?.();
  };
  let response: Response;
  try {
    response = await session.transport.handleRequest(request, { authInfo });
  } catch (error) {
    done();
    throw error;
  }
  if (response.body === null || !response.ok) {
    done();
    return response;
  }
  return new Response(whenDone(response.body, done), {
    status: response.status,
    headers: response.headers,
  });
}

/**
 * A client resuming a stream (`Last-Event-ID`) has left its old connection, which may still look
 * open here: the stream it resumes is closed, so it can be re-attached.
 */
export function detachStream(session: Session, lastEventId: string): void {
  const stream = session.events.streamOf(lastEventId);
  if (stream.kind === 'standalone') session.transport.closeStandaloneSSEStream();
  else if (stream.kind === 'request') session.transport.closeSSEStream(stream.requestId);
}
