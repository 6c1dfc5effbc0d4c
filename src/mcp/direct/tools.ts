/**
 * A plain 2025-era `tools/call` answered without the SDK's dispatch, on a stdio connection
 * (stdio.ts), through the connection's server instance's own tool caller (mcp/direct-tools.ts: the
 * handler's body, guard and result validation). A plain call is a JSON-RPC request with nothing but
 * `jsonrpc`, `id` (a string or a safe integer), `method` and `params`, whose params are a string
 * `name` and, optionally, an `arguments` object — no `_meta` (no progress token, no trace context),
 * no `task`. Anything the SDK's schema pass would refuse or treat otherwise goes to the SDK, as does
 * an `arguments` object with an own `__proto__` member (the SDK's copy of the arguments would not
 * keep it as a member). Errors are written as the SDK writes them on a 2025-era connection.
 * test/mcp/direct/tools-parity.test.ts compares the answers with `directReads: false`.
 */
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/server';
import type { Cancellation } from '../../core/cancellation.js';
import { LOCAL_PRINCIPAL } from '../../core/principal.js';
import type { LegacyToolCaller } from '../direct-tools.js';
import type { Caller } from '../guarded-call.js';
import type { EncodedLine } from './base64-run.js';
import { isRecord, onlyKeys } from './plain-read.js';
import { encodeAnswer } from './read.js';

export interface PlainToolCall {
  id: RequestId;
  name: string;
  /** The `arguments` object; undefined when the call gives none. */
  arguments: Record<string, unknown> | undefined;
}

const BODY_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
const PARAM_KEYS = new Set(['name', 'arguments']);

/** The call a message makes when it is a plain 2025-era `tools/call`; undefined otherwise. */
export function plainToolCallOf(message: JSONRPCMessage): PlainToolCall | undefined {
  const record = message as unknown as Record<string, unknown>;
  if (
    record['method'] !== 'tools/call' ||
    record['jsonrpc'] !== '2.0' ||
    !onlyKeys(record, BODY_KEYS)
  )
    return undefined;
  const id = record['id'];
  if (!(typeof id === 'string' || Number.isSafeInteger(id))) return undefined;
  const params = record['params'];
  if (!isRecord(params) || !onlyKeys(params, PARAM_KEYS)) return undefined;
  const name = params['name'];
  if (typeof name !== 'string') return undefined;
  const args = params['arguments'];
  if (args === undefined) return { id: id as RequestId, name, arguments: undefined };
  if (!isRecord(args) || Object.hasOwn(args, '__proto__')) return undefined;
  return { id: id as RequestId, name, arguments: args };
}

const noCarrier = (): Record<string, string> => ({});

/** Answers `call` through `tools` as the local user (stdio); resolves the encoded answer. */
export function answerToolCall(
  tools: LegacyToolCaller,
  call: PlainToolCall,
  cancel: Cancellation,
): Promise<EncodedLine> {
  const caller: Caller = { principal: LOCAL_PRINCIPAL, signal: cancel, carrier: noCarrier };
  return encodeAnswer(call.id, false, () => tools.call(caller, call.name, call.arguments));
}
