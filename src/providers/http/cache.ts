/**
 * The provider's response cache: upstream URL → the content last served, with its validators and
 * freshness, bounded in bytes (least recently used first out).
 *
 * HTTP semantics honoured, for a cache keyed by URL whose requests all carry the same configured
 * credentials (so `private` responses are cacheable here: every client sees the same upstream user):
 *   - `no-store` (or `Vary: *`): never stored, and any stored copy is dropped;
 *   - `max-age=N` (less the `Age` header), else `Expires` − `Date`: served without a request while
 *     fresh; `no-cache` makes it 0;
 *   - stale entries with an `ETag` or `Last-Modified` are revalidated (`If-None-Match`,
 *     `If-Modified-Since`; a 304 serves the stored body and refreshes the freshness); stale entries
 *     without validators are not kept — there is nothing to revalidate with.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { BoundedCache } from '../utils/bounded-cache.js';

export interface CachedContent {
  mimeType: string;
  text?: string;
  blob?: string;
}

export interface CacheEntry {
  content: CachedContent;
  etag?: string | undefined;
  lastModified?: string | undefined;
  /** Epoch ms until which the entry is served without asking upstream. */
  freshUntil: number;
  /** Accounted size: body bytes (base64 size for blobs) plus a fixed overhead. */
  bytes: number;
}

/** What a response's headers say about storing it. */
export interface Freshness {
  store: boolean;
  freshUntil: number;
}

const ENTRY_OVERHEAD = 512;

export function freshness(headers: IncomingHttpHeaders, now: number): Freshness {
  const directives = parseCacheControl(headers['cache-control']);
  if (directives.has('no-store') || String(headers.vary ?? '').trim() === '*')
    return { store: false, freshUntil: now };
  let lifetimeMs = 0;
  const maxAge = directives.get('max-age');
  if (maxAge !== undefined && /^\d+$/.test(maxAge)) {
    const age = Number(headers.age);
    lifetimeMs = Math.max(0, Number(maxAge) - (Number.isFinite(age) && age > 0 ? age : 0)) * 1000;
  } else if (headers.expires !== undefined) {
    const expires = Date.parse(headers.expires);
    const date = headers.date === undefined ? now : Date.parse(headers.date);
    if (Number.isFinite(expires) && Number.isFinite(date)) lifetimeMs = Math.max(0, expires - date);
  }
  if (directives.has('no-cache')) lifetimeMs = 0;
  const validators = headers.etag !== undefined || headers['last-modified'] !== undefined;
  return { store: validators || lifetimeMs > 0, freshUntil: now + lifetimeMs };
}

/** `Cache-Control` directives, lower-cased, with unquoted values. */
export function parseCacheControl(value: string | string[] | undefined): Map<string, string> {
  const out = new Map<string, string>();
  const text = Array.isArray(value) ? value.join(',') : (value ?? '');
  for (const part of text.split(',')) {
    const eq = part.indexOf('=');
    const name = (eq < 0 ? part : part.slice(0, eq)).trim().toLowerCase();
    if (name === '') continue;
    const raw = eq < 0 ? '' : part.slice(eq + 1).trim();
    out.set(
      name,
      raw.startsWith('"') && raw.endsWith('"') && raw.length >= 2 ? raw.slice(1, -1) : raw,
    );
  }
  return out;
}

export function entrySize(content: CachedContent, key: string): number {
  return (
    ENTRY_OVERHEAD + key.length + (content.text?.length ?? 0) * 2 + (content.blob?.length ?? 0)
  );
}

/** A byte-bounded LRU map of cache entries. */
export class ResponseCache extends BoundedCache<CacheEntry> {}
