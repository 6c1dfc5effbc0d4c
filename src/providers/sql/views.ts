/**
 * The JSON (and CSV) documents the SQL provider serves. Shapes are documented in
 * docs/providers/sql.md; every value goes through `toJsonValue` (safe integers as numbers, larger
 * ones and decimals as strings, bytes as `{ "$base64": … }`, dates and times as the database
 * prints them).
 */
import { definedProps } from '../../core/defined.js';
import { tableUri } from './address.js';
import { INTERNAL_COLUMNS, rowObject, toJsonValue, type TableInfo } from './dialect.js';
import type { NamedQuery } from './options.js';

export interface TableDocument {
  name: string;
  schemaUri: string;
  rowsUri: string;
  columns: TableInfo['columns'];
  primaryKey: string[];
  /** The columns rows are paged by; null when the table has no stable key (first page only). */
  pageKey: string[] | null;
  indexes: TableInfo['indexes'];
  foreignKeys: TableInfo['foreignKeys'];
  estimatedRows?: number;
}

export function tableDocument(root: string, table: TableInfo): TableDocument {
  return {
    name: table.name,
    schemaUri: tableUri(root, table.name, 'schema'),
    rowsUri: tableUri(root, table.name, 'rows'),
    columns: table.columns,
    primaryKey: table.primaryKey,
    pageKey:
      table.pageKey.length === 0 ? null : table.hiddenKey === true ? ['rowid'] : table.pageKey,
    indexes: table.indexes,
    foreignKeys: table.foreignKeys,
    ...definedProps({ estimatedRows: table.estimatedRows }),
  };
}

export function schemaDocument(
  root: string,
  meta: { name: string; dialect: string; schema?: string | undefined },
  tables: TableInfo[],
  queries: Record<string, NamedQuery>,
): Record<string, unknown> {
  return {
    name: meta.name,
    dialect: meta.dialect,
    ...definedProps({ schema: meta.schema }),
    tables: tables.map((t) => tableDocument(root, t)),
    queries: Object.entries(queries).map(([name, q]) => ({
      name,
      uriTemplate: queryTemplate(root, name, q),
      ...definedProps({ description: q.description }),
      params: (q.params ?? []).map((p) => ({
        name: p.name,
        type: p.type ?? 'string',
        required: p.required ?? p.default === undefined,
        ...definedProps({ values: p.values }),
      })),
    })),
  };
}

export function queryTemplate(root: string, name: string, query: NamedQuery): string {
  const params = (query.params ?? []).map((p) => p.name);
  return `${root}queries/${name}${params.length === 0 ? '' : `{?${params.join(',')}}`}`;
}

export interface RowsDocument {
  table: string;
  pageKey: string[] | null;
  columns: string[];
  rows: Record<string, unknown>[];
  count: number;
  limit: number;
  /** The next page's URI; null on the last page. */
  next: string | null;
  /** Present when the table has no stable key: only a first page can be shown. */
  note?: string;
}

/** Rows as JSON objects, without the columns a dialect adds for itself (INTERNAL_COLUMNS). */
export function jsonRows(rows: Record<string, unknown>[]): Record<string, unknown>[] {
  return rows.map((row) => (isJsonRow(row) ? row : toJsonRow(row)));
}

/**
 * A statement's rows with every value as JSON has it (toJsonValue), converted where they stand: the
 * rows are the caller's own (a dialect's answer), and most values need nothing, so no row is copied.
 */
export function jsonValueRows(rows: unknown[][]): unknown[][] {
  for (const row of rows)
    for (let i = 0; i < row.length; i += 1) {
      const value = row[i];
      const json = toJsonValue(value);
      if (json !== value) row[i] = json;
    }
  return rows;
}

/** Whether `row` is already what jsonRows makes of it (no internal column, every value as JSON has it): kept, not copied. */
function isJsonRow(row: Record<string, unknown>): boolean {
  for (const k in row) {
    const value = row[k];
    if (INTERNAL_COLUMNS.has(k) || toJsonValue(value) !== value) return false;
  }
  return true;
}

/** `row`'s columns as JSON has them, in a row built as rowObject builds one (`__proto__` a column). */
function toJsonRow(row: Record<string, unknown>): Record<string, unknown> {
  const names: string[] = [];
  const values: unknown[] = [];
  for (const k in row)
    if (!INTERNAL_COLUMNS.has(k)) {
      names.push(k);
      values.push(toJsonValue(row[k]));
    }
  return rowObject(names, values);
}

/** RFC 4180 CSV: a header line, CRLF line ends, fields quoted when they need it; null is empty. */
export function toCsv(columns: string[], rows: unknown[][]): string {
  const field = (value: unknown): string => {
    const json = toJsonValue(value);
    if (json === null) return '';
    const text =
      typeof json === 'string'
        ? json
        : typeof json === 'object'
          ? JSON.stringify(json)
          : String(json);
    return /[",\r\n]/.test(text) || text === '' ? `"${text.replaceAll('"', '""')}"` : text;
  };
  const lines = [columns.map(field), ...rows.map((r) => r.map(field))].map((cells) =>
    cells.join(','),
  );
  return `${lines.join('\r\n')}\r\n`;
}

/** Keeps leading rows while their JSON fits `budget` bytes; says whether any were dropped. */
export function fitRows<T>(rows: T[], budget: number): { rows: T[]; dropped: boolean } {
  // The rows' JSON as one array is the sum below at its end less one: when the whole fits, no row
  // is measured alone; and when a bound on it fits (most answers), it is not even serialised.
  if (
    rows.length === 0 ||
    jsonBytesAtMost(rows, budget) + 1 <= budget ||
    Buffer.byteLength(JSON.stringify(rows)) + 1 <= budget
  )
    return { rows, dropped: false };
  let used = 2;
  for (let i = 0; i < rows.length; i += 1) {
    used += Buffer.byteLength(JSON.stringify(rows[i])) + 1;
    if (used > budget) return { rows: rows.slice(0, i), dropped: true };
  }
  return { rows, dropped: false };
}

/**
 * An upper bound on the UTF-8 bytes of `value`'s JSON, counted without serialising it: a string's
 * UTF-16 unit is at most 6 bytes (`\uXXXX`), a finite number at most 24 characters. Past `limit`,
 * or at a value it does not bound (an object other than an array), it answers Infinity: measure
 * exactly instead.
 */
export function jsonBytesAtMost(value: unknown, limit: number): number {
  if (value === null || value === true || value === false) return 5;
  switch (typeof value) {
    case 'string':
      return 6 * value.length + 2;
    case 'number':
      return 24;
    case 'object':
      break;
    default:
      return Infinity;
  }
  if (!Array.isArray(value)) return Infinity;
  let bytes = 2 + value.length;
  for (const item of value as unknown[]) {
    bytes += jsonBytesAtMost(item, limit);
    if (bytes > limit) return Infinity;
  }
  return bytes;
}
