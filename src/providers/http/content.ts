/**
 * An upstream body as resource content. The upstream `Content-Type` is the MIME type (its essence,
 * parameters dropped); text or blob follows the files provider's rules: textual types that are valid
 * UTF-8 are text, everything else a base64 blob. A declared non-UTF-8 charset (e.g. ISO-8859-1) is
 * transcoded to UTF-8 text when the bytes are valid in it. Without a Content-Type, the endpoint's
 * configured `mimeType` applies, else the bytes are sniffed like a file of unknown extension.
 */
import { isUtf8 } from 'node:buffer';
import { isTextualMime } from '../utils/content.js';
import type { CachedContent } from './cache.js';

const UTF8_LABELS = new Set(['utf-8', 'utf8', 'us-ascii', 'ascii']);

export function toContent(
  contentType: string | undefined,
  body: Buffer,
  fallback: string | undefined,
): CachedContent {
  const { essence, charset } = parseContentType(contentType ?? fallback);
  if (essence === undefined) {
    if (isUtf8(body) && !body.includes(0))
      return { mimeType: 'text/plain', text: body.toString('utf8') };
    return { mimeType: 'application/octet-stream', blob: body.toString('base64') };
  }
  if (isTextualMime(essence) || charset !== undefined) {
    if (charset === undefined || UTF8_LABELS.has(charset)) {
      if (isUtf8(body)) return { mimeType: essence, text: body.toString('utf8') };
    } else {
      const text = transcode(body, charset);
      if (text !== undefined) return { mimeType: essence, text };
    }
  }
  return { mimeType: essence, blob: body.toString('base64') };
}

/** The lower-cased `type/subtype` and `charset` of a Content-Type, when well formed. */
export function parseContentType(value: string | undefined): {
  essence?: string;
  charset?: string;
} {
  if (value === undefined) return {};
  const [head = '', ...params] = value.split(';');
  const essence = head.trim().toLowerCase();
  if (!/^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(essence)) return {};
  for (const param of params) {
    const eq = param.indexOf('=');
    if (eq < 0 || param.slice(0, eq).trim().toLowerCase() !== 'charset') continue;
    const charset = param
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase();
    if (charset !== '') return { essence, charset };
  }
  return { essence };
}

function transcode(body: Buffer, charset: string): string | undefined {
  try {
    return new TextDecoder(charset, { fatal: true }).decode(body);
  } catch {
    return undefined;
  }
}
