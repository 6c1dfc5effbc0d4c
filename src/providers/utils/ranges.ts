/**
 * The one parser of partial-read queries, shared by every source that reads part of a resource:
 *
 *   ?bytes=START-END   bytes START…END, 0-based and inclusive (as HTTP's Range); `START-` runs to
 *                      the end of the resource or the read cap, whichever comes first
 *   ?lines=START-END   lines START…END, 1-based and inclusive; `START-` runs to the end; `N` is
 *                      line N alone; `-N` is the last N lines (a tail)
 *
 * `partQuery` splits a URI's query into at most one of the parameters a source accepts and refuses
 * everything else with an InvalidArgumentError that says what is wrong: an unknown or repeated
 * parameter, both at once, an empty, non-numeric, negative, reversed or overlong value. Values are
 * at most 15 digits a side (past any real offset, and exact as a JavaScript number).
 */
import { InvalidArgumentError } from '../../core/errors.js';

/** A byte range: `end` inclusive, undefined to run to the end (or the cap). */
export interface ByteRange {
  start: number;
  end?: number;
}

/** A line range: 1-based and inclusive (`end` undefined runs to the last line), or the last `last` lines. */
export type LineRange = { start: number; end?: number } | { last: number };

/** The part of a resource a query asks for, or the whole of it. */
export type Part =
  | { kind: 'whole' }
  | { kind: 'bytes'; range: ByteRange; raw: string }
  | { kind: 'lines'; range: LineRange; raw: string };

/** Longest value considered; beyond it the value is refused unread. */
const MAX_VALUE = 64;
const DIGITS = 15;

/**
 * The part `query` (the text after `?`, or undefined when there is none) selects, among the
 * parameters `accepted`. Throws InvalidArgumentError for anything else; `uri` is named in the error.
 */
export function partQuery(
  query: string | undefined,
  uri: string,
  accepted: readonly ('bytes' | 'lines')[],
): Part {
  if (query === undefined) return { kind: 'whole' };
  const usage = accepted.map((name) => USAGE[name]).join(' or ');
  const refuse = (reason: string): InvalidArgumentError =>
    new InvalidArgumentError('uri', `${reason}; this URI takes ${usage}`, { uri: clip(uri) });
  if (query === '') throw refuse("an empty query ('?' with nothing after it)");
  const pairs = query.split('&');
  const seen = new Map<string, string>();
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    const name = eq < 0 ? pair : pair.slice(0, eq);
    if (!(accepted as readonly string[]).includes(name))
      throw refuse(`unknown query parameter '${clip(name, MAX_VALUE)}'`);
    if (seen.has(name)) throw refuse(`the query parameter '${name}' is given more than once`);
    if (eq < 0) throw refuse(`the query parameter '${name}' has no value`);
    seen.set(name, pair.slice(eq + 1));
  }
  if (seen.size > 1) throw refuse(`give one of ${[...seen.keys()].join(' and ')}, not both`);
  const [name, value] = [...seen][0]!;
  return name === 'bytes'
    ? { kind: 'bytes', range: parseByteRange(value), raw: value }
    : { kind: 'lines', range: parseLineRange(value), raw: value };
}

const USAGE = {
  bytes: '?bytes=START-END (e.g. ?bytes=0-1048575)',
  lines: '?lines=START-END (e.g. ?lines=1-100)',
};

/** Parses a `bytes` value: `START-END` or `START-`, 0-based and inclusive. */
export function parseByteRange(raw: string): ByteRange {
  const value = decoded(raw, 'bytes');
  const invalid = (reason: string): InvalidArgumentError =>
    new InvalidArgumentError('bytes', reason, { value: clip(value, MAX_VALUE) });
  if (value.startsWith('-'))
    throw invalid(
      'byte offsets are not negative: expected START-END or START- counted from 0 (e.g. 0-1048575)',
    );
  const match = /^(\d+)-(\d*)$/.exec(value);
  if (match === null)
    throw invalid('expected START-END or START- with whole byte offsets from 0 (e.g. 0-1048575)');
  if (match[1]!.length > DIGITS || match[2]!.length > DIGITS)
    throw invalid(`a byte offset is at most ${DIGITS} digits`);
  const start = Number(match[1]);
  if (match[2] === '') return { start };
  const end = Number(match[2]);
  if (end < start) throw invalid(`END (${end}) is before START (${start})`);
  return { start, end };
}

