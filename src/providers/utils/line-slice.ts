/**
 * Line ranges of content too large to hold, for every source: the content arrives as chunks (a
 * file read piece by piece, a git blob streamed from `git cat-file`) or can be read at any offset
 * (a file, a blob held in memory), and only the slice is kept, never more than the cap of it.
 *
 * Lines end after each `\n` (kept in the text, so consecutive ranges concatenate to the whole); a
 * last line without `\n` is a line. START past the last line is an empty slice; END past it is
 * clamped; `-N` is the last N lines (all of them when there are fewer).
 */
const NEWLINE = 0x0a;
/** Backward scans read this much at a time. */
const CHUNK = 1024 * 1024;

/** Reads up to `length` bytes at `position` into `buffer`; resolves with the count read (0 at the end). */
export type PositionalRead = (buffer: Buffer, length: number, position: number) => Promise<number>;

/** What went over the cap: the slice's full size, for the caller's TooLargeError. */
export class SliceTooLarge extends Error {
  constructor(readonly size: number) {
    super(`the slice is ${size} bytes`);
    this.name = 'SliceTooLarge';
  }
}

/**
 * The bytes of lines `start`…`end` (1-based, inclusive; `end` undefined to the last line) of
 * content `size` bytes long arriving as `chunks`, at most `cap` of them; over it, SliceTooLarge
 * with the slice's size (from `size` for an open range, by counting on to END without keeping
 * otherwise). Stops consuming `chunks` once END is passed.
 */
export async function sliceLines(
  chunks: AsyncIterable<Buffer>,
  size: number,
  range: { start: number; end?: number | undefined },
  cap: number,
): Promise<Buffer> {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let sliceBytes = 0;
  let line = 1; // the line the scan is in
  let start = range.start === 1 ? 0 : -1; // offset where the slice begins, once found
  let end = -1; // offset where it ends (exclusive), once found
  let pos = 0;
  for await (const chunk of chunks) {
    const n = chunk.length;
    let i = 0;
    while (start < 0) {
      const nl = chunk.indexOf(NEWLINE, i);
      if (nl < 0) {
        i = n;
        break;
      }
      i = nl + 1;
      line += 1;
      if (line === range.start) start = pos + i;
    }
    if (start >= 0) {
      if (range.end !== undefined) {
        while (i < n) {
          const nl = chunk.indexOf(NEWLINE, i);
          if (nl < 0) break;
          if (line === range.end) {
            end = pos + nl + 1;
            break;
          }
          line += 1;
          i = nl + 1;
        }
      }
      const from = Math.max(start, pos) - pos;
      const to = end >= 0 ? end - pos : n;
      sliceBytes += to - from;
      if (keptBytes + (to - from) > cap) {
        if (range.end === undefined) throw new SliceTooLarge(size - start);
        kept.length = 0;
        keptBytes = cap + 1; // keep counting, stop keeping
      } else if (keptBytes <= cap && to > from) {
        kept.push(Buffer.from(chunk.subarray(from, to)));
        keptBytes += to - from;
      }
    }
    pos += n;
    if (end >= 0) break;
  }
  if (sliceBytes > cap) throw new SliceTooLarge(sliceBytes);
  return kept.length === 1 ? kept[0]! : Buffer.concat(kept, Math.min(keptBytes, cap));
}

/**
 * Where the last `last` lines of content `size` bytes long begin, found by reading backwards from
 * its end (`read`), so a tail of a huge file costs what the tail costs.
 */
export async function tailOffset(
  read: PositionalRead,
  size: number,
  last: number,
  signal?: AbortSignal,
): Promise<number> {
  if (size === 0) return 0;
  const buffer = Buffer.allocUnsafe(Math.min(CHUNK, size));
  // A final `\n` ends the last line: it does not begin another.
  let end = size;
  let newlines = 0;
  let first = true;
  while (end > 0) {
    signal?.throwIfAborted();
    const from = Math.max(0, end - buffer.length);
    const n = await readFully(read, buffer, end - from, from);
    let at = n;
    if (first && n > 0 && buffer[n - 1] === NEWLINE) at = n - 1;
    first = false;
    while (at > 0) {
      const nl = buffer.lastIndexOf(NEWLINE, at - 1);
      if (nl < 0) break;
      newlines += 1;
      if (newlines === last) return from + nl + 1;
      at = nl;
    }
    end = from;
  }
  return 0;
}

/** How many lines content arriving as `chunks` holds (a last line without `\n` counted). */
export async function countLines(chunks: AsyncIterable<Buffer>): Promise<number> {
  let newlines = 0;
  let lastByte = NEWLINE;
  for await (const chunk of chunks) {
    if (chunk.length === 0) continue;
    let at = chunk.indexOf(NEWLINE);
    while (at >= 0) {
      newlines += 1;
      at = chunk.indexOf(NEWLINE, at + 1);
    }
    lastByte = chunk[chunk.length - 1]!;
  }
  return newlines + (lastByte === NEWLINE ? 0 : 1);
}

/** Chunks of content read with `read` from `from` to `to`, `CHUNK` bytes at a time, checking `signal`. */
export async function* positionalChunks(
  read: PositionalRead,
  from: number,
  to: number,
  signal?: AbortSignal,
): AsyncGenerator<Buffer> {
  const buffer = Buffer.allocUnsafe(Math.max(1, Math.min(CHUNK, to - from)));
  let pos = from;
  while (pos < to) {
    signal?.throwIfAborted();
    const n = await read(buffer, Math.min(buffer.length, to - pos), pos);
    if (n === 0) return; // shrank underneath
    yield buffer.subarray(0, n);
    pos += n;
  }
}

/** A PositionalRead over bytes held in memory. */
export function bufferRead(bytes: Buffer): PositionalRead {
  return async (buffer, length, position) =>
    bytes.copy(buffer, 0, position, Math.min(bytes.length, position + length));
}

async function readFully(
  read: PositionalRead,
  buffer: Buffer,
  length: number,
  position: number,
): Promise<number> {
  let done = 0;
  while (done < length) {
    const n = await read(
      done === 0 ? buffer : buffer.subarray(done),
      length - done,
      position + done,
    );
    if (n === 0) break;
    done += n;
  }
  return done;
}
