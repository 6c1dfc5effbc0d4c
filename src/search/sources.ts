/**
 * Which mounted sources the index covers, and the names `source:NAME` filters use: a source's name
 * is its URI authority (`git://NAME/`, `db://NAME/`, `api://NAME/`) or, for a files root, the last
 * segment of its path (`file:///srv/docs/` is `docs`).
 */
import { createHash } from 'node:crypto';
import type { Provider } from '../core/types.js';

/** Source types indexed unless the config names the sources to index. */
export const DEFAULT_INDEXED = ['files', 'git'] as const;

export function sourceName(provider: Provider): string {
  const url = new URL(provider.root);
  if (url.host !== '') return decodeURIComponent(url.host);
  const segments = url.pathname.split('/').filter((s) => s !== '');
  return segments.length === 0 ? '/' : decodeURIComponent(segments[segments.length - 1]!);
}

/** The mounts to index: those named in `sources` (by name or root URI), or every files and git source. */
export function indexedMounts(
  providers: readonly Provider[],
  sources: readonly string[] | undefined,
): Provider[] {
  if (sources === undefined)
    return providers.filter((p) => (DEFAULT_INDEXED as readonly string[]).includes(p.name));
  return providers.filter((p) => sources.includes(sourceName(p)) || sources.includes(p.root));
}

/** A short name for one index file: a hash of what shapes its contents. */
export function indexKey(mounts: readonly Provider[], shape: unknown): string {
  const roots = mounts.map((m) => m.root).sort();
  return createHash('sha256')
    .update(JSON.stringify([roots, shape]))
    .digest('hex')
    .slice(0, 16);
}
