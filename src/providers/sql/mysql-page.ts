/**
 * The statement of one keyset page of a MySQL / MariaDB table: the page in key order, `limit` rows,
 * each with its size measured in the server (last column); values of variable length in a row alone
 * over the budget are sent blank. The reader (mysql-stream.ts) keeps the running total as rows
 * stream and stops at the budget.
 */
import type { TableInfo } from './dialect.js';
import { bindable } from './mysql-connect.js';
import { quoteMysql } from './mysql-schema.js';

const ROW_BYTES = '__reservoir_row_bytes';
/** Column types whose values may be long (COLUMN_TYPE as information_schema prints it). */
const VARIABLE_LENGTH =
  /char|text|blob|binary|json|geometry|point|linestring|polygon|collection|set\(|enum\(|vector|inet|uuid/i;

/** Statements already built, per table description (the schema cache's, until it changes). */
const built = new WeakMap<TableInfo, Map<string, string>>();
/** Most statements kept per table (one per page size and budget asked for). */
const BUILT_PER_TABLE = 16;

export function pageStatement(
  database: string,
  table: TableInfo,
  after: unknown[] | undefined,
  limit: number,
  budget: number,
): { sql: string; values: unknown[] } {
  const keyed = after !== undefined && table.pageKey.length > 0;
  const values: unknown[] = [];
  if (keyed) table.pageKey.forEach((_, i) => values.push(...after.slice(0, i + 1).map(bindable)));
  const id = `${keyed ? 1 : 0}\0${Math.trunc(limit)}\0${budget}\0${database}`;
  let statements = built.get(table);
  const known = statements?.get(id);
  if (known !== undefined) return { sql: known, values };
  const sql = pageText(database, table, keyed, limit, budget);
  if (statements === undefined || statements.size >= BUILT_PER_TABLE) {
    statements = new Map();
    built.set(table, statements);
  }
  statements.set(id, sql);
  return { sql, values };
}

function pageText(
  database: string,
  table: TableInfo,
  keyed: boolean,
  limit: number,
  budget: number,
): string {
  const size =
    table.columns.length === 0
      ? '0'
      : table.columns.map((c) => `COALESCE(OCTET_LENGTH(${quoteMysql(c.name)}), 0)`).join(' + ');
  // Fixed-size values (numbers, dates, BIT) are small and pass as they are, keeping their type.
  const columns = table.columns.map(({ name, type }) =>
    VARIABLE_LENGTH.test(type)
      ? `CASE WHEN (${size}) <= ${budget} THEN ${quoteMysql(name)} END AS ${quoteMysql(name)}`
      : quoteMysql(name),
  );
  const keys = table.pageKey.map(quoteMysql);
  let where = '';
  if (keyed) {
    // (a, b) > (x, y) spelled out, so the server can use the key's index on every version
    const terms = keys.map((key, i) =>
      [...keys.slice(0, i).map((k) => `${k} = ?`), `${key} > ?`].join(' AND '),
    );
    where = ` WHERE ${terms.map((t) => `(${t})`).join(' OR ')}`;
  }
  const order = keys.length === 0 ? '' : ` ORDER BY ${keys.join(', ')}`;
  return `SELECT ${[...columns, `(${size}) AS ${ROW_BYTES}`].join(', ')} FROM ${quoteMysql(database)}.${quoteMysql(table.name)}${where}${order} LIMIT ${Math.trunc(limit)}`;
}
