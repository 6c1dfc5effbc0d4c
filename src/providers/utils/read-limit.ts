/**
 * How many bytes of a resource one read may return, decided from its size before anything is read.
 * Three bounds meet here: the source's own read cap (`maxReadBytes`), the registry's budget for
 * the encoded answer (`ctx.maxResponseBytes`: base64 is 4/3 of the bytes, JSON escaping never
 * shrinks text), and the longest string this JavaScript engine can build (a whole answer is one
 * JSON string: past it, encoding fails rather than refusing). A resource over its limit is
 * refused at once with a TooLargeError that names the ranges that read it in parts; one under it
 * is read, and the registry still measures the encoded answer exactly (core/read-size.ts).
 */
import { constants } from 'node:buffer';
import { base64Length } from '../../core/base64-blob.js';
import { TooLargeError, type PartialReads } from '../../core/errors.js';
import type { CallContext } from '../../core/types.js';
import { isTextualMime } from './content.js';
import { bytesExample, linesExample } from './ranges.js';

/** Room kept for the answer's envelope beside the longest string: URI, MIME type, JSON-RPC framing. */
const ENVELOPE_BYTES = 256 * 1024;
/** The longest string the engine builds, less the envelope: no answer may be longer. */
export const STRING_CEILING_BYTES = constants.MAX_STRING_LENGTH - ENVELOPE_BYTES;

export interface ReadLimits {
  /** Most bytes of a resource that may be text (or of unknown type: its bytes decide). */
  text: number;
  /** Most bytes of a resource sent as a base64 blob. */
  blob: number;
  /** The source's own cap. */
  maxReadBytes: number;
  /** The encoded answer's budget (the registry's, or the engine's longest string). */
  budget: number;
  /** The longest `?bytes=` range a read answers (what a too-large error suggests). */
  range: number;
}

/** The limits of one read through `ctx` from a source whose own cap is `maxReadBytes`. */
export function readLimits(ctx: CallContext | undefined, maxReadBytes: number): ReadLimits {
  // Only what certainly cannot fit is refused here: text encodes to at least its bytes, a blob to
  // 4/3 of them; the registry measures everything else exactly once read.
  const budget = Math.max(
    1,
    Math.min(ctx?.maxResponseBytes ?? Number.POSITIVE_INFINITY, STRING_CEILING_BYTES),
  );
  // Read for a rendition (a document as Markdown): the original is converted, not sent whole, so
  // the document cap applies in place of the source's cap and the budget; the registry still drops
  // the original from the answer when it does not fit (src/documents/reads.ts).
  const blob = Math.max(1, Math.min(maxReadBytes, Math.floor(budget / 4) * 3));
  const render = ctx?.renderMaxBytes;
  if (render !== undefined) {
    const cap = Math.max(1, Math.min(render, Math.floor(STRING_CEILING_BYTES / 4) * 3));
    return { text: cap, blob: cap, maxReadBytes: cap, budget: STRING_CEILING_BYTES, range: blob };
  }
  return {
    text: Math.max(1, Math.min(maxReadBytes, budget)),
    blob,
    maxReadBytes,
    budget,
    range: blob,
  };
}

/** The limit that applies to a resource declared `mimeType` (undefined: the bytes will decide). */
export function limitFor(limits: ReadLimits, mimeType: string | undefined): number {
  return mimeType !== undefined && !isTextualMime(mimeType) ? limits.blob : limits.text;
}

/**
 * The TooLargeError for `uri` (what the client asked for) of `size` bytes over `limit`, naming the
 * partial reads the source offers: `?bytes=` always (sized for a blob, which any range may be),
 * `?lines=` when the source has line ranges and the type may be text.
 */
export function tooLarge(
  uri: string,
  size: number,
  limit: number,
  options: { limits: ReadLimits; mimeType: string | undefined; lines: boolean; measure?: string },
): TooLargeError {
  const parts: PartialReads = { bytes: bytesExample(uri, options.limits.range) };
  const textual = options.mimeType === undefined || isTextualMime(options.mimeType);
  if (options.lines && textual) parts.lines = linesExample(uri);
  if (limit < options.limits.maxReadBytes) {
    // The answer's budget refused it, not the source's cap: said in encoded bytes, as the
    // registry's own check would (at least the bytes for text, 4/3 of them for a blob).
    const encoded = textual ? size : base64Length(size);
    return new TooLargeError(uri, encoded, options.limits.budget, 'encoded', parts);
  }
  return new TooLargeError(uri, size, limit, options.measure ?? 'size', parts);
}
