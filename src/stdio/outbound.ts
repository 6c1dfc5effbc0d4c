/**
 * How the wire (wire.ts) writes one turn's outbound lines once they are not all text.
 *
 * Kept encodings and blob bytes: as they are, between runs of text, in one corked write (writev),
 * never copied together.
 *
 * Lines that hold base64 runs (mcp/direct/base64-run.ts, a blob this process read): text and bytes
 * as they come, and each run's base64 made a piece at a time while the stream takes it — when a
 * write leaves the stream's buffer over its high-water mark, the next piece waits for `drain`.
 * So a 7 MiB range costs 64 KiB of base64 at a time, not a 9.3 MiB string and its copy, however
 * slowly the client reads, and several ranges in flight hold no more than their bytes.
 */
import { Socket } from 'node:net';
import type { Writable } from 'node:stream';
import { Base64Run, BASE64_PIECE_CHARS, type EncodedPiece } from '../mcp/direct/base64-run.js';

/** Bytes of base64 a slab holds: one piece of a run. */
const SLAB_BYTES = BASE64_PIECE_CHARS;

/**
 * Writes `parts` to `out` in order; resolves when the last write is done. Rejects on a write
 * error, or when `out` closes or `closed()` turns true before the end (nothing more is written).
 */
export async function writeStreaming(
  out: Writable,
  parts: readonly EncodedPiece[],
  closed: () => boolean,
): Promise<void> {
  let text = '';
  for (const part of parts) {
    if (typeof part === 'string') {
      text += part;
      continue;
    }
    if (text !== '') out.write(text);
    text = '';
    if (!(part instanceof Base64Run)) {
      if (!out.write(part)) await drained(out, closed);
      continue;
    }
    if (out instanceof Socket) await writeThroughSlabs(out, part);
    else
      for (const piece of part.pieces())
        if (!out.write(piece, 'latin1')) await drained(out, closed);
  }
  await new Promise<void>((resolve, reject) =>
    out.write(text, (error) => (error ? reject(error) : resolve())),
  );
}

/**
 * A socket's handle (the stdout pipe) has the kernel copy each chunk and calls back once it has:
 * the run goes out through two slabs, one written while the next is filled and neither refilled
 * before its write called back. Strings written instead would each be copied into memory of
 * their own, and 9 MiB of those a range keeps the garbage collector busy.
 */
async function writeThroughSlabs(out: Socket, run: Base64Run): Promise<void> {
  const slabs = [Buffer.allocUnsafeSlow(SLAB_BYTES), Buffer.allocUnsafeSlow(SLAB_BYTES)] as const;
  const writes: Array<Promise<void> | undefined> = [undefined, undefined];
  let failed: Error | undefined;
  let slab = 0;
  try {
    for (const piece of run.pieces()) {
      await writes[slab];
      if (failed !== undefined) throw failed;
      const into = slabs[slab]!;
      const length = into.write(piece, 0, 'latin1');
      writes[slab] = new Promise<void>((resolve) =>
        out.write(into.subarray(0, length), (error) => {
          failed ??= error ?? undefined;
          resolve();
        }),
      );
      slab ^= 1;
    }
  } finally {
    await Promise.all(writes);
  }
  if (failed !== undefined) throw failed;
}

/** Resolves on `drain`; rejects when the stream fails or closes first. */
function drained(out: Writable, closed: () => boolean): Promise<void> {
  if (closed() || out.destroyed) return Promise.reject(new Error('stdio connection is closed'));
  return new Promise<void>((resolve, reject) => {
    const settle = (error?: Error): void => {
      out.off('drain', onDrain);
      out.off('error', onError);
      out.off('close', onClose);
      if (error === undefined) resolve();
      else reject(error);
    };
    const onDrain = (): void => settle();
    const onError = (error: Error): void => settle(error);
    const onClose = (): void => settle(new Error('stdio connection is closed'));
    out.on('drain', onDrain);
    out.on('error', onError);
    out.on('close', onClose);
  });
}

/** Writes `parts` in one corked write, each run of text joined; `done` is called back by the last. */
export function writeCorked(
  out: Writable,
  parts: ReadonlyArray<string | Buffer>,
  done: (error: Error | null | undefined) => void,
): void {
  const runs = textRuns(parts);
  out.cork();
  for (let i = 0; i < runs.length - 1; i += 1) out.write(runs[i]!);
  out.write(runs[runs.length - 1]!, done);
  out.uncork();
}

/** The parts in order with each run of text joined into one string (bytes stay as they are). */
function textRuns(parts: ReadonlyArray<string | Buffer>): Array<string | Buffer> {
  const runs: Array<string | Buffer> = [];
  let text = '';
  for (const part of parts) {
    if (typeof part === 'string') {
      text += part;
      continue;
    }
    if (text !== '') runs.push(text);
    text = '';
    runs.push(part);
  }
  if (text !== '') runs.push(text);
  return runs;
}
