/**
 * Parses `db://<name>/…` URIs (already normalised by the registry) into what they name:
 *
 *   db://<name>/schema                                   the whole database's schema
 *   db://<name>/tables/<table>/schema                    one table's schema
 *   db://<name>/tables/<table>/rows[?after=&limit=&format=]   one keyset page of rows
 *   db://<name>/queries/<query>[?<param>=…]              a named query's result
 *
 * `<table>` is percent-encoded (encodeURIComponent); query values are percent-decoded. A fragment,
 * an unknown or repeated query key, or a query on a URI that takes none is an InvalidArgumentError;
 * any other shape is NotFoundError (it names nothing).
 */
import { InvalidArgumentError, NotFoundError } from '../../core/errors.js';

export type SqlTarget =
  | { kind: 'schema' }
  | { kind: 'table-schema'; table: string }
  | { kind: 'rows'; table: string; query: Map<string, string> }
  | { kind: 'query'; name: string; query: Map<string, string> };

/** The query keys a rows URI accepts. */
export const ROWS_KEYS = ['after', 'limit', 'format'] as const;

export function parseSqlUri(uri: string, root: string): SqlTarget {
  if (!uri.startsWith(root)) throw new NotFoundError(uri);
  let rest = uri.slice(root.length);
  if (rest.includes('#'))
    throw new InvalidArgumentError('uri', 'a db:// URI takes no fragment', { uri: clip(uri) });
  let query: Map<string, string> | undefined;
  const q = rest.indexOf('?');
  if (q >= 0) {
    query = parseQuery(uri, rest.slice(q + 1));
    rest = rest.slice(0, q);
  }
  const parts = rest.split('/');
  const noQuery = (): void => {
    if (query !== undefined)
      throw new InvalidArgumentError('uri', `${uri.slice(0, uri.indexOf('?'))} takes no query`, {
        uri: clip(uri),
      });
  };
  if (parts.length === 1 && parts[0] === 'schema') {
    noQuery();
    return { kind: 'schema' };
  }
  if (parts.length === 3 && parts[0] === 'tables') {
    const table = decode(parts[1]!);
    if (table === undefined || table === '') throw new NotFoundError(uri);
    if (parts[2] === 'schema') {
      noQuery();
      return { kind: 'table-schema', table };
    }
    if (parts[2] === 'rows') {
      const map = query ?? new Map<string, string>();
      for (const key of map.keys()) {
        if (!(ROWS_KEYS as readonly string[]).includes(key)) {
          throw new InvalidArgumentError(
            key,
            `unknown query key; a rows URI takes ${ROWS_KEYS.join(', ')}`,
            { uri: clip(uri) },
          );
        }
      }
      return { kind: 'rows', table, query: map };
    }
  }
  if (parts.length === 2 && parts[0] === 'queries') {
    const name = decode(parts[1]!);
    if (name === undefined || name === '') throw new NotFoundError(uri);
    return { kind: 'query', name, query: query ?? new Map() };
  }
  throw new NotFoundError(uri);
}

/** The URI of one table's resource. */
export function tableUri(root: string, table: string, what: 'schema' | 'rows'): string {
  return `${root}tables/${encodeURIComponent(table)}/${what}`;
}

/** `?k=v&…` with values percent-encoded (RFC 3986, as a URI template expands them). */
export function withQuery(
  uri: string,
  params: Record<string, string | number | undefined>,
): string {
  const pairs = Object.entries(params).filter(
    (e): e is [string, string | number] => e[1] !== undefined,
  );
  if (pairs.length === 0) return uri;
  return `${uri}?${pairs.map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`).join('&')}`;
}

function parseQuery(uri: string, text: string): Map<string, string> {
  const map = new Map<string, string>();
  if (text === '') return map;
  for (const pair of text.split('&')) {
    const eq = pair.indexOf('=');
    const key = decode(eq < 0 ? pair : pair.slice(0, eq));
    const value = eq < 0 ? '' : decode(pair.slice(eq + 1));
    if (key === undefined || key === '' || value === undefined)
      throw new InvalidArgumentError('uri', 'malformed query', { uri: clip(uri) });
    if (map.has(key))
      throw new InvalidArgumentError(key, 'given more than once', { uri: clip(uri) });
    map.set(key, value);
  }
  return map;
}

function decode(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

function clip(uri: string): string {
  return uri.length > 512 ? `${uri.slice(0, 512)}…` : uri;
}