/** Parses a `lines` value: `START-END`, `START-`, `N` (1-based) or `-N` (the last N lines). */
export function parseLineRange(raw: string): LineRange {
  const value = decoded(raw, 'lines');
  const invalid = (reason: string): InvalidArgumentError =>
    new InvalidArgumentError('lines', reason, { value: clip(value, MAX_VALUE) });
  const match = /^(-)?(\d+)(?:-(\d*))?$/.exec(value);
  if (match === null || (match[1] !== undefined && match[3] !== undefined))
    throw invalid(
      'expected START-END, START-, N or -N (the last N lines) with whole numbers from 1 (e.g. 1-100 or -100)',
    );
  if (match[2]!.length > DIGITS || (match[3]?.length ?? 0) > DIGITS)
    throw invalid(`a line number is at most ${DIGITS} digits`);
  const first = Number(match[2]);
  if (match[1] !== undefined) {
    if (first < 1) throw invalid('-N asks for the last N lines: N is at least 1');
    return { last: first };
  }
  const end = match[3] === undefined ? first : match[3] === '' ? undefined : Number(match[3]);
  if (first < 1 || (end !== undefined && end < 1)) throw invalid('lines are numbered from 1');
  if (end !== undefined && end < first) throw invalid(`END (${end}) is before START (${first})`);
  return end === undefined ? { start: first } : { start: first, end };
}

/**
 * The bytes `range` selects of a resource of `size` bytes, as [start, end) — END past the end is
 * clamped, an open range stops at `cap` bytes. START past the last byte is InvalidArgumentError
 * naming the size (an empty resource answers `0-` and `0-N` with nothing). A span over `cap` is
 * undefined: the caller refuses it as too large.
 */
export function byteSpan(
  range: ByteRange,
  size: number,
  cap: number,
): { start: number; end: number } | { over: number } {
  if (range.start >= size && !(size === 0 && range.start === 0)) {
    throw new InvalidArgumentError(
      'bytes',
      size === 0
        ? 'the resource is empty: only 0- reads it'
        : `START (${range.start}) is past the last byte (${size - 1}) of this ${size}-byte resource`,
      { start: range.start, size },
    );
  }
  if (range.end === undefined)
    return { start: range.start, end: Math.min(size, range.start + cap) };
  const end = Math.min(size, range.end + 1);
  return end - range.start > cap ? { over: end - range.start } : { start: range.start, end };
}

/** `?bytes=` for `uri` (its query removed): the first `cap` bytes, as a suggestion in errors. */
export function bytesExample(uri: string, cap: number): string {
  return `${withoutQuery(uri)}?bytes=0-${cap - 1}`;
}

/** `?lines=` for `uri` (its query removed): a first slice of lines, as a suggestion in errors. */
export function linesExample(uri: string): string {
  return `${withoutQuery(uri)}?lines=1-1000`;
}

function withoutQuery(uri: string): string {
  const cut = uri.search(/[?#]/);
  return cut < 0 ? uri : uri.slice(0, cut);
}

function decoded(raw: string, argument: string): string {
  if (raw.length > MAX_VALUE * 3)
    throw new InvalidArgumentError(argument, `the value is longer than ${MAX_VALUE} characters`, {
      value: clip(raw, MAX_VALUE),
    });
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new InvalidArgumentError(argument, 'malformed percent-encoding in the value', {
      value: clip(raw, MAX_VALUE),
    });
  }
}

function clip(text: string, max = 512): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
