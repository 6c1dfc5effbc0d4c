/**
 * A run of base64 in an encoded message, kept as the bytes it encodes: the writer makes the base64
 * a piece at a time as the stream takes it (stdio/wire.ts, http-answer.ts), so the whole 4/3-size
 * text of a large blob never exists at once.
 */
import { base64Length } from '../../core/base64-blob.js';

/** Bytes per piece: a multiple of 3 (each piece's base64 stands alone), 64 KiB of base64. */
const PIECE_BYTES = 48 * 1024;
/** The longest piece of base64, in characters. */
export const BASE64_PIECE_CHARS = (PIECE_BYTES / 3) * 4;

export class Base64Run {
  constructor(readonly bytes: Buffer) {}

  /** Characters of base64 the run writes (one byte each). */
  get length(): number {
    return base64Length(this.bytes.length);
  }

  /** The base64, in order, a piece at a time (one-byte text: write it as Latin-1). */
  *pieces(): Generator<string> {
    const { bytes } = this;
    for (let at = 0; at < bytes.length; at += PIECE_BYTES)
      yield bytes.toString('base64', at, Math.min(bytes.length, at + PIECE_BYTES));
  }
}

/** One piece of an encoded line: text, bytes as they are, or base64 made from bytes. */
export type EncodedPiece = string | Buffer | Base64Run;

/** An encoded line (no newline): one string, or its pieces in order. */
export type EncodedLine = string | EncodedPiece[];
