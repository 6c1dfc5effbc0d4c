/**
 * Reading `db://<name>/tables/<table>/rows[?after=…&limit=…&format=json|csv]`: one keyset page of a
 * table's rows, ended by the row limit or the byte budget, whichever comes first, with the URI of
 * the next page (null on the last, and for a table without a stable key, which has one page only).
 */
import { InvalidArgumentError, NotFoundError } from '../../core/errors.js';
import type { ReadResult } from '../../core/types.js';
import { tableUri, withQuery, type SqlTarget } from './address.js';
import type { DatabaseCall } from './database-calls.js';
import { decodeKey, encodeKey, type Dialect, type RowsPage, type TableInfo } from './dialect.js';
import type { SchemaCache } from './schema-cache.js';
import type { SqlSettings } from './settings.js';
import { rowTooLarge } from './too-large.js';
import { jsonRows, tableDocument, toCsv, type RowsDocument } from './views.js';

export interface RowsReader {
  settings: SqlSettings;
  dialect: Dialect;
  call: DatabaseCall;
  schema: SchemaCache;
}

export async function readRows(
  source: RowsReader,
  uri: string,
  target: Extract<SqlTarget, { kind: 'rows' }>,
  signal: AbortSignal,
): Promise<ReadResult> {
  const { settings, dialect, call, schema } = source;
  const { root, pageRows, maxRows, maxResultBytes } = settings;
  const limit = parseLimit(target.query.get('limit'), pageRows, maxRows);
  const format = target.query.get('format') ?? 'json';
  if (format !== 'json' && format !== 'csv')
    throw new InvalidArgumentError('format', 'expected json or csv', { value: format });
  let info = await schema.table(uri, target.table);
  const after = pagePosition(info, target.query.get('after'));
  const pageOf = (t: TableInfo) =>
    call(
      uri,
      () => dialect.rowsPage(t, after, { limit: limit + 1, maxBytes: maxResultBytes, signal }),
      'after',
    );
  let page: RowsPage;
  try {
    page = await pageOf(info);
  } catch (error) {
    // The columns changed since the schema was read (it was dropped just now): read it again, once.
    if (!(error instanceof NotFoundError)) throw error;
    const fresh = await schema.table(uri, target.table);
    if (fresh.pageKey.join('\0') !== info.pageKey.join('\0')) throw error;
    info = fresh;
    page = await pageOf(info);
  }
  if (page.over !== undefined && page.rows.length === 0) throw rowTooLarge(uri, page.over);
  // A page ends at the row cap or where the byte budget does, whichever comes first.
  const more = page.rows.length > limit || page.over !== undefined;
  const rows = page.rows.length > limit ? page.rows.slice(0, limit) : page.rows;
  const next =
    more && info.pageKey.length > 0
      ? withQuery(tableUri(root, info.name, 'rows'), {
          after: encodeKey(page.keys[rows.length - 1]!),
          limit: limit === pageRows ? undefined : limit,
          format: format === 'csv' ? 'csv' : undefined,
        })
      : null;
  const columns = info.columns.map((c) => c.name);
  if (format === 'csv') {
    const csv = toCsv(
      columns,
      rows.map((r) => columns.map((c) => r[c])),
    );
    const meta = JSON.stringify({ table: info.name, count: rows.length, next });
    return {
      contents: [
        { uri, mimeType: 'text/csv', text: csv },
        { uri, mimeType: 'application/json', text: meta },
      ],
    };
  }
  const document: RowsDocument = {
    table: info.name,
    pageKey: tableDocument(root, info).pageKey,
    columns,
    rows: jsonRows(rows),
    count: rows.length,
    limit,
    next,
  };
  if (info.pageKey.length === 0 && more)
    document.note = `${info.name} has no primary key or non-null unique index: only a first page can be read; use a named query or sql_query for more`;
  return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(document) }] };
}

/** The page key values `?after=` names, checked against the table; undefined for the first page. */
function pagePosition(info: TableInfo, position: string | undefined): unknown[] | undefined {
  if (position === undefined) return undefined;
  if (info.pageKey.length === 0)
    throw new InvalidArgumentError(
      'after',
      `table ${info.name} has no primary key or non-null unique index, so only its first page can be read`,
    );
  const after = decodeKey(position, info.pageKey.length);
  if (after === undefined)
    throw new InvalidArgumentError(
      'after',
      'not a position this table’s pages produced; start again from the first page',
      { value: position.slice(0, 64) },
    );
  return after;
}

function parseLimit(raw: string | undefined, fallback: number, max: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d{1,6}$/.test(raw) || Number(raw) < 1 || Number(raw) > max) {
    throw new InvalidArgumentError(
      'limit',
      `expected a whole number of rows from 1 to ${max} (the row cap)`,
      { value: raw.slice(0, 32), max },
    );
  }
  return Number(raw);
}
