/**
 * Partial reads of a file: `?bytes=START-END` (any file) and `?lines=START-END` / `?lines=-N` (text),
 * parsed by the shared parser (utils/ranges.ts). Only the part is read: a byte range at its offset,
 * a line range by scanning chunk by chunk until END, a tail backwards from the end — a file of any
 * size is never loaded — and the part is bounded by the same read limit as a whole read (over it:
 * TooLargeError with the part's size). A directory has no parts; a binary file has no lines.
 */
import { read as readCallback, readSync } from 'node:fs';
import { basename } from 'node:path';
import { promisify } from 'node:util';
import { InvalidArgumentError } from '../../core/errors.js';
import type { CallContext, ResourceContents } from '../../core/types.js';
import { mimeFromName, toContents } from '../utils/content.js';
import { linesText, refuseBinaryLines } from '../utils/line-text.js';
import {
  positionalChunks,
  sliceLines,
  SliceTooLarge,
  tailOffset,
  type PositionalRead,
} from '../utils/line-slice.js';
import { byteSpan, partQuery, type Part } from '../utils/ranges.js';
import { tooLarge, type ReadLimits } from '../utils/read-limit.js';
import type { OpenedEntry } from './containment.js';

const readAsync = promisify(readCallback);
/** Files up to this size are read with synchronous calls: faster than a round of async I/O. */
const SYNC_READ_LIMIT = 64 * 1024;

/**
 * A file URI split into the resource (`base`) and the part its query asks for. In a normalised
 * `file:` href `?` and `#` can only be delimiters (inside a name they are percent-encoded); a
 * fragment is refused, as is any query but one `bytes` or `lines`. Checked before anything touches
 * the disk, so it says nothing about existence.
 */
export function filePart(uri: string): { base: string; part: Part } {
  if (uri.includes('#'))
    throw new InvalidArgumentError(
      'uri',
      'a file URI takes no fragment; for a part use ?lines=START-END (e.g. ?lines=1-100) or ?bytes=START-END',
      { uri: uri.length > 512 ? `${uri.slice(0, 512)}…` : uri },
    );
  const mark = uri.indexOf('?');
  if (mark < 0) return { base: uri, part: { kind: 'whole' } };
  return {
    base: uri.slice(0, mark),
    part: partQuery(uri.slice(mark + 1), uri, ['lines', 'bytes']),
  };
}

/** Reads `part` of the opened entry as one content for `uri` (the URI asked for). */
export async function readFilePart(
  uri: string,
  opened: OpenedEntry & { path: string },
  part: Exclude<Part, { kind: 'whole' }>,
  limits: ReadLimits,
  ctx: CallContext,
): Promise<ResourceContents> {
  const argument = part.kind;
  if (opened.stats.isDirectory())
    throw new InvalidArgumentError(
      argument,
      `a directory has no ${part.kind}; read it without ?${part.kind}`,
      { uri },
    );
  const size = opened.stats.size;
  const read = fileRead(opened.fd, size);
  const name = basename(opened.path);
  const declared = mimeFromName(name);
  const over = (sliceSize: number, cap: number): Error =>
    tooLarge(uri, sliceSize, cap, { limits, mimeType: declared, lines: true, measure: 'range' });
  if (part.kind === 'bytes') {
    const span = byteSpan(part.range, size, limits.blob);
    if ('over' in span) throw over(span.over, limits.blob);
    const bytes = await readSpan(read, span.start, span.end, ctx);
    return toContents(uri, name, bytes);
  }
  refuseBinaryLines(uri, declared);
  let bytes: Buffer;
  if ('last' in part.range) {
    const start = await tailOffset(read, size, part.range.last, ctx.signal);
    if (size - start > limits.text) throw over(size - start, limits.text);
    bytes = await readSpan(read, start, size, ctx);
  } else {
    try {
      bytes = await sliceLines(
        positionalChunks(read, 0, size, ctx.signal),
        size,
        part.range,
        limits.text,
      );
    } catch (error) {
      if (error instanceof SliceTooLarge) throw over(error.size, limits.text);
      throw error;
    }
  }
  // Judged like a whole read: valid UTF-8, and for an unknown type no NUL bytes either.
  return linesText(uri, declared, bytes);
}

/** Reads [start, end) of the file; shorter when it shrank underneath. */
export async function readSpan(
  read: PositionalRead,
  start: number,
  end: number,
  ctx: CallContext,
): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(end - start);
  let done = 0;
  while (start + done < end) {
    ctx.signal.throwIfAborted();
    const n = await read(buffer.subarray(done), Math.min(CHUNK, end - start - done), start + done);
    if (n === 0) break;
    done += n;
  }
  return done === buffer.length ? buffer : buffer.subarray(0, done);
}

/** Large reads go in chunks of this size, yielding to the event loop between them. */
const CHUNK = 1024 * 1024;

/** Positional reads of the open file `fd` of `size` bytes: synchronous for a small file. */
export function fileRead(fd: number, size: number): PositionalRead {
  if (size <= SYNC_READ_LIMIT)
    return async (buffer, length, position) => readSync(fd, buffer, 0, length, position);
  return async (buffer, length, position) =>
    (await readAsync(fd, buffer, 0, length, position)).bytesRead;
}
