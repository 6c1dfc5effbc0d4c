/**
 * MIME types and the text-or-blob decision. A file is served as text only when it is valid UTF-8
 * and its type is textual (by extension, or — for unknown extensions — by sniffing its bytes);
 * everything else is a base64 blob, so binary content round-trips byte for byte.
 */
import { isUtf8 } from 'node:buffer';
import { extname } from 'node:path';
import mime from 'mime-types';
import type { ResourceContents } from '../../core/types.js';

/** Source extensions the MIME database lacks or gets wrong (`.ts` is not MPEG transport stream here). */
const OVERRIDES: Record<string, string> = {
  '.ts': 'text/x-typescript',
  '.mts': 'text/x-typescript',
  '.cts': 'text/x-typescript',
  '.tsx': 'text/tsx',
  '.rs': 'text/x-rust',
  '.py': 'text/x-python',
  '.go': 'text/x-go',
  '.rb': 'text/x-ruby',
  '.kt': 'text/x-kotlin',
  '.swift': 'text/x-swift',
  '.cs': 'text/x-csharp',
  '.scala': 'text/x-scala',
  '.hs': 'text/x-haskell',
  '.vue': 'text/x-vue',
  '.proto': 'text/x-protobuf',
  '.graphql': 'application/graphql',
  '.jsonc': 'application/json',
  '.env': 'text/plain',
  '.cfg': 'text/plain',
  '.lock': 'text/plain',
};

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
]);

/** The MIME type implied by a file name, or undefined when the name says nothing. */
export function mimeFromName(name: string): string | undefined {
  const ext = extname(name).toLowerCase();
  const override = OVERRIDES[ext];
  if (override !== undefined) return override;
  const found = mime.lookup(name);
  return found === false ? undefined : found;
}

export function isTextualMime(type: string): boolean {
  return (
    type.startsWith('text/') ||
    TEXTUAL_APPLICATION.has(type) ||
    type.endsWith('+json') ||
    type.endsWith('+xml') ||
    mime.charset(type) === 'UTF-8'
  );
}

/** Builds the one content entry for a file's bytes. */
export function toContents(uri: string, name: string, bytes: Buffer): ResourceContents {
  const declared = mimeFromName(name);
  if (declared !== undefined) {
    if (isTextualMime(declared) && isUtf8(bytes)) return { uri, mimeType: declared, text: bytes.toString('utf8') };
    return { uri, mimeType: declared, blob: bytes.toString('base64') };
  }
  // Unknown extension: sniff. Valid UTF-8 without NUL bytes reads as plain text.
  if (isUtf8(bytes) && !bytes.includes(0)) return { uri, mimeType: 'text/plain', text: bytes.toString('utf8') };
  return { uri, mimeType: 'application/octet-stream', blob: bytes.toString('base64') };
}
