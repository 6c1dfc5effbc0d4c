/**
 * Blob contents this process made from bytes it holds. Their `blob` is base64 made by
 * `Buffer#toString('base64')`, so it has no character JSON escapes, and it is made only when
 * something reads it: until then the content keeps the bytes, and a transport may write the base64
 * straight from them, in pieces, without the 4/3-size string ever existing (mcp/direct/encode.ts).
 * Reading `blob` (JSON.stringify, a spread, a check) makes the string once and keeps it; its length
 * is known without making it ({@link blobLength}). Assigning `blob` replaces it with a plain value,
 * and the content is then written the ordinary way, as is a blob from anywhere else (a library
 * user's provider).
 */
interface Made {
  /** The bytes, until the string is made. */
  bytes: Buffer | undefined;
  /** The string, once made. */
  blob: string | undefined;
  /** Its length (base64 of `bytes`). */
  length: number;
}

const made = new WeakMap<object, Made>();

/** Characters of base64 that `byteCount` bytes make (padding included). */
export function base64Length(byteCount: number): number {
  return Math.ceil(byteCount / 3) * 4;
}

function readBlob(this: object): string {
  const entry = made.get(this)!;
  if (entry.blob === undefined) {
    entry.blob = entry.bytes!.toString('base64');
    entry.bytes = undefined;
  }
  return entry.blob;
}

function replaceBlob(this: object, value: unknown): void {
  Object.defineProperty(this, 'blob', {
    value,
    writable: true,
    enumerable: true,
    configurable: true,
  });
}

/** The blob content of `bytes` (kept, not copied: the caller hands them over), made here. */
export function base64Blob<T extends object>(fields: T, bytes: Buffer): T & { blob: string } {
  const content = { ...fields } as T & { blob: string };
  made.set(content, { bytes, blob: undefined, length: base64Length(bytes.length) });
  Object.defineProperty(content, 'blob', {
    get: readBlob,
    set: replaceBlob,
    enumerable: true,
    configurable: true,
  });
  return content;
}

/**
 * The bytes of a content made by {@link base64Blob} whose base64 has not been made yet (write them
 * as base64); undefined for any other content.
 */
export function unmadeBlobBytes(content: object): Buffer | undefined {
  if (Object.getOwnPropertyDescriptor(content, 'blob')?.get !== readBlob) return undefined;
  return made.get(content)?.bytes;
}

/** Whether `content`'s `blob` is still the one {@link base64Blob} made (and so plain base64). */
export function isMadeBase64(content: object): content is { blob: string } {
  return Object.getOwnPropertyDescriptor(content, 'blob')?.get === readBlob && made.has(content);
}

/** The length of `content.blob`, without making the string of a blob made here. */
export function blobLength(content: { blob: string }): number {
  const entry = isMadeBase64(content) ? made.get(content) : undefined;
  return entry === undefined ? content.blob.length : entry.length;
}
