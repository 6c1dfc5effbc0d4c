/**
 * Content sniffing: what the first bytes of a file say it is, whatever its name. A format with a
 * reliable magic number (PNG, JPEG, PDF, …) is that format; bytes without one that are valid UTF-8
 * and hold no NUL are text. The name's type is kept when the bytes agree with it, or say only which
 * container holds the data (a `.docx` is a ZIP, a `.xls` an OLE compound file).
 */
import { isUtf8 } from 'node:buffer';

/** Bytes a listing reads from the start of a file to sniff and describe it. */
export const HEAD_BYTES = 4096;

interface Magic {
  /** Byte offset of the signature. */
  at: number;
  bytes: number[];
  mimeType: string;
  /** A container format: the name's own (more specific) binary type is kept over it. */
  container?: boolean;
  /** Further bytes that must follow (RIFF and ISO-BMFF subtypes), at their own offset. */
  then?: { at: number; bytes: number[] };
}

const ascii = (text: string): number[] => [...text].map((c) => c.charCodeAt(0));

/** Signatures of at least four bytes (shorter ones, like BMP's `BM`, match text too often). */
const MAGICS: Magic[] = [
  { at: 0, bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], mimeType: 'image/png' },
  { at: 0, bytes: [0xff, 0xd8, 0xff], mimeType: 'image/jpeg' },
  { at: 0, bytes: ascii('GIF87a'), mimeType: 'image/gif' },
  { at: 0, bytes: ascii('GIF89a'), mimeType: 'image/gif' },
  { at: 0, bytes: ascii('RIFF'), mimeType: 'image/webp', then: { at: 8, bytes: ascii('WEBP') } },
  { at: 0, bytes: ascii('RIFF'), mimeType: 'audio/wav', then: { at: 8, bytes: ascii('WAVE') } },
  { at: 4, bytes: ascii('ftypavif'), mimeType: 'image/avif' },
  { at: 4, bytes: ascii('ftypheic'), mimeType: 'image/heic' },
  { at: 4, bytes: ascii('ftyp'), mimeType: 'video/mp4', container: true },
  { at: 0, bytes: [0x49, 0x49, 0x2a, 0x00], mimeType: 'image/tiff' },
  { at: 0, bytes: [0x4d, 0x4d, 0x00, 0x2a], mimeType: 'image/tiff' },
  { at: 0, bytes: ascii('%PDF-'), mimeType: 'application/pdf' },
  { at: 0, bytes: ascii('OggS'), mimeType: 'audio/ogg', container: true },
  { at: 0, bytes: ascii('fLaC'), mimeType: 'audio/flac' },
  { at: 0, bytes: ascii('ID3'), mimeType: 'audio/mpeg' },
  { at: 0, bytes: [0x1a, 0x45, 0xdf, 0xa3], mimeType: 'video/webm', container: true },
  { at: 0, bytes: [0x00, 0x61, 0x73, 0x6d], mimeType: 'application/wasm' },
  { at: 0, bytes: ascii('wOFF'), mimeType: 'font/woff' },
  { at: 0, bytes: ascii('wOF2'), mimeType: 'font/woff2' },
  { at: 0, bytes: ascii('SQLite format 3\0'), mimeType: 'application/vnd.sqlite3' },
  { at: 0, bytes: [0x50, 0x4b, 0x03, 0x04], mimeType: 'application/zip', container: true },
  { at: 0, bytes: [0x50, 0x4b, 0x05, 0x06], mimeType: 'application/zip', container: true },
  { at: 0, bytes: [0x1f, 0x8b, 0x08], mimeType: 'application/gzip', container: true },
  { at: 0, bytes: [0x28, 0xb5, 0x2f, 0xfd], mimeType: 'application/zstd', container: true },
  { at: 0, bytes: ascii('BZh'), mimeType: 'application/x-bzip2', container: true },
  {
    at: 0,
    bytes: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00],
    mimeType: 'application/x-xz',
    container: true,
  },
  { at: 0, bytes: [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c], mimeType: 'application/x-7z-compressed' },
  { at: 0, bytes: [0x7f, 0x45, 0x4c, 0x46], mimeType: 'application/x-elf' },
  {
    at: 0,
    bytes: [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1],
    mimeType: 'application/x-ole-storage',
    container: true,
  },
];

function startsWith(head: Uint8Array, at: number, bytes: readonly number[]): boolean {
  if (head.length < at + bytes.length) return false;
  for (let i = 0; i < bytes.length; i += 1) if (head[at + i] !== bytes[i]) return false;
  return true;
}

export interface Sniffed {
  mimeType: string;
  /** Only a container's signature (ZIP, gzip, OLE, …): the name may say more. */
  container: boolean;
  /**
   * A signature of printable characters (`%PDF-`, `GIF89a`, `ID3`): text may begin so, and such a
   * signature counts only when the bytes are not text.
   */
  printable: boolean;
}

/** The format the first bytes name, if they carry a known signature. */
export function sniffMagic(head: Uint8Array): Sniffed | undefined {
  for (const magic of MAGICS) {
    if (!startsWith(head, magic.at, magic.bytes)) continue;
    if (magic.then !== undefined && !startsWith(head, magic.then.at, magic.then.bytes)) continue;
    return {
      mimeType: magic.mimeType,
      container: magic.container === true,
      printable: magic.at === 0 && magic.bytes.every((b) => b >= 0x20 && b < 0x7f),
    };
  }
  return undefined;
}

/**
 * Whether bytes read as text: no NUL, valid UTF-8. `complete` false means they are the start of a
 * longer file, which may cut a character in two: up to three trailing bytes of one are forgiven.
 */
export function looksLikeText(bytes: Buffer, complete: boolean): boolean {
  if (bytes.includes(0)) return false;
  if (isUtf8(bytes)) return true;
  if (complete) return false;
  // The start of a multi-byte character cut off at the end of the head.
  for (let cut = 1; cut <= 3 && cut < bytes.length; cut += 1) {
    const byte = bytes[bytes.length - cut]!;
    if ((byte & 0xc0) === 0xc0) return isUtf8(bytes.subarray(0, bytes.length - cut));
    if ((byte & 0xc0) !== 0x80) return false;
  }
  return false;
}
