/**
 * Encodes outbound JSON-RPC messages as UTF-8 bytes. The bytes are exactly `JSON.stringify`'s;
 * the one difference is where they come from: the JSON of a *frozen* resource content (a
 * provider hands out frozen contents when it serves the same unchanged content again, see
 * providers/files/recent.ts) is made once and kept beside the object, so answering a hot read
 * again neither rescans its text nor copies it through the JavaScript heap.
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/server';

/** Encoded JSON of frozen contents; entries go when their content object does. */
const encodedContents = new WeakMap<object, Buffer>();
/** The JSON of values made constant (see {@link constantJson}), kept beside them. */
const constants = new WeakMap<object, string>();

/**
 * Freezes `value` deeply and keeps its JSON, so a message that carries it as a member of its result
 * (the server identity in every 2026-07-28 result's `_meta`) is not stringified again each time.
 */
export function constantJson<T extends object>(value: T): T {
  deepFreeze(value);
  constants.set(value, JSON.stringify(value));
  return value;
}

function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  for (const member of Object.values(value)) deepFreeze(member);
  Object.freeze(value);
}

/**
 * The message as one line of JSON (no newline): a string, or — when kept encodings of frozen
 * contents make it up — the pieces of that line in order (text between kept bytes), to be written
 * together without first copying them into one string or buffer.
 */
export function encodeMessage(message: JSONRPCMessage): string | Array<string | Buffer> {
  const kept = keptContentsOf(message);
  if (kept === undefined) return JSON.stringify(message);
  // Members in the order JSON.stringify writes them; `result.contents` from the kept encodings.
  const pieces: Array<string | Buffer> = [];
  let text = '{';
  for (const [key, value] of Object.entries(message)) {
    if (key !== 'result') {
      text = joinMember(text, key, value);
      continue;
    }
    text += `${text.endsWith('{') ? '' : ','}"result":{`;
    for (const [name, member] of Object.entries(value as Record<string, unknown>)) {
      if (name !== 'contents') {
        text = joinMember(text, name, member);
        continue;
      }
      text += `${text.endsWith('{') ? '' : ','}"contents":[`;
      kept.forEach((bytes, i) => {
        pieces.push(i === 0 ? text : `${text},`, bytes);
        text = '';
      });
      text += ']';
    }
    text += '}';
  }
  pieces.push(`${text}}`);
  return pieces;
}

/** Appends `"key":value` as JSON.stringify would inside an object (nothing for an undefined value). */
function joinMember(text: string, key: string, value: unknown): string {
  const separator = text.endsWith('{') ? '' : ',';
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    return `${text}${separator}${JSON.stringify(key)}:${JSON.stringify(value)}`;
  }
  const constant = typeof value === 'object' && value !== null ? constants.get(value) : undefined;
  if (constant !== undefined) return `${text}${separator}${JSON.stringify(key)}:${constant}`;
  // Stringified inside a one-member object, so a toJSON sees its real key and undefined drops out.
  const member = JSON.stringify({ [key]: value }).slice(1, -1);
  return member === '' ? text : `${text}${separator}${member}`;
}

/**
 * The kept encodings of `result.contents` when every entry is a frozen content of plain strings and
 * numbers (the only kind whose JSON cannot change); undefined sends the message the ordinary way.
 */
function keptContentsOf(message: JSONRPCMessage): Buffer[] | undefined {
  if (!('result' in message)) return undefined;
  const result = message.result as Record<string, unknown> | null;
  if (typeof result !== 'object' || result === null || 'toJSON' in result) return undefined;
  const contents = result['contents'];
  if (!Array.isArray(contents) || contents.length === 0) return undefined;
  const kept: Buffer[] = [];
  for (let i = 0; i < contents.length; i += 1) {
    const bytes = encodedOf(contents[i]);
    if (bytes === undefined) return undefined;
    kept.push(bytes);
  }
  return kept;
}

function encodedOf(item: unknown): Buffer | undefined {
  if (typeof item !== 'object' || item === null || !Object.isFrozen(item)) return undefined;
  let bytes = encodedContents.get(item);
  if (bytes === undefined) {
    if (Array.isArray(item) || !Object.values(item).every((v) => typeof v === 'string' || typeof v === 'number')) return undefined;
    bytes = Buffer.from(JSON.stringify(item));
    encodedContents.set(item, bytes);
  }
  return bytes;
}
