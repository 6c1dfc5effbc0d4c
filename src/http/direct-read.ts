/**
 * The 2026-07-28 `resources/read` answered on the endpoint's own path, without the SDK's
 * per-request server, transport and Request/Response (see mcp/direct-read.ts for the read). Only
 * a request nothing could be wrong with takes it: the SDK's own classifier must route it to the
 * modern era at revision 2026-07-28 (which checks the envelope, and the version and method headers
 * against the body), the `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers must be
 * present and equal to the body's exactly, `Accept` must allow JSON, and the body must carry
 * nothing but `jsonrpc`, `id`, `method` and `params` with `uri` and the three envelope keys.
 * Anything else — a batch, extra fields, trace context, a mismatch, a missing header — goes to the
 * SDK, which answers it (or rejects it) as before.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, classifyInboundRequest, PROTOCOL_VERSION_META_KEY, type AuthInfo } from '@modelcontextprotocol/server';
import { Cancellation } from '../core/cancellation.js';
import type { DirectRead } from '../mcp/direct-read.js';
import { acceptance } from './accept.js';

export const DIRECT_READ_REVISION = '2026-07-28';

const BODY_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
const PARAM_KEYS = new Set(['uri', '_meta']);
const META_KEYS = new Set([PROTOCOL_VERSION_META_KEY, CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY]);

/** The request's id and URI when it may be answered directly; undefined otherwise. */
export function directReadOf(req: IncomingMessage, body: unknown): { id: string | number; uri: string } | undefined {
  const { headers } = req;
  if (headers['mcp-method'] !== 'resources/read' || headers['mcp-protocol-version'] !== DIRECT_READ_REVISION) return undefined;
  if (!isRecord(body) || body['method'] !== 'resources/read' || body['jsonrpc'] !== '2.0' || !onlyKeys(body, BODY_KEYS)) return undefined;
  const id = body['id'];
  if (!(typeof id === 'string' || Number.isSafeInteger(id))) return undefined;
  const params = body['params'];
  if (!isRecord(params) || !onlyKeys(params, PARAM_KEYS)) return undefined;
  const uri = params['uri'];
  const meta = params['_meta'];
  if (typeof uri !== 'string' || headers['mcp-name'] !== uri || !isRecord(meta) || !acceptance(headers['accept']).json) return undefined;
  // For a body of exactly this shape and these headers, the classifier's verdict depends on the
  // envelope alone (its `_meta`): an envelope it accepted once is accepted again without asking.
  // A client sends the same envelope on every request, so the last one accepted is compared first,
  // value by value, before any is serialised (it passed the checks below when it was accepted).
  if (lastAccepted !== undefined && sameJson(meta, lastAccepted)) return { id: id as string | number, uri };
  if (!onlyKeys(meta, META_KEYS) || meta[PROTOCOL_VERSION_META_KEY] !== DIRECT_READ_REVISION) return undefined;
  const envelope = JSON.stringify(meta);
  if (!acceptedEnvelopes.has(envelope)) {
    const outcome = classifyInboundRequest({ httpMethod: 'POST', protocolVersionHeader: DIRECT_READ_REVISION, mcpMethodHeader: 'resources/read', mcpNameHeader: uri, body });
    if (outcome.kind !== 'modern' || outcome.messageKind !== 'request' || outcome.classification.revision !== DIRECT_READ_REVISION) return undefined;
    acceptedEnvelopes.add(envelope);
    // Bounded: the oldest envelope goes first (clients send the same one on every request).
    if (acceptedEnvelopes.size > MAX_ENVELOPES) acceptedEnvelopes.delete(acceptedEnvelopes.values().next().value!);
  }
  lastAccepted = meta;
  return { id: id as string | number, uri };
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
 * not. The read's signal aborts when the client goes away before the answer.
 */
export async function answerDirectRead(req: IncomingMessage, res: ServerResponse, body: unknown, authInfo: AuthInfo, read: DirectRead): Promise<boolean> {
  const request = directReadOf(req, body);
  if (request === undefined) return false;
  return answerWith(res, (cancel) => read(request.id, request.uri, authInfo, cancel), {});
}

/**
 * Runs a direct read and writes its answer as `application/json` with `headers`; resolves false
 * (nothing written) when the read declines the request. The read is cancelled when the client
 * goes away before the answer (nothing is written then); a `tracked` read is also cancelled when its
 * client cancels it, and then no answer is sent for it: the POST is closed with 202 and no body, as
 * for a message that has no answer.
 */
export async function answerWith(
  res: ServerResponse,
  read: (cancel: Cancellation) => ReturnType<DirectRead>,
  headers: Record<string, string>,
  tracked?: { cancel: Cancellation; cancelled(): boolean },
): Promise<boolean> {
  const cancel = tracked?.cancel ?? new Cancellation();
  const pending = read(cancel);
  if (pending === undefined) return false;
  const onClose = (): void => cancel.abort();
  res.once('close', onClose);
  let encoded: string | Array<string | Buffer>;
  try {
    encoded = await pending;
  } finally {
    res.off('close', onClose);
  }
  if (res.destroyed) return true;
  if (tracked?.cancelled() === true) {
    res.writeHead(202, headers).end();
    return true;
  }
  const parts = typeof encoded === 'string' ? [encoded] : encoded;
  let length = 0;
  for (const part of parts) length += typeof part === 'string' ? Buffer.byteLength(part) : part.length;
  res.writeHead(200, { 'content-type': 'application/json', ...headers, 'content-length': length });
  res.cork();
  for (const part of parts) res.write(part);
  res.end();
  res.uncork();
  return true;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export function onlyKeys(record: Record<string, unknown>, allowed: ReadonlySet<string>): boolean {
  for (const key in record) if (!allowed.has(key)) return false;
  return true;
}
