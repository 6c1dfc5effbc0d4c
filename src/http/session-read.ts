/**
 * A plain `resources/read` in a 2025-era session, answered on the endpoint's own path: without a
 * Web Request, the SDK session transport's parsing and SSE stream, the plain-answers shaper, or the
 * session server's dispatch and result validation (see mcp/direct-read.ts for the read, in the 2025
 * shape). Only a request the SDK path would answer with that same JSON takes it:
 *
 * - the body is exactly `jsonrpc`, `id`, `method: 'resources/read'` and `params: { uri }` (no
 *   `_meta`: no progress token, no trace context, no 2026 envelope);
 * - one `Mcp-Session-Id` naming a session this member holds, opened by this caller, whose
 *   `initialize` was answered, with no request of the same id still open in it;
 * - `MCP-Protocol-Version` absent or the session's own revision, no `Mcp-Method` header, and an
 *   `Accept` that allows JSON.
 *
 * Anything else — an unknown or foreign session id, a session another member holds, a batch — goes
 * to the session path, which answers (or refuses) it as before. The session is touched as any request
 * touches it. The answer is `application/json` with the session id header, as the shaper writes it.
 * The read bypasses the session's SDK server, so the session tracks it (session-reads.ts): the
 * client's `notifications/cancelled` for it, or the session's end, aborts it, and a cancelled read is
 * not answered (the POST gets 202).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthInfo, RequestId } from '@modelcontextprotocol/server';
import type { DirectRead } from '../mcp/direct-read.js';
import { acceptance } from './accept.js';
import { answerWith, isRecord, onlyKeys } from './direct-read.js';
import type { LegacySessions } from './sessions.js';

const BODY_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
const PARAM_KEYS = new Set(['uri']);

/** The session id, request id and URI of a plain session read; undefined otherwise. */
export function sessionReadOf(req: IncomingMessage, body: unknown): { session: string; id: RequestId; uri: string } | undefined {
  const { headers } = req;
  const session = headers['mcp-session-id'];
  if (typeof session !== 'string' || headers['mcp-method'] !== undefined) return undefined;
  if (!isRecord(body) || body['method'] !== 'resources/read' || body['jsonrpc'] !== '2.0' || !onlyKeys(body, BODY_KEYS)) return undefined;
  const id = body['id'];
  if (!(typeof id === 'string' || Number.isSafeInteger(id))) return undefined;
  const params = body['params'];
  if (!isRecord(params) || !onlyKeys(params, PARAM_KEYS) || typeof params['uri'] !== 'string') return undefined;
  if (!acceptance(headers['accept']).json) return undefined;
  return { session, id: id as RequestId, uri: params['uri'] };
}

/** Answers the request directly when it qualifies; resolves false (nothing written) when it does not. */
export async function answerSessionRead(req: IncomingMessage, res: ServerResponse, body: unknown, authInfo: AuthInfo, sessions: LegacySessions, read: DirectRead): Promise<boolean> {
  const request = sessionReadOf(req, body);
  if (request === undefined) return false;
  const version = req.headers['mcp-protocol-version'];
  const running = sessions.startRead(request.session, authInfo, request.id, (revision) => version === undefined || version === revision);
  if (running === undefined) return false;
  try {
    return await answerWith(res, (cancel) => read(request.id, request.uri, authInfo, cancel, 'legacy'), { 'mcp-session-id': request.session }, running);
  } finally {
    running.done();
  }
}
