/**
 * The size cap of a read response, counted as the client will receive it: base64 and JSON escaping
 * included, so no answer outgrows what real clients accept (the SDK client drops a stdio message
 * over 10 MiB; docs/design.md, invariant 9).
 */
import { blobLength } from './base64-blob.js';
import { TooLargeError } from './errors.js';
import type { CallContext, ReadResult } from './types.js';

/** 10 MiB less 128 KiB: under the SDK client's 10 MiB stdio limit, with room for the envelope. */
export const DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024 - 128 * 1024;

/** Throws TooLargeError (naming the client's URI `uri`) when `result` encodes to more than `maxBytes`. */
export function checkReadSize(result: ReadResult, uri: string, maxBytes: number): void {
  let encoded = encodedSize(result);
  // The quick estimate is an upper bound; measure exactly before refusing anything.
  if (encoded > maxBytes) encoded = encodedSize(result, true);
  if (encoded > maxBytes) throw new TooLargeError(uri, encoded, maxBytes, 'encoded');
}

/** The bytes a read result occupies on the wire, or a safe upper bound of it when that is small. */
function encodedSize(result: ReadResult, exact = false): number {
  let total = 64;
  for (const content of result.contents) {
    total += 64 + content.uri.length * 3 + (content.mimeType?.length ?? 0);
    if ('blob' in content) total += blobLength(content);
    // JSON escaping grows a UTF-16 unit to at most 6 bytes; measure exactly only when that could matter.
    else
      total +=
        !exact && content.text.length * 6 < 1 << 20
          ? content.text.length * 6
          : Buffer.byteLength(JSON.stringify(content.text));
  }
  return total;
}

/**
 * A provider's context for a read: `ctx` (its signal read through, since it may be made lazily)
 * carrying the answer's budget, so the provider refuses what cannot fit before reading it.
 */
export function withReadBudget(
  ctx: CallContext,
  maxResponseBytes: number | undefined,
  renderMaxBytes?: number,
): CallContext {
  const call: CallContext = {
    get signal() {
      return ctx.signal;
    },
  };
  if (maxResponseBytes !== undefined) call.maxResponseBytes = maxResponseBytes;
  if (renderMaxBytes !== undefined) call.renderMaxBytes = renderMaxBytes;
  if (ctx.principal !== undefined) call.principal = ctx.principal;
  if (ctx.allows !== undefined) call.allows = ctx.allows;
  if (ctx.contentIds !== undefined) call.contentIds = ctx.contentIds;
  return call;
}
