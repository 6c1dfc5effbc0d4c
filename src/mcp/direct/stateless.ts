/**
 * The 2026-07-28 `resources/read` answered on the endpoint's own path, without the SDK's
 * per-request server, transport and Request/Response (see read.ts for the read; plain-read.ts for what is plain). Only
 * a request nothing could be wrong with takes it: the SDK's own classifier must route it to the
 * modern era at revision 2026-07-28 (which checks the envelope, and the version and method headers
 * against the body), the `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers must be
 * present and equal to the body's exactly, `Accept` must allow JSON, and the body must carry
 * nothing but `jsonrpc`, `id`, `method` and `params` with `uri` and the three envelope keys.
 * Anything else — a batch, extra fields, trace context, a mismatch, a missing header — goes to the
 * SDK, which answers it (or rejects it) as before.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  classifyInboundRequest,
  PROTOCOL_VERSION_META_KEY,
  type AuthInfo,
  type RequestId,
} from '@modelcontextprotocol/server';
import { answerWith, type HttpDirectEntry } from './http-answer.js';
import { onlyKeys, plainReadOf } from './plain-read.js';

export const DIRECT_READ_REVISION = '2026-07-28';

const META_KEYS = new Set([
  PROTOCOL_VERSION_META_KEY,
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
]);

/** The request's id and URI when it may be answered directly; undefined otherwise. */
export function directReadOf(
  req: IncomingMessage,
  body: unknown,
  acceptsJson: HttpDirectEntry['acceptsJson'],
): { id: RequestId; uri: string } | undefined {
  const { headers } = req;
  if (
    headers['mcp-method'] !== 'resources/read' ||
    headers['mcp-protocol-version'] !== DIRECT_READ_REVISION
  )
    return undefined;
  const plain = plainReadOf(body, 'modern');
  if (plain === undefined) return undefined;
  const { id, uri, meta } = plain;
  if (headers['mcp-name'] !== uri || meta === undefined || !acceptsJson(headers['accept']))
    return undefined;
  // For a body of exactly this shape and these headers, the classifier's verdict depends on the
  // envelope alone (its `_meta`): an envelope it accepted once is accepted again without asking.
  // A client sends the same envelope on every request, so the last one accepted is compared first,
  // value by value, before any is serialised (it passed the checks below when it was accepted).
  if (lastAccepted !== undefined && sameJson(meta, lastAccepted)) return { id, uri };
  if (!onlyKeys(meta, META_KEYS) || meta[PROTOCOL_VERSION_META_KEY] !== DIRECT_READ_REVISION)
    return undefined;
  const envelope = JSON.stringify(meta);
  if (!acceptedEnvelopes.has(envelope)) {
    const outcome = classifyInboundRequest({
      httpMethod: 'POST',
      protocolVersionHeader: DIRECT_READ_REVISION,
      mcpMethodHeader: 'resources/read',
      mcpNameHeader: uri,
      body,
    });
    if (
      outcome.kind !== 'modern' ||
      outcome.messageKind !== 'request' ||
      outcome.classification.revision !== DIRECT_READ_REVISION
    )
      return undefined;
    acceptedEnvelopes.add(envelope);
    // Bounded: the oldest envelope goes first (clients send the same one on every request).
    if (acceptedEnvelopes.size > MAX_ENVELOPES)
      acceptedEnvelopes.delete(acceptedEnvelopes.values().next().value!);
  }
  lastAccepted = meta;
  return { id, uri };
}

/** Envelopes (`_meta` as JSON) the SDK's classifier accepted for a plain read, oldest first. */
const acceptedEnvelopes = new Set<string>();
const MAX_ENVELOPES = 256;
/** The envelope most recently accepted (parsed JSON, never handed to anything that changes it). */
let lastAccepted: Record<string, unknown> | undefined;

/** Whether two values parsed from JSON are the same JSON value (members in any order). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i += 1) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  let count = 0;
  for (const key in left) {
    if (!Object.hasOwn(right, key) || !sameJson(left[key], right[key])) return false;
    count += 1;
  }
  for (const key in right) if (Object.hasOwn(right, key)) count -= 1;
  return count === 0;
}

/**
 * Answers the request directly when it qualifies; resolves false (nothing written) when it does
 * not. The read is aborted when the client goes away before the answer, or the endpoint closes.
 */
export async function answerDirectRead(
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
  authInfo: AuthInfo,
  entry: HttpDirectEntry,
): Promise<boolean> {
  const request = directReadOf(req, body, entry.acceptsJson);
  if (request === undefined) return false;
  const running = entry.stateless.start(res);
  if (running === undefined) return false;
  try {
    return await answerWith(
      res,
      (cancel) => entry.read(request.id, request.uri, authInfo, cancel),
      {},
      running,
      'destroy',
    );
  } finally {
    running.done();
  }
}
