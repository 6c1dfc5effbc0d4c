/**
 * A plain `resources/read` in a 2025-era session, answered on the endpoint's own path: without a
 * Web Request, the SDK session transport's parsing and SSE stream, the plain-answers shaper, or the
 * session server's dispatch and result validation (see read.ts for the read, in the 2025
 * shape). Only a request the SDK path would answer with that same JSON takes it:
 *
 * - the body is a plain 2025-era read (plain-read.ts: `params: { uri }` alone, no `_meta`);
 * - one `Mcp-Session-Id` naming a session this member holds, opened by this caller, whose
 *   `initialize` was answered, with no request of the same id still open in it;
 * - `MCP-Protocol-Version` absent or the session's own revision, no `Mcp-Method` header, and an
 *   `Accept` that allows JSON.
 *
 * Anything else — an unknown or foreign session id, a session another member holds, a batch — goes
 * to the session path, which answers (or refuses) it as before. The session is touched as any request
 * touches it. The answer is `application/json` with the session id header, as the shaper writes it.
 * The read bypasses the session's SDK server, so the session tracks it (reads-in-flight.ts): the
 * client's `notifications/cancelled` for it, or the session's end, aborts it, and a cancelled read is
 * not answered (the POST gets 202).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthInfo, RequestId } from '@modelcontextprotocol/server';
import { answerWith, type HttpDirectEntry } from './http-answer.js';
import { plainReadOf } from './plain-read.js';
import type { RunningRead } from './reads-in-flight.js';

/** What the endpoint's 2025-era sessions (http/legacy-sessions.ts) offer a direct read. */
export interface SessionReadHost {
  /**
   * Starts a read in session `session` when one may be answered there (held here, opened by this
   * caller, `initialize` answered at a revision `accepts` takes, no request `id` open in it); the
   * session's reads-in-flight registry tracks it. Undefined when it may not.
   */
  startRead(
    session: string,
    authInfo: AuthInfo,
    id: RequestId,
    accepts: (revision: string) => boolean,
  ): RunningRead | undefined;
}

/** The session id, request id and URI of a plain session read; undefined otherwise. */
export function sessionReadOf(
  req: IncomingMessage,
  body: unknown,
  acceptsJson: HttpDirectEntry['acceptsJson'],
): { session: string; id: RequestId; uri: string } | undefined {
  const { headers } = req;
  const session = headers['mcp-session-id'];
  if (typeof session !== 'string' || headers['mcp-method'] !== undefined) return undefined;
  const plain = plainReadOf(body, 'legacy');
  if (plain === undefined || !acceptsJson(headers['accept'])) return undefined;
  return { session, id: plain.id, uri: plain.uri };
}

/** Answers the request directly when it qualifies; resolves false (nothing written) when it does not. */
export async function answerSessionRead(
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
  authInfo: AuthInfo,
  sessions: SessionReadHost,
  entry: HttpDirectEntry,
): Promise<boolean> {
  const request = sessionReadOf(req, body, entry.acceptsJson);
  if (request === undefined) return false;
  const version = req.headers['mcp-protocol-version'];
  const running = sessions.startRead(
    request.session,
    authInfo,
    request.id,
    (revision) => version === undefined || version === revision,
  );
  if (running === undefined) return false;
  try {
    return await answerWith(
      res,
      (cancel) => entry.read(request.id, request.uri, authInfo, cancel, 'legacy'),
      { 'mcp-session-id': request.session },
      running,
      'accepted',
    );
  } finally {
    running.done();
  }
}
