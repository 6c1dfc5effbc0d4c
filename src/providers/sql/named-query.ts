/**
 * Reading `db://<name>/queries/<query>?PARAM=…`: a configured named query run with its parameters
 * bound, the whole result or a too_large error (a named query's result is never cut short: its
 * parameters should narrow it).
 */
import { NotFoundError, TooLargeError } from '../../core/errors.js';
import { ownMember } from '../../core/defined.js';
import type { ReadResult } from '../../core/types.js';
import type { SqlTarget } from './address.js';
import type { DatabaseCall } from './database-calls.js';
import type { Dialect } from './dialect.js';
import { bindParameters } from './params.js';
import type { SqlSettings } from './settings.js';
import { queryOverBytes, queryOverRows } from './too-large.js';
import { jsonValueRows } from './views.js';

export async function readNamedQuery(
  source: { settings: SqlSettings; dialect: Dialect; call: DatabaseCall },
  uri: string,
  target: Extract<SqlTarget, { kind: 'query' }>,
  signal: AbortSignal,
): Promise<ReadResult> {
  const { settings, dialect, call } = source;
  const { queries, maxRows, timeoutMs, maxResultBytes } = settings;
  const query = ownMember(queries, target.name);
  if (query === undefined) throw new NotFoundError(uri);
  const { values, shown } = bindParameters(target.name, query, target.query);
  const out = await call(
    uri,
    () =>
      dialect.namedQuery(query.sql, values, {
        maxRows,
        timeoutMs,
        maxBytes: maxResultBytes,
        signal,
      }),
    'query',
  );
  if (out.over !== undefined) throw queryOverBytes(uri, out.over, maxResultBytes);
  if (out.truncated) throw queryOverRows(uri, maxRows);
  const rows = jsonValueRows(out.rows);
  const text = JSON.stringify({
    query: target.name,
    params: shown,
    columns: out.columns,
    rows,
    rowCount: rows.length,
  });
  const size = Buffer.byteLength(text);
  if (size > maxResultBytes) throw new TooLargeError(uri, size, maxResultBytes, 'result');
  return { contents: [{ uri, mimeType: 'application/json', text }] };
}
