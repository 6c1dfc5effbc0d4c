/**
 * Reading a file of a repository whole or in part, decided from the blob's size (from the object
 * store, before a byte is read): a whole blob over the read limit is refused with a TooLargeError
 * naming the ranges that read it; a part (`?bytes=`, `?lines=`, `?lines=-N`, parsed by the shared
 * parser) of a blob within the limit is cut from the blob read whole through the shared reader,
 * and of a larger one from the blob streamed by a `git cat-file blob` of its own, keeping only the
 * part (blob-stream.ts): a blob of any size is never held.
 */
import type { CallContext, ResourceContents } from '../../core/types.js';
import { mimeFromName, toContents } from '../utils/content.js';
import { linesText, refuseBinaryLines } from '../utils/line-text.js';
import {
  bufferRead,
  countLines,
  sliceLines,
  SliceTooLarge,
  tailOffset,
} from '../utils/line-slice.js';
import { byteSpan, type Part } from '../utils/ranges.js';
import { limitFor, tooLarge, type ReadLimits } from '../utils/read-limit.js';
import type { Repository } from './repo.js';

/** The blob `id` (a file called `name`) read for `uri` as `part` asks. */
export async function readBlob(
  repo: Repository,
  uri: string,
  id: string,
  name: string,
  part: Part,
  limits: ReadLimits,
  ctx: CallContext,
): Promise<ResourceContents> {
  const size = await repo.blobSize(id);
  const mimeType = mimeFromName(name);
  const over = (sliceSize: number, cap: number, measure = 'range'): Error =>
    tooLarge(uri, sliceSize, cap, { limits, mimeType, lines: true, measure });
  // Within the text limit the blob is read whole (as a plain read would); past it, streamed.
  const held = size <= limits.text;
  const whole = async (): Promise<Buffer> => {
    ctx.signal.throwIfAborted();
    return repo.blob(id, size);
  };
  const stream = (): AsyncIterable<Buffer> =>
    held ? once(whole()) : repo.blobChunks(id, ctx.signal);

  if (part.kind === 'whole') {
    const limit = limitFor(limits, mimeType);
    if (size > limit) throw over(size, limit, 'size');
    return toContents(uri, name, await whole());
  }
  if (part.kind === 'bytes') {
    const span = byteSpan(part.range, size, limits.blob);
    if ('over' in span) throw over(span.over, limits.blob);
    const bytes = held
      ? (await whole()).subarray(span.start, span.end)
      : await keepSpan(stream(), span.start, span.end);
    return toContents(uri, name, bytes);
  }
  refuseBinaryLines(uri, mimeType);
  const cap = limits.text;
  let bytes: Buffer;
  try {
    if ('last' in part.range) {
      if (held) {
        const all = await whole();
        const start = await tailOffset(bufferRead(all), size, part.range.last, ctx.signal);
        if (size - start > cap) throw new SliceTooLarge(size - start);
        bytes = all.subarray(start);
      } else {
        // Two passes over the stream, neither keeping more than the slice: count, then cut.
        const lines = await countLines(stream());
        const start = Math.max(1, lines - part.range.last + 1);
        bytes = lines === 0 ? Buffer.alloc(0) : await sliceLines(stream(), size, { start }, cap);
      }
    } else {
      bytes = await sliceLines(stream(), size, part.range, cap);
    }
  } catch (error) {
    if (error instanceof SliceTooLarge) throw over(error.size, cap);
    throw error;
  }
  return linesText(uri, mimeType, bytes);
}

/** Bytes [start, end) of content arriving as `chunks`; stops consuming once past `end`. */
async function keepSpan(
  chunks: AsyncIterable<Buffer>,
  start: number,
  end: number,
): Promise<Buffer> {
  const kept = Buffer.allocUnsafe(end - start);
  let filled = 0;
  let pos = 0;
  for await (const chunk of chunks) {
    const from = Math.max(start, pos);
    const to = Math.min(end, pos + chunk.length);
    if (to > from) {
      chunk.copy(kept, from - start, from - pos, to - pos);
      filled = to - start;
    }
    pos += chunk.length;
    if (pos >= end) break;
  }
  return filled === kept.length ? kept : kept.subarray(0, filled);
}

async function* once(bytes: Promise<Buffer>): AsyncGenerator<Buffer> {
  yield await bytes;
}
