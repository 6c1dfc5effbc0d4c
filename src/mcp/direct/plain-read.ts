/**
 * THE test of "a plain read": the one request every bypass entry (stdio, 2025 sessions, 2026
 * stateless HTTP) may answer without the SDK's dispatch. A plain read is a JSON-RPC request object
 * with nothing but `jsonrpc: '2.0'`, an `id` (a string or a safe integer), `method:
 * 'resources/read'` and `params`, whose params hold a string `uri` and, by era:
 *
 * - 2025 era: nothing else (no `_meta`: no progress token, no trace context);
 * - 2026-07-28: `_meta` (an object: the request envelope) and nothing else.
 *
 * What each entry adds on top — HTTP headers, a session's state, the connection's revision — is
 * the entry's own check; what makes a body plain is decided here only.
 *
 * A plain 2025-era `resources/subscribe` or `resources/unsubscribe` (stdio answers those directly
 * too, mcp/direct/subscribe.ts) is the same shape under its own method: `params: { uri }` alone.
 */
import type { ProtocolEra, RequestId } from '@modelcontextprotocol/server';

export interface PlainRead {
  id: RequestId;
  uri: string;
  /** The 2026-07-28 envelope (`params._meta`); undefined in the 2025 era. */
  meta?: Record<string, unknown>;
}

const BODY_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
const LEGACY_PARAM_KEYS = new Set(['uri']);
const MODERN_PARAM_KEYS = new Set(['uri', '_meta']);

/** The read a message asks for when it is a plain read of `era`; undefined otherwise. */
export function plainReadOf(message: unknown, era: ProtocolEra): PlainRead | undefined {
  return plainRequestOf(message, 'resources/read', era);
}

/** The methods whose plain request carries a `uri` alone (2025 era) or with `_meta` (2026-07-28). */
export type PlainMethod = 'resources/read' | 'resources/subscribe' | 'resources/unsubscribe';

/** The request a message makes when it is a plain `method` request of `era`; undefined otherwise. */
export function plainRequestOf(
  message: unknown,
  method: PlainMethod,
  era: ProtocolEra,
): PlainRead | undefined {
  if (
    !isRecord(message) ||
    message['method'] !== method ||
    message['jsonrpc'] !== '2.0' ||
    !onlyKeys(message, BODY_KEYS)
  )
    return undefined;
  const id = message['id'];
  if (!(typeof id === 'string' || Number.isSafeInteger(id))) return undefined;
  const params = message['params'];
  if (!isRecord(params)) return undefined;
  const uri = params['uri'];
  if (typeof uri !== 'string') return undefined;
  if (era === 'legacy')
    return onlyKeys(params, LEGACY_PARAM_KEYS) ? { id: id as RequestId, uri } : undefined;
  const meta = params['_meta'];
  if (!isRecord(meta) || !onlyKeys(params, MODERN_PARAM_KEYS)) return undefined;
  return { id: id as RequestId, uri, meta };
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export function onlyKeys(record: Record<string, unknown>, allowed: ReadonlySet<string>): boolean {
  for (const key in record) if (!allowed.has(key)) return false;
  return true;
}
