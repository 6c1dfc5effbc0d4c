/**
 * Blob contents whose `blob` this process made itself with `Buffer#toString('base64')`: their text
 * is known to be base64 (no character JSON escapes), so a transport may write it as Latin-1 bytes
 * between the message's other JSON without stringifying or re-encoding it (mcp/direct/encode.ts).
 * A blob from anywhere else (a library user's provider), or one replaced since, is written the
 * ordinary way.
 */
const made = new WeakMap<object, string>();

/** The blob content of `bytes`, marked as made here. */
export function base64Blob<T extends object>(fields: T, bytes: Buffer): T & { blob: string } {
  const content = { ...fields, blob: bytes.toString('base64') };
  made.set(content, content.blob);
  return content;
}

/** Whether `content`'s `blob` is still the one {@link base64Blob} made (and so plain base64). */
export function isMadeBase64(content: object): content is { blob: string } {
  const blob = made.get(content);
  return blob !== undefined && (content as { blob?: unknown }).blob === blob;
}
