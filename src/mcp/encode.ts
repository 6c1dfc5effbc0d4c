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
