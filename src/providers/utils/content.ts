/**
 * MIME types and the text-or-blob decision. A file is served as text only when it is valid UTF-8
 * and its type is textual (by extension, or — for unknown extensions — by sniffing its bytes);
 * everything else is a base64 blob, so binary content round-trips byte for byte.
 */
import { isUtf8 } from 'node:buffer';
import { createRequire } from 'node:module';
import { extname } from 'node:path';
import type MimeTypes from 'mime-types';
import type { ResourceContents } from '../../core/types.js';
import { SOURCE_EXTENSIONS, SOURCE_NAMES } from './source-types.js';

const TEXTUAL_APPLICATION = new Set([
  'application/json',
  'application/xml',
  'application/javascript',
  'application/ecmascript',
  'application/x-sh',
  'application/toml',
  'application/sql',
  'application/graphql',
  'application/x-httpd-php',
  'application/x-perl',
  'application/x-tex',
  'application/yaml',
  'application/x-yaml',
  'application/ld+json',
  'application/json5',
]);

/**
 * The MIME type implied by a file name, or undefined when the name says nothing (then the bytes
 * decide). Only a real extension is looked up in the MIME database: `mime-types` reads a bare name
 * as an extension, which made a script called `run` `application/x-makeself`.
 */
const requireLazily = createRequire(import.meta.url);
let mimeTypes: typeof MimeTypes | undefined;

/**
 * The MIME database, loaded when a name first needs it: `mime-types` builds its maps from all of
 * `mime-db` as it loads (~10 ms), which a server would otherwise pay before its first answer.
 */
function mime(): typeof MimeTypes {
  return (mimeTypes ??= requireLazily('mime-types') as typeof MimeTypes);
}

export function mimeFromName(name: string): string | undefined {
  const known = SOURCE_NAMES[name.toLowerCase()];
  if (known !== undefined) return known;
  const ext = extname(name).toLowerCase();
  if (ext === '') return undefined;
  const source = SOURCE_EXTENSIONS[ext];
  if (source !== undefined) return source;
  const found = mime().lookup(ext);
  return found === false ? undefined : found;
}

export function isTextualMime(type: string): boolean {
  return (
    type.startsWith('text/') ||
    TEXTUAL_APPLICATION.has(type) ||
    type.endsWith('+json') ||
    type.endsWith('+xml') ||
    mime().charset(type) === 'UTF-8'
  );
}

/** Builds the one content entry for a file's bytes. */
export function toContents(uri: string, name: string, bytes: Buffer): ResourceContents {
  const declared = mimeFromName(name);
  if (declared !== undefined) {
    if (isTextualMime(declared) && isUtf8(bytes))
      return { uri, mimeType: declared, text: bytes.toString('utf8') };
    return { uri, mimeType: declared, blob: bytes.toString('base64') };
  }
  // Unknown extension: sniff. Valid UTF-8 without NUL bytes reads as plain text.
  if (isUtf8(bytes) && !bytes.includes(0))
    return { uri, mimeType: 'text/plain', text: bytes.toString('utf8') };
  return { uri, mimeType: 'application/octet-stream', blob: bytes.toString('base64') };
}
