/**
 * Where MySQL and MariaDB differ, in one place. The dialect reads `@@version` and `@@sql_mode` of
 * every new connection and takes from here what to send; nothing else in the dialect branches on
 * the server.
 *
 * | | MariaDB | MySQL |
 * | --- | --- | --- |
 * | told apart by | `@@version` contains `MariaDB` (e.g. `10.11.19-MariaDB-0+deb12u1`) | any other (e.g. `8.0.36`) |
 * | per-statement time limit | `max_statement_time`, seconds (fractional), every statement | `max_execution_time`, whole ms (≥ 1), SELECT only |
 * | the limit's error | 1969 ER_STATEMENT_TIMEOUT | 3024 ER_QUERY_TIMEOUT |
 * | JSON columns | an alias of LONGTEXT (`COLUMN_TYPE` `longtext`, a CHECK on JSON_VALID) | a binary type (`COLUMN_TYPE` `json`) |
 * | `seq_1_to_N` sequence tables | yes (tests and bench use them) | no |
 *
 * JSON reads as its text on both (the driver is told `jsonStrings`), so the difference in the JSON
 * type shows only in the schema document's `type`. Only the MariaDB column runs in this project's
 * tests against a server; the MySQL column is tested on MySQL 8.0's answers as its manual gives them (see
 * test/providers/sql-mysql-flavour.test.ts and docs/providers/sql.md).
 */

export interface MysqlFlavour {
  mariadb: boolean;
  /** The name of the session variable holding the per-statement time limit. */
  timeLimitVariable: 'max_statement_time' | 'max_execution_time';
  /** The error number the server answers when a statement runs past that limit. */
  timeLimitErrno: number;
  /** The session variable of SET SESSION TRANSACTION READ ONLY (MySQL 8 dropped `tx_read_only`). */
  readOnlyVariable: 'tx_read_only' | 'transaction_read_only';
}

/** The server flavour from its `@@version` string. */
export function mysqlFlavour(version: string): MysqlFlavour {
  const mariadb = /mariadb/i.test(version);
  return mariadb
    ? {
        mariadb,
        timeLimitVariable: 'max_statement_time',
        timeLimitErrno: 1969,
        readOnlyVariable: 'tx_read_only',
      }
    : {
        mariadb,
        timeLimitVariable: 'max_execution_time',
        timeLimitErrno: 3024,
        readOnlyVariable: 'transaction_read_only',
      };
}

/** Modes that make `"` an identifier quote or turn backslash escapes off (directly or by implying it). */
const LEXICAL_MODES = new Set([
  'ANSI',
  'ANSI_QUOTES',
  'NO_BACKSLASH_ESCAPES',
  'DB2',
  'MAXDB',
  'MSSQL',
  'ORACLE',
  'POSTGRESQL',
]);

/**
 * The statement that gives a connection the dialect's session, from the server's `@@version` and
 * session `@@sql_mode`: its `sql_mode` without the lexical modes, UTC, a long GROUP_CONCAT, and the
 * flavour's time limit (MariaDB in seconds, MySQL in whole milliseconds).
 */
export function sessionStatement(
  version: string,
  sqlMode: string,
  statementTimeoutMs: number,
): { sql: string; values: [string, number]; flavour: MysqlFlavour } {
  const flavour = mysqlFlavour(version);
  const mode = sqlMode
    .split(',')
    .filter((m) => m !== '' && !LEXICAL_MODES.has(m.toUpperCase()))
    .join(',');
  const limit = flavour.mariadb
    ? statementTimeoutMs / 1000
    : Math.max(1, Math.round(statementTimeoutMs));
  return {
    sql: `SET SESSION sql_mode = ?, time_zone = '+00:00', group_concat_max_len = 1048576, ${flavour.timeLimitVariable} = ?`,
    values: [mode, limit],
    flavour,
  };
}
