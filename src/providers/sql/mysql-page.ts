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

export function pageStatement(
  database: string,
  table: TableInfo,
  after: unknown[] | undefined,
  limit: number,
  budget: number,
): { sql: string; values: unknown[] } {
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
  const values: unknown[] = [];
  if (after !== undefined && keys.length > 0) {
    // (a, b) > (x, y) spelled out, so the server can use the key's index on every version
    const terms = keys.map((key, i) =>
      [...keys.slice(0, i).map((k) => `${k} = ?`), `${key} > ?`].join(' AND '),
    );
    where = ` WHERE ${terms.map((t) => `(${t})`).join(' OR ')}`;
    keys.forEach((_, i) => values.push(...after.slice(0, i + 1).map(bindable)));
  }
  const order = keys.length === 0 ? '' : ` ORDER BY ${keys.join(', ')}`;
  const sql = `SELECT ${[...columns, `(${size}) AS ${ROW_BYTES}`].join(', ')} FROM ${quoteMysql(database)}.${quoteMysql(table.name)}${where}${order} LIMIT ${Math.trunc(limit)}`;
  return { sql, values };
}
