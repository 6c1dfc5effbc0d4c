/**
 * git:// URIs: building them, parsing them, and the checks every client-supplied ref and path pass
 * before anything reaches git.
 *
 *   git://<repo>/<ref>/<path>               a file at a ref (branch, tag, commit id, HEAD)
 *   git://<repo>/<ref>/<path>?lines=A-B      part of it: lines (or `-N`, the last N) or
 *   git://<repo>/<ref>/<path>?bytes=A-B      bytes, by the shared parser (utils/ranges.ts)
 *   git://<repo>/log/<ref>[/<path>][?limit=N]  history, newest first
 *   git://<repo>/commits/<sha>              one commit: metadata, changed files, diff
 *
 * `<ref>` is ONE path segment, percent-encoded as a URI component: `feature/x` is `feature%2Fx`
 * (an unencoded `/` ends the ref). `<path>` is percent-encoded segment by segment. A ref named
 * `log` or `commits` is written by its full name (`refs%2Fheads%2Flog`), since those first
 * segments name the views.
 *
 * A ref or path that could never name a servable file — or that looks like an option, a revision
 * expression or a traversal — is refused exactly like a missing resource (NotFoundError): it names
 * nothing, and saying more would be an oracle. A malformed query (`?limit=abc`) is an
 * InvalidArgumentError, since the resource itself may exist.
 */
import { isUtf8 } from 'node:buffer';
import { InvalidArgumentError, NotFoundError } from '../../core/errors.js';
import { partQuery, type Part } from '../utils/ranges.js';

export type GitTarget =
  | { kind: 'file'; ref: string; path: string; part: Part }
  | { kind: 'log'; ref: string; path: string | undefined; limit: number | undefined }
  | { kind: 'commit'; sha: string };

/** The first segments that name a view, not a ref. */
export const VIEW_SEGMENTS: ReadonlySet<string> = new Set(['log', 'commits']);
/** Longest ref accepted. */
const MAX_REF_LENGTH = 1024;
/** Longest path accepted (PATH_MAX). */
const MAX_PATH_LENGTH = 4096;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** Characters git forbids in ref names, plus the space. */
const REF_FORBIDDEN = /[\s~^:?*[\\]/;
export const HEX_ID = /^[0-9a-f]{4,64}$/;

/**
 * Whether `ref` may be resolved: git's ref-name rules (no `..`, `@{`, `~^:?*[\`, spaces or control
 * characters; no empty, dot-leading or `.lock` components; not `@`, not ending in `/` or `.`) plus
 * ours: never starting with `-` (option-like), at most 1024 characters.
 */
export function isValidRef(ref: string): boolean {
  if (ref.length === 0 || ref.length > MAX_REF_LENGTH || ref === '@') return false;
  if (ref.startsWith('-') || ref.startsWith('/') || ref.endsWith('/') || ref.endsWith('.'))
    return false;
  if (CONTROL.test(ref) || REF_FORBIDDEN.test(ref) || ref.includes('..') || ref.includes('@{'))
    return false;
  return ref
    .split('/')
    .every((part) => part !== '' && !part.startsWith('.') && !part.endsWith('.lock'));
}

/**
 * Whether a path (relative to the tree root, '/'-joined) is served: non-empty components, none `.`
 * or `..`, no control characters, no `@{`, not starting with `-`, at most 4096 characters. A file
 * whose path fails this is neither listed nor readable.
 */
export function isServablePath(path: string): boolean {
  if (path.length === 0 || path.length > MAX_PATH_LENGTH || path.startsWith('-')) return false;
  if (CONTROL.test(path) || path.includes('@{')) return false;
  return path.split('/').every((part) => part !== '' && part !== '.' && part !== '..');
}

/** The URI segment for a ref name (a branch or tag called `log` or `commits` goes by its full name). */
export function refSegment(ref: string, kind: 'heads' | 'tags' = 'heads'): string {
  return encodeURIComponent(VIEW_SEGMENTS.has(ref) ? `refs/${kind}/${ref}` : ref);
}

export function encodePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}

export function fileUri(root: string, refSeg: string, path: string): string {
  return `${root}${refSeg}/${encodePath(path)}`;
}

export function commitUri(root: string, sha: string): string {
  return `${root}commits/${sha}`;
}

