/**
 * Encodes outbound JSON-RPC messages as UTF-8 bytes. The bytes are exactly `JSON.stringify`'s;
 * the one difference is where they come from: the JSON of a *frozen* resource content (a
 * provider hands out frozen contents when it serves the same unchanged content again, see
 * providers/files/recent.ts) is made once and kept beside the object, so answering a hot read
 * again neither rescans its text nor copies it through the JavaScript heap; and the base64 of a
 * blob this process made (core/base64-blob.ts) goes out as a Base64Run of its bytes when its
 * string was never made — the writer encodes it piece by piece as the stream takes it — or as the
 * string's own Latin-1 bytes when it was, never through `JSON.stringify` or a UTF-8 pass (a 7 MiB
 * range is a 9.3 MiB string); and a structuredContent member whose JSON was made already
 * (core/kept-json.ts: `sql_query`'s rows, serialised once for its text block) is written from it.
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { isMadeBase64, unmadeBlobBytes } from '../../core/base64-blob.js';
import { keptJson } from '../../core/kept-json.js';
import { Base64Run, type EncodedLine, type EncodedPiece } from './base64-run.js';

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
export function encodeMessage(message: JSONRPCMessage): EncodedLine {
  const kept = keptContentsOf(message);
  if (kept === undefined) {
    const structured = keptStructuredOf(message);
    return structured === undefined ? JSON.stringify(message) : structuredJson(message, structured);
  }
  // Members in the order JSON.stringify writes them; `result.contents` from the kept encodings.
  const pieces: EncodedPiece[] = [];
  let text = '{';
  // Whether the object being written has no member yet (no comma before the next).
  let empty = true;
  const members = message as unknown as Record<string, unknown>;
  for (const key of Object.keys(members)) {
    const value = members[key];
    if (key !== 'result') {
      const member = memberJson(key, value);
      if (member !== '') {
        text += empty ? member : `,${member}`;
        empty = false;
      }
      continue;
    }
    text += empty ? '"result":{' : ',"result":{';
    empty = true;
    const result = value as Record<string, unknown>;
    for (const name of Object.keys(result)) {
      if (name !== 'contents') {
        const member = memberJson(name, result[name]);
        if (member !== '') {
          text += empty ? member : `,${member}`;
          empty = false;
        }
        continue;
      }
      text += empty ? '"contents":[' : ',"contents":[';
      for (let i = 0; i < kept.length; i += 1) {
        pieces.push(i === 0 ? text : `${text},`, ...kept[i]!);
        text = '';
      }
      text += ']';
      empty = false;
    }
    text += '}';
    empty = false;
  }
  pieces.push(`${text}}`);
  return pieces;
}

/**
 * `result.structuredContent` when it is a plain object one of whose members has JSON kept for it
 * (core/kept-json.ts: `sql_query`'s rows); undefined sends the message the ordinary way.
 */
function keptStructuredOf(message: JSONRPCMessage): Record<string, unknown> | undefined {
  if (!('result' in message) || 'toJSON' in message) return undefined;
  const result = message.result as Record<string, unknown> | null;
  if (!isPlainRecord(result)) return undefined;
  const structured = result['structuredContent'];
  if (!isPlainRecord(structured)) return undefined;
  for (const key of Object.keys(structured))
    if (keptJson(structured[key]) !== undefined) return structured;
  return undefined;
}

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' && value !== null && !Array.isArray(value) && !('toJSON' in value)
  );
}

/**
 * The message as JSON.stringify writes it, its `result.structuredContent` (`structured`) member by
 * member with the JSON kept for a member where there is one: `sql_query`'s rows are not serialised
 * again after its text block was made from them.
 */
function structuredJson(message: JSONRPCMessage, structured: Record<string, unknown>): string {
  return objectJson(message as unknown as Record<string, unknown>, (key, value) =>
    key === 'result'
      ? quoted(key) +
        objectJson(value as Record<string, unknown>, (name, member) =>
          member === structured
            ? quoted(name) + objectJson(structured, keptMemberJson)
            : memberJson(name, member),
        )
      : memberJson(key, value),
  );
}

/** `{…}` as JSON.stringify writes `object`, each member as `member` writes it ('' leaves it out). */
function objectJson(
  object: Record<string, unknown>,
  member: (key: string, value: unknown) => string,
): string {
  let text = '{';
  for (const key of Object.keys(object)) {
    const json = member(key, object[key]);
    if (json !== '') text += text === '{' ? json : `,${json}`;
  }
  return `${text}}`;
}

