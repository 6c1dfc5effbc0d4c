/**
 * A bounded zip reader for the zip-based formats (DOCX, XLSX, PPTX, EPUB). It reads the central
 * directory itself and inflates each entry with fflate's streaming inflater in small pieces,
 * counting what comes out: a zip bomb is stopped after at most one piece past the cap, whatever its
 * headers declare. Declared sizes are checked first (total and per-entry ratio), so an honest
 * bomb is refused before anything is inflated. Encrypted entries, ZIP64 and unknown methods are
 * refused as unsupported; a truncated or inconsistent archive is an invalid document.
 */
import { Inflate } from 'fflate';
import { DocumentError } from './types.js';

/** One entry's name and place in the archive. */
interface Entry {
  name: string;
  method: number;
  flags: number;
  compressedSize: number;
  size: number;
  localOffset: number;
}

/** Declared expansion above this (for entries over 1 MiB) is refused before inflating. */
const MAX_DECLARED_RATIO = 200;
/** Compressed bytes fed to the inflater per step: bounds the overshoot past the cap. */
const PIECE = 4096;
const MAX_ENTRIES = 20_000;

export class ZipArchive {
  private readonly entries = new Map<string, Entry>();
  private inflated = 0;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly maxInflatedBytes: number,
  ) {
    for (const entry of readCentralDirectory(bytes)) this.entries.set(entry.name, entry);
    let declared = 0;
    for (const entry of this.entries.values()) {
      declared += entry.size;
      if (entry.size > 1024 * 1024 && entry.size > entry.compressedSize * MAX_DECLARED_RATIO)
        throw new DocumentError(
          'too_large',
          `zip entry ${entry.name} declares ${entry.size} bytes from ${entry.compressedSize} compressed (a ratio over ${MAX_DECLARED_RATIO}): refused as a zip bomb`,
          { entry: entry.name, size: entry.size, compressedSize: entry.compressedSize },
        );
    }
    if (declared > maxInflatedBytes)
      throw new DocumentError(
        'too_large',
        `the archive declares ${declared} bytes once inflated, over the limit of ${maxInflatedBytes}`,
        { size: declared, limit: maxInflatedBytes },
      );
  }

  /** Entry names, in central-directory order. */
  names(): string[] {
    return [...this.entries.keys()];
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  /** The inflated bytes of `name`, or undefined when there is no such entry. */
  read(name: string): Uint8Array | undefined {
    const entry = this.entries.get(name);
    if (entry === undefined) return undefined;
    if ((entry.flags & 1) !== 0)
      throw new DocumentError('unsupported', `the archive is encrypted (entry ${entry.name})`);
    const start = dataStart(this.bytes, entry);
    const data = this.bytes.subarray(start, start + entry.compressedSize);
    if (data.length !== entry.compressedSize)
      throw new DocumentError('invalid_document', `zip entry ${entry.name} is truncated`);
    if (entry.method === 0) return this.count(data, entry.name);
    if (entry.method !== 8)
      throw new DocumentError(
        'unsupported',
        `zip entry ${entry.name} uses compression method ${entry.method}`,
      );
    const chunks: Uint8Array[] = [];
    const inflater = new Inflate((chunk) => {
      this.count(chunk, entry.name);
      chunks.push(chunk);
    });
    try {
      for (let at = 0; at < data.length; at += PIECE)
        inflater.push(data.subarray(at, at + PIECE), at + PIECE >= data.length);
      if (data.length === 0) inflater.push(new Uint8Array(0), true);
    } catch (error) {
      if (error instanceof DocumentError) throw error;
      throw new DocumentError('invalid_document', `zip entry ${entry.name} does not inflate`);
    }
    return concat(chunks);
  }

  /** The entry as UTF-8 text, or undefined when missing. */
  text(name: string): string | undefined {
    const bytes = this.read(name);
    return bytes === undefined ? undefined : new TextDecoder('utf-8').decode(bytes);
  }

  private count(chunk: Uint8Array, name: string): Uint8Array {
    this.inflated += chunk.length;
    if (this.inflated > this.maxInflatedBytes)
      throw new DocumentError(
        'too_large',
        `the archive inflates past the limit of ${this.maxInflatedBytes} bytes (at entry ${name}): refused as a zip bomb`,
        { limit: this.maxInflatedBytes, entry: name },
      );
    return chunk;
  }
}

/** Whether `bytes` starts like a zip archive. */
export function looksLikeZip(bytes: Uint8Array): boolean {
  return bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04;
}

function readCentralDirectory(bytes: Uint8Array): Entry[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // The end-of-central-directory record is in the last 64 KiB + 22 bytes.
  let eocd = -1;
  for (let at = bytes.length - 22; at >= Math.max(0, bytes.length - 65_557); at -= 1) {
    if (view.getUint32(at, true) === 0x06054b50) {
      eocd = at;
      break;
    }
  }
  if (eocd < 0)
    throw new DocumentError('invalid_document', 'not a zip archive (no central directory)');
  const count = view.getUint16(eocd + 10, true);
  const offset = view.getUint32(eocd + 16, true);
  if (count === 0xffff || offset === 0xffffffff)
    throw new DocumentError('unsupported', 'ZIP64 archives are not supported');
  if (count > MAX_ENTRIES)
    throw new DocumentError('too_large', `the archive has ${count} entries, over ${MAX_ENTRIES}`);
  const entries: Entry[] = [];
  let at = offset;
  const decoder = new TextDecoder('utf-8');
  for (let i = 0; i < count; i += 1) {
    if (at + 46 > bytes.length || view.getUint32(at, true) !== 0x02014b50)
      throw new DocumentError('invalid_document', 'the zip central directory is damaged');
    const nameLength = view.getUint16(at + 28, true);
    const extraLength = view.getUint16(at + 30, true);
    const commentLength = view.getUint16(at + 32, true);
    const entry: Entry = {
      flags: view.getUint16(at + 8, true),
      method: view.getUint16(at + 10, true),
      compressedSize: view.getUint32(at + 20, true),
      size: view.getUint32(at + 24, true),
      localOffset: view.getUint32(at + 42, true),
      name: decoder.decode(bytes.subarray(at + 46, at + 46 + nameLength)),
    };
    if (entry.size === 0xffffffff || entry.compressedSize === 0xffffffff)
      throw new DocumentError('unsupported', 'ZIP64 archives are not supported');
    entries.push(entry);
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

function dataStart(bytes: Uint8Array, entry: Entry): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const at = entry.localOffset;
  if (at + 30 > bytes.length || view.getUint32(at, true) !== 0x04034b50)
    throw new DocumentError('invalid_document', `zip entry ${entry.name} has no local header`);
  return at + 30 + view.getUint16(at + 26, true) + view.getUint16(at + 28, true);
}

function concat(chunks: Uint8Array[]): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const total = chunks.reduce((sum, c) => sum + c.length, 0);
  const out = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}