/** Parses a normalised href under `root` (which ends in '/'). */
export function parseGitUri(root: string, href: string): GitTarget {
  if (!href.startsWith(root)) throw new NotFoundError(href);
  let rest = href.slice(root.length);
  let query: string | undefined;
  const hash = rest.indexOf('#');
  if (hash >= 0)
    throw new InvalidArgumentError('uri', 'a git URI takes no fragment', { uri: clip(href) });
  const mark = rest.indexOf('?');
  if (mark >= 0) {
    query = rest.slice(mark + 1);
    rest = rest.slice(0, mark);
  }
  const segments = rest.split('/');
  const first = segments[0] ?? '';
  if (first === 'commits' && segments.length === 2) {
    if (query !== undefined) throw noQuery(href, 'a commit URI');
    const sha = segments[1]!;
    if (!HEX_ID.test(sha)) throw new NotFoundError(href);
    return { kind: 'commit', sha };
  }
  if (first === 'log' && segments.length >= 2) {
    const ref = decodeRef(segments[1]!, href);
    const path = segments.length === 2 ? undefined : decodePath(segments.slice(2), href);
    return { kind: 'log', ref, path, limit: parseLimit(query, href) };
  }
  if (VIEW_SEGMENTS.has(first) || segments.length < 2) throw new NotFoundError(href);
  // The query is judged first: what it says is wrong does not depend on what the path names.
  const part = partQuery(query, href, ['lines', 'bytes']);
  return {
    kind: 'file',
    ref: decodeRef(first, href),
    path: decodePath(segments.slice(1), href),
    part,
  };
}

/**
 * A directory URI under `root`: `git://<repo>/<ref>/` (the tree's root) or `…/<ref>/<dir>/`. The
 * ref segment is kept as written, so children are named under the same spelling.
 */
export function parseGitDirectory(
  root: string,
  href: string,
): { ref: string; refSegment: string; path: string } {
  if (!href.startsWith(root) || !href.endsWith('/') || /[?#]/.test(href))
    throw new NotFoundError(href);
  const segments = href.slice(root.length, -1).split('/');
  const first = segments[0] ?? '';
  if (first === '' || VIEW_SEGMENTS.has(first)) throw new NotFoundError(href);
  const ref = decodeRef(first, href);
  return {
    ref,
    refSegment: first,
    path: segments.length === 1 ? '' : decodePath(segments.slice(1), href),
  };
}

function decodeRef(segment: string, href: string): string {
  const ref = decode(segment, href);
  if (!isValidRef(ref)) throw new NotFoundError(href);
  return ref;
}

function decodePath(segments: string[], href: string): string {
  const parts = segments.map((s) => decode(s, href));
  // An encoded '/' inside one segment would alias another path: refused.
  if (parts.some((p) => p.includes('/'))) throw new NotFoundError(href);
  const path = parts.join('/');
  if (!isServablePath(path)) throw new NotFoundError(href);
  return path;
}

function decode(segment: string, href: string): string {
  let bytes: Buffer;
  try {
    // decodeURIComponent accepts only UTF-8; say so explicitly for the byte form too.
    const text = decodeURIComponent(segment);
    bytes = Buffer.from(text, 'utf8');
    if (!isUtf8(bytes)) throw new Error('not UTF-8');
    return text;
  } catch {
    throw new NotFoundError(href);
  }
}

/** `limit=N` (the only query a history view takes), or undefined without a query. */
function parseLimit(query: string | undefined, href: string): number | undefined {
  if (query === undefined) return undefined;
  const match = /^limit=([^&]*)$/.exec(query);
  if (match === null) {
    throw new InvalidArgumentError(
      'uri',
      'a history URI takes one query parameter, limit (e.g. ?limit=20)',
      { uri: clip(href) },
    );
  }
  const value = match[1]!;
  if (!/^\d+$/.test(value) || Number(value) < 1) {
    throw new InvalidArgumentError('limit', 'expected a whole number of commits from 1', {
      value: value.slice(0, 64),
    });
  }
  // Any number of digits: one too large is refused by the source's own cap, saying what it is.
  return Math.min(Number(value), Number.MAX_SAFE_INTEGER);
}

function noQuery(href: string, what: string): InvalidArgumentError {
  return new InvalidArgumentError('uri', `${what} takes no query`, { uri: clip(href) });
}

function clip(uri: string): string {
  return uri.length > 512 ? `${uri.slice(0, 512)}…` : uri;
}