/** A member as JSON.stringify writes it, from the JSON kept for its value when there is one. */
function keptMemberJson(key: string, value: unknown): string {
  const json = keptJson(value);
  return json === undefined ? memberJson(key, value) : quoted(key) + json;
}

/** `"key":` for the member names messages use, made once each (a bounded few). */
const quotedKeys = new Map<string, string>();

function quoted(key: string): string {
  let found = quotedKeys.get(key);
  if (found === undefined) {
    found = `${JSON.stringify(key)}:`;
    if (quotedKeys.size < 64) quotedKeys.set(key, found);
  }
  return found;
}

/** `"key":value` as JSON.stringify writes a member inside an object; '' for a member it leaves out. */
function memberJson(key: string, value: unknown): string {
  switch (typeof value) {
    case 'string':
      return quoted(key) + JSON.stringify(value);
    case 'number':
      // Number-to-string is JSON's for every finite number (-0 included); JSON writes the rest as null.
      return quoted(key) + (Number.isFinite(value) ? String(value) : 'null');
    case 'boolean':
      return quoted(key) + (value ? 'true' : 'false');
    case 'object': {
      const constant = value === null ? undefined : constants.get(value);
      if (constant !== undefined) return quoted(key) + constant;
      break;
    }
  }
  // Stringified inside a one-member object, so a toJSON sees its real key and undefined drops out.
  return JSON.stringify({ [key]: value }).slice(1, -1);
}

/**
 * The encodings of `result.contents`, each in pieces, when every entry is a frozen content of
 * plain strings and numbers (the only kind whose JSON cannot change) or a blob made here; undefined
 * sends the message the ordinary way.
 */
function keptContentsOf(message: JSONRPCMessage): EncodedPiece[][] | undefined {
  if (!('result' in message)) return undefined;
  const result = message.result as Record<string, unknown> | null;
  if (typeof result !== 'object' || result === null || 'toJSON' in result) return undefined;
  const contents = result['contents'];
  if (!Array.isArray(contents) || contents.length === 0) return undefined;
  const kept: EncodedPiece[][] = [];
  for (let i = 0; i < contents.length; i += 1) {
    const item: unknown = contents[i];
    const pieces =
      typeof item === 'object' && item !== null && !Object.isFrozen(item) && isMadeBase64(item)
        ? blobPieces(item)
        : keptOf(item);
    if (pieces === undefined) return undefined;
    kept.push(pieces);
  }
  return kept;
}

function keptOf(item: unknown): EncodedPiece[] | undefined {
  const bytes = encodedOf(item);
  return bytes === undefined ? undefined : [bytes];
}

/**
 * A made-here blob content as JSON.stringify writes it, in three pieces: the members before `blob`
 * and its opening quote, the base64 itself (a Base64Run of the bytes while its string was never
 * made, else that string's bytes, one byte a character), then the rest.
 */
function blobPieces(item: { blob: string }): EncodedPiece[] | undefined {
  let head = '{';
  let tail = '"';
  let seen = false;
  const members = item as unknown as Record<string, unknown>;
  for (const key of Object.keys(members)) {
    // `blob` is not read here: reading it would make the string this path avoids.
    if (key === 'blob') {
      seen = true;
      continue;
    }
    const value = members[key];
    if (typeof value !== 'string' && typeof value !== 'number') return undefined;
    if (seen) tail += `,${memberJson(key, value)}`;
    else head += `${memberJson(key, value)},`;
  }
  const bytes = unmadeBlobBytes(item);
  const base64 = bytes === undefined ? Buffer.from(item.blob, 'latin1') : new Base64Run(bytes);
  return [`${head}"blob":"`, base64, `${tail}}`];
}

function encodedOf(item: unknown): Buffer | undefined {
  if (typeof item !== 'object' || item === null || !Object.isFrozen(item)) return undefined;
  let bytes = encodedContents.get(item);
  if (bytes === undefined) {
    if (
      Array.isArray(item) ||
      !Object.values(item).every((v) => typeof v === 'string' || typeof v === 'number')
    )
      return undefined;
    bytes = Buffer.from(JSON.stringify(item));
    encodedContents.set(item, bytes);
  }
  return bytes;
}
