/**
 * The filters of a search — `path:`, `mime:`, `source:` in the query, and the `under`, `mimeType`
 * and `source` arguments — as SQL over the `docs` table (alias `d`). Filters of one kind mean any
 * of them; different kinds must all hold.
 */
import { InvalidArgumentError, isReservoirError } from '../core/errors.js';
import type { Provider } from '../core/types.js';
import { parseUri } from '../core/uri.js';
import type { ParsedQuery } from './query.js';
import { sourceName } from './sources.js';

export interface FilterRequest {
  under?: string | undefined;
  mimeType?: string | undefined;
  source?: string | undefined;
}

interface Clause {
  sql: string;
  params: unknown[];
}

/** `AND (…)` clauses and their parameters; empty when nothing filters. */
export function documentFilters(
  parsed: ParsedQuery,
  request: FilterRequest,
  mounts: readonly Provider[],
): Clause {
  const clauses: string[] = [];
  const params: unknown[] = [];
  const anyOf = (parts: Clause[]): void => {
    clauses.push(`AND (${parts.map((p) => p.sql).join(' OR ')})`);
    for (const p of parts) params.push(...p.params);
  };
  const sourceRoots = (name: string): Clause[] => {
    const roots = mounts
      .filter((m) => sourceName(m) === name || m.root === name)
      .map((m) => m.root);
    if (roots.length === 0) {
      const known = mounts.map((m) => JSON.stringify(sourceName(m))).join(', ') || 'none';
      throw new InvalidArgumentError(
        'source',
        `no indexed source is named ${JSON.stringify(name)}; the indexed sources are ${known}`,
        { source: name },
      );
    }
    return roots.map((root) => ({ sql: 'd.mount = ?', params: [root] }));
  };

  if (parsed.filters.path.length > 0) {
    // A path is relative to each source's root; its segments are percent-encoded as URIs are.
    const encoded = (path: string): string =>
      path.replace(/^\/+/, '').split('/').map(encodeURIComponent).join('/');
    anyOf(
      parsed.filters.path.flatMap((path) =>
        mounts.map((m) => prefix(new URL(encoded(path), m.root).href)),
      ),
    );
  }
  if (parsed.filters.mime.length > 0) anyOf(parsed.filters.mime.map(mime));
  if (request.mimeType !== undefined) anyOf([mime(request.mimeType)]);
  if (parsed.filters.source.length > 0) anyOf(parsed.filters.source.flatMap(sourceRoots));
  if (request.source !== undefined) anyOf(sourceRoots(request.source));
  if (request.under !== undefined) {
    let href: string;
    try {
      href = parseUri(request.under).href;
    } catch (error) {
      if (isReservoirError(error))
        throw new InvalidArgumentError(
          'under',
          `${error.message}; pass an absolute URI prefix such as a directory URI`,
          { under: request.under },
        );
      throw error;
    }
    anyOf([prefix(href)]);
  }
  return { sql: clauses.join(' '), params };
}

/** URIs starting with `uri`: a range on the unique index. */
function prefix(uri: string): Clause {
  return { sql: '(d.uri >= ? AND d.uri < ?)', params: [uri, `${uri}\u{10FFFF}`] };
}

/** A MIME type, or a family (`text/*`), case-insensitively. */
function mime(value: string): Clause {
  const lower = value.toLowerCase();
  if (!lower.endsWith('/*')) return { sql: 'lower(d.mime) = ?', params: [lower] };
  return {
    sql: "lower(d.mime) LIKE ? ESCAPE '\\'",
    params: [`${lower.slice(0, -1).replace(/[%_\\]/g, '\\$&')}%`],
  };
}
