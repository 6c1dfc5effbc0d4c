/**
 * MIME types and the text-or-blob decision. The bytes decide: a file is served as text when it is
 * valid UTF-8 without NUL bytes and carries no binary signature (sniff.ts), whatever its name; the
 * name gives the type unless the bytes contradict it. Everything else is a base64 blob, so binary
 * content round-trips byte for byte.
 */
import { createRequire } from 'node:module';
import { extname } from 'node:path';
import type MimeTypes from 'mime-types';
import type { ResourceContents } from '../../core/types.js';
import { looksLikeText, sniffMagic } from './sniff.js';
import { SOURCE_EXTENSIONS, SOURCE_NAMES } from './source-types.js';
import { base64Blob } from '../../core/base64-blob.js';

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
  const known = sourceNames.get(name.toLowerCase());
  if (known !== undefined) return known;
  const ext = extname(name).toLowerCase();
  if (ext === '') return undefined;
  let type = byExtension.get(ext);
  if (type === undefined) {
    const found = sourceExtensions.get(ext) ?? mime().lookup(ext);
    type = found === false ? null : found;
    // a listing meets a handful of extensions a million times; a name made of random ones stops here
    if (byExtension.size < EXTENSIONS_KEPT) byExtension.set(ext, type);
  }
  return type ?? undefined;
}

/**
 * The tables as maps: a name is data, and an object's lookup would find `constructor` or
 * `__proto__` on its prototype (a file so named broke its directory's listing).
 */
const sourceNames = new Map(Object.entries(SOURCE_NAMES));
const sourceExtensions = new Map(Object.entries(SOURCE_EXTENSIONS));

/** The type each extension met so far implies (null: none), at most EXTENSIONS_KEPT of them. */
const byExtension = new Map<string, string | null>();
const EXTENSIONS_KEPT = 1024;

export function isTextualMime(type: string): boolean {
  return (
    type.startsWith('text/') ||
    TEXTUAL_APPLICATION.has(type) ||
    type.endsWith('+json') ||
    type.endsWith('+xml') ||
    mime().charset(type) === 'UTF-8'
  );
}

export interface ContentType {
  /** The MIME type served (and listed). */
  mimeType: string;
  /** Whether the content is served as text (else a base64 blob). */
  text: boolean;
}

/**
 * What a file is, from its name and its bytes (`complete`: all of them, else its head). The bytes
 * decide text or binary; the name's type is kept unless the bytes contradict it:
 * - a known signature wins (one of printable characters only when the bytes are not text, or the
 *   name says the same type) over a textual or missing type, and over a binary one unless the
 *   signature is only a container's (ZIP, gzip, OLE, ISO-BMFF, Ogg, Matroska);
 * - text under a binary type (a text file named `.png`) is `text/plain`;
 * - bytes that are not text under a textual type stay that type, as a blob.
 */
export function contentType(name: string, bytes: Buffer, complete: boolean): ContentType {
  const declared = mimeFromName(name);
  const textual = declared !== undefined && isTextualMime(declared);
  if (bytes.length === 0)
    return { mimeType: declared ?? 'text/plain', text: declared === undefined || textual };
  const text = looksLikeText(bytes, complete);
  let magic = sniffMagic(bytes);
  // A printable signature in text counts only when the name agrees: an all-ASCII PDF named `.pdf`
  // is a PDF, a note named `.txt` that begins with `%PDF-` is text.
  if (magic?.printable === true && text && magic.mimeType !== declared) magic = undefined;
  if (magic !== undefined && (declared === undefined || textual || !magic.container))
    return { mimeType: magic.mimeType, text: false };
  if (magic !== undefined) return { mimeType: declared!, text: false };
  if (declared === undefined)
    return text ? { mimeType: 'text/plain', text } : { mimeType: 'application/octet-stream', text };
  if (text && !textual) return { mimeType: 'text/plain', text };
  return { mimeType: declared, text };
}

/**
 * Builds the one content entry for a file's bytes: text when the bytes are text, whatever the
 * name says; the type refined by the bytes when the name lies (see `contentType`).
 */
export function toContents(uri: string, name: string, bytes: Buffer): ResourceContents {
  const { mimeType, text } = contentType(name, bytes, true);
  return text
    ? { uri, mimeType, text: bytes.toString('utf8') }
    : base64Blob({ uri, mimeType }, bytes);
}
