/**
 * `SqlProvider.query`, the entry point of the `sql_query` tool: a client's statement checked by the
 * lexical guard (guard.ts), run read-only by the dialect under the row cap, the byte budget and the
 * statement timeout, and its rows cut to what fits the result cap as JSON.
 */
import { InvalidArgumentError } from '../../core/errors.js';
import type { DatabaseCall } from './database-calls.js';
import type { Dialect } from './dialect.js';
import { checkStatement } from './guard.js';
import type { SqlQueryResult } from './public-types.js';
import type { SqlSettings } from './settings.js';
import { rowTooLarge } from './too-large.js';
import { fitRows, jsonValueRows } from './views.js';

export async function runClientStatement(
  source: { settings: SqlSettings; dialect: Dialect; call: DatabaseCall },
  sql: string,
  params: unknown[],
  options: { maxRows?: number | undefined; signal?: AbortSignal | undefined },
): Promise<SqlQueryResult> {
  const { settings, dialect, call } = source;
  const { root, kind, maxRows, timeoutMs, maxResultBytes } = settings;
  const verdict = checkStatement(sql, kind);
  if (!verdict.ok)
    throw new InvalidArgumentError(
      'sql',
      `refused: ${verdict.reason ?? 'not a read-only statement'}`,
    );
  const started = Date.now();
  const limits = {
    maxRows: Math.min(options.maxRows ?? maxRows, maxRows),
    timeoutMs,
    maxBytes: maxResultBytes,
    signal: options.signal,
  };
  const out = await call(root, () => dialect.readOnlyQuery(sql, params, limits), 'sql');
  if (out.over !== undefined && out.rows.length === 0) throw rowTooLarge(root, out.over);
  const fitted = fitRows(jsonValueRows(out.rows), maxResultBytes);
  return {
    columns: out.columns,
    rows: fitted.rows,
    rowCount: fitted.rows.length,
    truncated: out.truncated || out.over !== undefined || fitted.dropped,
    elapsedMs: Date.now() - started,
  };
}
