/**
 * JSON-RPC message checks for Reservoir's own wire code. The SDK validates every inbound message
 * with its zod `JSONRPCMessageSchema`; that schema is the authority here too, but the common shapes
 * (a request or notification whose params are a plain object, a result, an error) are recognised by
 * a direct check first, which accepts only what the schema accepts — a differential test in
 * test/stdio/jsonrpc.test.ts holds the two together. Anything the direct check is unsure of goes to
 * the SDK's schema, so odd-but-valid messages are accepted and invalid ones fail with its message.
 */
import {
  parseJSONRPCMessage,
  type JSONRPCMessage,
  type RequestId,
} from '@modelcontextprotocol/server';

const RELATED_TASK_META_KEY = 'io.modelcontextprotocol/related-task';

/** Turns a parsed JSON value into a JSON-RPC message, or throws the SDK schema's error. */
export function toJsonRpcMessage(value: unknown): JSONRPCMessage {
  return plainlyValid(value) ? (value as JSONRPCMessage) : parseJSONRPCMessage(value);
}

/** Whether `value` is certainly a valid message by the SDK's schema (false means "ask the schema"). */
export function plainlyValid(value: unknown): boolean {
  if (!isPlainObject(value) || value['jsonrpc'] !== '2.0') return false;
  let keys = 1;
  const id = value['id'];
  const hasId = id !== undefined;
  if (hasId) {
    if (!isRequestId(id)) return false;
    keys += 1;
  }
  if (value['method'] !== undefined) {
    if (typeof value['method'] !== 'string') return false;
    keys += 1;
    const params = value['params'];
    if (params !== undefined) {
      if (!isPlainObject(params) || !plainMeta(params['_meta'])) return false;
      keys += 1;
    }
  } else if (value['result'] !== undefined) {
    const result = value['result'];
    // The schema's result `_meta` may carry serverInfo that it checks: leave any `_meta` to it.
    if (!hasId || !isPlainObject(result) || result['_meta'] !== undefined) return false;
    keys += 1;
  } else if (value['error'] !== undefined) {
    const error = value['error'];
    if (
      !isPlainObject(error) ||
      !Number.isSafeInteger(error['code']) ||
      typeof error['message'] !== 'string'
    )
      return false;
    const errorKeys = 2 + (error['data'] === undefined ? 0 : 1);
    if (Object.keys(error).length !== errorKeys) return false;
    keys += 1;
  } else {
    return false;
  }
  // The schema's objects are strict: no other member may be present (an explicit `undefined` cannot come from JSON).
  return Object.keys(value).length === keys;
}

function plainMeta(meta: unknown): boolean {
  if (meta === undefined) return true;
  if (!isPlainObject(meta)) return false;
  const token = meta['progressToken'];
  if (token !== undefined && !isRequestId(token)) return false;
  return meta[RELATED_TASK_META_KEY] === undefined;
}

function isRequestId(value: unknown): value is RequestId {
  return typeof value === 'string' || Number.isSafeInteger(value);
}

/**
 * An object the schema rebuilds member by member. One with an own `__proto__` member (JSON.parse
 * makes one from that key) is left to the schema, which drops the member as it rebuilds.
 */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    !Object.hasOwn(value, '__proto__')
  );
}

/**
 * The top-level `id` of a JSON-RPC message whose text is too large to parse, read from its first
 * bytes by a small scanner that tracks nesting, so an `"id"` inside `params` is never mistaken for
 * it. Undefined when the head does not show it before the text is cut off.
 */
export function headId(head: string): RequestId | undefined {
  let depth = 0;
  let i = 0;
  let expectKey = false;
  while (i < head.length) {
    const c = head[i]!;
    if (c === '"') {
      const end = stringEnd(head, i);
      if (end < 0) return undefined;
      if (depth === 1 && expectKey && parseOrUndefined(head.slice(i, end + 1)) === 'id') {
        const value = /^\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)\s*[,}]/.exec(head.slice(end + 1));
        const id = value === null ? undefined : parseOrUndefined(value[1]!);
        return isRequestId(id) ? id : undefined;
      }
      expectKey = false;
      i = end + 1;
      continue;
    }
    if (c === '{') {
      depth += 1;
      expectKey = depth === 1;
    } else if (c === '[') {
      depth += 1;
    } else if (c === '}' || c === ']') {
      depth -= 1;
    } else if (c === ',') {
      expectKey = depth === 1;
    }
    i += 1;
  }
  return undefined;
}

/** The JSON value of `text`, or undefined when it is not valid JSON (the head of a bad message may not be). */
function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Index of the quote closing the JSON string that opens at `start`, or -1 if the text ends first. */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i += 1) {
    if (text[i] === '\\') i += 1;
    else if (text[i] === '"') return i;
  }
  return -1;
}
