/**
 * The one small interface every database implements (sqlite.ts, postgres.ts, mysql.ts), the schema
 * shapes they introspect into, and the value encodings they share: JSON-safe row values and opaque
 * keyset positions.
 */
import { definedProps } from '../../core/defined.js';
import { ProviderFailure, type FailureKind as ProviderFailureKind } from '../utils/errors.js';
import type { OverBudget } from './budget.js';

export interface ColumnInfo {
  name: string;
  /** The declared type, as the database prints it. */
  type: string;
  nullable: boolean;
  default?: string;
}

export interface IndexInfo {
  name: string;
  columns: string[];
  unique: boolean;
  primary: boolean;
  /** The index definition, when the database keeps one (partial and expression indexes show here). */
  definition?: string;
}

export interface ForeignKeyInfo {
  columns: string[];
  table: string;
  references: string[];
}

export interface TableInfo {
  name: string;
  columns: ColumnInfo[];
  primaryKey: string[];
  /**
   * The columns rows are paged by, in order: the primary key, else a unique index over non-null
   * columns, else (SQLite) the hidden rowid as `['rowid']` with `hiddenKey`. Empty: no stable key.
   */
  pageKey: string[];
  /** The page key is the hidden rowid (SQLite), selected under an alias and not shown in rows. */
  hiddenKey?: boolean;
  indexes: IndexInfo[];
  foreignKeys: ForeignKeyInfo[];
  /** The planner's estimate of the row count, when the database keeps one. */
  estimatedRows?: number;
  /** The table's comment (PostgreSQL `COMMENT ON TABLE`, MySQL `COMMENT=`), when it has one. */
  comment?: string;
}

/** Rows as the database returned them: raw values, converted to JSON by `toJsonValue`. */
export interface RowsPage {
  rows: Record<string, unknown>[];
  /** The page key values of each row, in `rows` order. */
  keys: unknown[][];
  /** The page stopped early because the next row would pass the byte budget. */
  over?: OverBudget;
}

/**
 * A page of `table`'s rows from rows read as arrays of the columns `names` (in order), with each
 * row's page key: how the pooled dialects (PostgreSQL, MySQL) shape what their driver returns.
 */
export function rowsPageFrom(
  table: TableInfo,
  names: readonly string[],
  arrays: readonly unknown[][],
  over: OverBudget | undefined,
): RowsPage {
  const rows = arrays.map((row) => rowObject(names, row));
  return {
    rows,
    keys: rows.map((r) => table.pageKey.map((k) => r[k])),
    ...definedProps({ over }),
  };
}

/**
 * A row as an object of its columns (a later column of the same name wins). A column's name is
 * data: one called `__proto__` is made an own property, where an assignment would set the row's
 * prototype instead (the column lost from the row, or its NULL leaving the row without a prototype).
 */
export function rowObject(
  names: readonly string[],
  values: readonly unknown[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let i = 0; i < names.length; i += 1) {
    const name = names[i]!;
    if (name === '__proto__')
      Object.defineProperty(out, name, {
        value: values[i],
        enumerable: true,
        writable: true,
        configurable: true,
      });
    else out[name] = values[i];
  }
  return out;
}

/** How a table page is bounded: rows, bytes (as for queries), and cancellation. */
export interface PageLimits {
  limit: number;
  maxBytes: number;
  signal?: AbortSignal | undefined;
}

export interface QueryOutput {
  columns: string[];
  rows: unknown[][];
  /** More rows were there than the row cap allowed. */
  truncated: boolean;
  /** The rows stopped early because the next one would pass the byte budget (see budget.ts). */
  over?: OverBudget;
}

export interface QueryLimits {
  maxRows: number;
  timeoutMs: number;
  /** Most bytes the rows may hold, measured in the database before they are sent (see budget.ts). */
  maxBytes: number;
  /** Aborting it stops the statement in the database (cancel request, or the query process killed). */
  signal?: AbortSignal | undefined;
}

/** The error a call aborted by `signal` rejects with: the signal's reason when it is an Error. */
export function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error('the call was cancelled');
}

/** The databases a sql source serves. */
export type SqlKind = 'sqlite' | 'postgres' | 'mysql';

