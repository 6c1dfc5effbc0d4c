/**
 * s3:// URIs: `s3://BUCKET/KEY`, the key percent-encoded segment by segment (every byte but
 * RFC 3986 unreserved characters), so every key S3 allows — spaces, `#`, `%`, `?`, unicode, empty
 * segments (`a//b`) — round-trips. A URI ending in `/` names a prefix (a directory-style read);
 * `?bytes=START-END` selects a byte range of an object (the range template). Any other spelling
 * the parser accepts (lower-case or needless escapes) names the same resource: `canonicalUri`.
 */
import { InvalidUriError } from '../../core/errors.js';
import { hasDotSegment } from '../utils/path-segments.js';
import { partQuery, type ByteRange } from '../utils/ranges.js';

/** What an s3:// URI names. */
export interface S3Target {
  /** The object key, or the prefix (ending in '/', or '' for the bucket's root) of a directory read. */
  key: string;
  directory: boolean;
  /** `?bytes=START-END` (END inclusive, optional). */
  range?: ByteRange;
}

/** A key that needs no escape: unreserved characters and '/' only (most keys a listing meets). */
const PLAIN_KEY = /^[A-Za-z0-9\-._~/]*$/;

/** Encodes one key as a URI path: each '/'-separated segment percent-encoded. */
export function encodeKey(key: string): string {
  if (PLAIN_KEY.test(key)) return key;
  return key
    .split('/')
    .map((segment) =>
      encodeURIComponent(segment).replace(
        /[!'()*]/g,
        (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
      ),
    )
    .join('/');
}

/**
 * Whether a key can be named by a URI at all: a `.` or `..` segment (even escaped as `%2E`) is
 * folded away by URI normalisation (RFC 3986 §6.2.2.3) before any provider sees the URI, and a
 * store or proxy in front of it may fold one it receives (`..%2F`, `%252e%252e`, `..\`, overlong
 * UTF-8: see utils/path-segments.ts) out of the source's prefix. Such keys are never sent to the
 * store — `parseS3Uri` refuses them — and are left out of lists, prefix reads and completion.
 */
export function isAddressableKey(key: string): boolean {
  return !hasDotSegment(key);
}

/** The URI prefix of a bucket (and key prefix). */
export function rootUri(bucket: string, prefix: string): string {
  return `s3://${bucket}/${encodeKey(prefix)}`;
}

/** The URI of an object key or (ending in '/') a prefix. */
export function keyUri(bucket: string, key: string): string {
  return `s3://${bucket}/${encodeKey(key)}`;
}

/** Parses a URI of this bucket; throws InvalidUriError for a malformed one. */
export function parseS3Uri(bucket: string, uri: string): S3Target {
  const head = `s3://${bucket}/`;
  if (!uri.startsWith(head)) throw new InvalidUriError(uri, `not in bucket ${bucket}`);
  const rest = uri.slice(head.length);
  const hash = rest.indexOf('#');
  if (hash >= 0)
    throw new InvalidUriError(uri, "a fragment ('#') is not part of a key; write it as %23");
  const q = rest.indexOf('?');
  const path = q < 0 ? rest : rest.slice(0, q);
  let key: string;
  try {
    key = path
      .split('/')
      .map((segment) => decodeURIComponent(segment))
      .join('/');
  } catch {
    throw new InvalidUriError(uri, 'malformed percent-encoding in the key');
  }
  if (Buffer.byteLength(key) > 1024)
    throw new InvalidUriError(uri, 'an S3 key is at most 1024 bytes');
  if (!isAddressableKey(key))
    throw new InvalidUriError(
      uri,
      "a key segment may not be '.' or '..' in any spelling (%2e, ..%2F, %252e, '\\', overlong UTF-8), which a store could resolve outside the source's prefix",
    );
  const directory = key === '' || key.endsWith('/');
  const target: S3Target = { key, directory };
  if (q >= 0) {
    // The shared parser of partial reads (utils/ranges.ts): one `bytes`, nothing else.
    const part = partQuery(rest.slice(q + 1), uri, ['bytes']);
    if (part.kind === 'bytes') {
      if (directory)
        throw new InvalidUriError(uri, '?bytes= selects a range of an object, not of a prefix');
      target.range = part.range;
    }
  }
  return target;
}