/** What the provider needs from a database; every method throws SqlFailure-classified errors. */
export interface Dialect {
  readonly kind: SqlKind;
  /** The served tables, sorted by name (code point order). */
  introspect(): Promise<TableInfo[]>;
  /** Up to `limit` rows of `table` after the page key `after`, in page-key order. */
  rowsPage(table: TableInfo, after: unknown[] | undefined, limits: PageLimits): Promise<RowsPage>;
  /** Runs a configured named query with bound parameters. */
  namedQuery(sql: string, params: unknown[], limits: QueryLimits): Promise<QueryOutput>;
  /** Runs a client's statement with every guard the database offers (read-only, timeout, cap). */
  readOnlyQuery(sql: string, params: unknown[], limits: QueryLimits): Promise<QueryOutput>;
  /** Distinct values of one column starting with `prefix`, for completion. */
  distinct(table: TableInfo, column: string, prefix: string, limit: number): Promise<string[]>;
  /** Resolves when the database answers a trivial statement. */
  ping(): Promise<void>;
  /** Why `sql_query` will not run as the connected role (postgres-role.ts, mysql-grants.ts), or undefined. */
  roleRefusal?(): Promise<string | undefined>;
  /**
   * A per-table change fingerprint; the key set is the table list. `watched` names the tables whose
   * rows are watched (undefined: every table), for a dialect whose row fingerprint costs a read of
   * the table (MySQL's CHECKSUM TABLE); the others may ignore it.
   */
  fingerprint(watched?: ReadonlySet<string>): Promise<Map<string, string>>;
  /**
   * The database's own log of changes from now on (MySQL's binary log: mysql-binlog.ts), or why it
   * cannot be read; the watcher polls fingerprints then. Rejects when the database cannot answer.
   */
  changeLog?(): Promise<ChangeLog | { unavailable: string }>;
  /** Forgets what the dialect learnt of statements' shapes (the schema changed, or may have). */
  forgetShapes?(): void;
  /** Calls `onNotify(payload)` on each notification on `channel`; resolves with the stop function. */
  listen?(
    channel: string,
    onNotify: (payload: string) => void,
    onError: (error: unknown) => void,
  ): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** What a change log recorded since its last read. */
export interface LoggedChanges {
  /** Tables whose rows changed. */
  tables: ReadonlySet<string>;
  /**
   * Something changed that the log does not pin to tables (DDL, a write logged as a statement, a
   * stretch it skipped): every watch is told, and the table set is read again.
   */
  any: boolean;
}

/** A database's log of changes, read from where the last read stopped. */
export interface ChangeLog {
  /** What it is, for the log line that says change events come from it. */
  readonly kind: string;
  read(): Promise<LoggedChanges>;
}

/** Why a database call failed: the provider turns each kind into the right typed error. */
export type FailureKind = Extract<
  ProviderFailureKind,
  'unavailable' | 'timeout' | 'missing' | 'refused' | 'invalid'
>;

/** A driver error as the kit's failure kinds (utils/errors.ts); the provider words it for the caller. */
export class SqlFailure extends ProviderFailure {
  declare readonly kind: FailureKind;

  constructor(kind: FailureKind, message: string, options: { cause?: unknown } = {}) {
    super(kind, message, options);
    this.name = 'SqlFailure';
  }
}

/** Columns a dialect selects for itself beside a table's (SQLite's hidden rowid key): never shown. */
export const INTERNAL_COLUMNS: ReadonlySet<string> = new Set(['__reservoir_rowid']);

/** A value as it goes into JSON: safe integers as numbers, larger ones as strings, bytes as base64. */
export function toJsonValue(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint')
    return Number.isSafeInteger(Number(value)) && BigInt(Number(value)) === value
      ? Number(value)
      : value.toString();
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (value instanceof Uint8Array)
    return {
      $base64: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64'),
    };
  if (value instanceof Date)
    return Number.isNaN(value.getTime()) ? String(value) : value.toISOString();
  return value;
}

/** Encodes page-key values as an opaque, URI-safe position (base64url JSON; bigint and bytes tagged). */
export function encodeKey(values: readonly unknown[]): string {
  const tagged = values.map((v) => {
    if (typeof v === 'bigint') return { i: v.toString() };
    if (v instanceof Uint8Array)
      return { b: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64') };
    if (v instanceof Date) return v.toISOString();
    return v;
  });
  return Buffer.from(JSON.stringify(tagged), 'utf8').toString('base64url');
}

/** Decodes a position made by `encodeKey` with `width` values, or undefined when it is not one. */
export function decodeKey(position: string, width: number): unknown[] | undefined {
  if (position.length === 0 || position.length > 8192 || !/^[A-Za-z0-9_-]+$/.test(position))
    return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(position, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed) || parsed.length !== width) return undefined;
  const values: unknown[] = [];
  for (const v of parsed as unknown[]) {
    if (
      typeof v === 'string' ||
      typeof v === 'boolean' ||
      (typeof v === 'number' && Number.isFinite(v))
    )
      values.push(v);
    else if (isTagged(v, 'i') && /^-?\d{1,40}$/.test(v.i)) values.push(BigInt(v.i));
    else if (isTagged(v, 'b')) values.push(Buffer.from(v.b, 'base64'));
    else return undefined;
  }
  return values;
}

function isTagged<K extends string>(v: unknown, key: K): v is Record<K, string> {
  return (
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    Object.keys(v).length === 1 &&
    typeof (v as Record<string, unknown>)[key] === 'string'
  );
}

/** Quotes an identifier for either dialect (both accept double quotes, doubled inside). */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** A table comment as the schema shows it: trimmed, and none when the database holds none or blanks. */
export function tableComment(raw: string | null | undefined): string | undefined {
  const trimmed = raw?.trim() ?? '';
  return trimmed === '' ? undefined : trimmed;
}

/** Sorts by code point, the order every list and page key uses. */
export function byName<T extends { name: string }>(a: T, b: T): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
