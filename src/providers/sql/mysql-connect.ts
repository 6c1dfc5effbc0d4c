/**
 * MySQL / MariaDB connections outside the dialect's own logic: the `mysql2` pool (loaded on first
 * use), the session every connection is given before its first statement, the short-lived
 * connection that sends `KILL QUERY`, the classification of driver errors, and how values and the
 * URL's database reach the driver.
 *
 * The session: every transaction read-only (`SET SESSION TRANSACTION READ ONLY`), a per-statement
 * time limit (`max_statement_time` on MariaDB, `max_execution_time` on MySQL: mysql-flavour.ts),
 * `time_zone` UTC (so TIMESTAMP values read the same whatever the server's zone), and the server's
 * `sql_mode` without ANSI_QUOTES and NO_BACKSLASH_ESCAPES (and the combination modes that imply
 * them), so statements are lexed exactly as the lexical guard (guard.ts, sql-lexer.ts) lexes them.
 * A connection whose mode cannot be set so is refused.
 */
import type * as MysqlNs from 'mysql2';
import { SqlFailure } from './dialect.js';
import { sessionStatement, type MysqlFlavour } from './mysql-flavour.js';

export type Mysql = typeof MysqlNs;

/**
 * The client-side deadline of the dialect's own statements (session, introspection, CHECKSUM TABLE,
 * grants, KILL QUERY), ms: the server's time limit covers SELECTs only.
 */
export const RUN_TIMEOUT_MS = 20_000;

export interface MysqlConnectOptions {
  url: string;
  statementTimeoutMs: number;
  poolMax: number;
}

/** The driver's connection options for `url` (mariadb:// read as mysql://). */
export function connectionConfig(
  options: Pick<MysqlConnectOptions, 'url'>,
): MysqlNs.ConnectionOptions {
  return {
    uri: options.url.replace(/^mariadb:/i, 'mysql:'),
    charset: 'UTF8MB4_GENERAL_CI',
    connectTimeout: 5000,
    multipleStatements: false,
    // The driver's cache of prepared statements, per connection: a source's own statements (pages,
    // named queries) and the latest `sql_query` ones. Its default (16,000) is swept whole on every
    // session reset.
    maxPreparedStatements: 64,
    // BIGINT beyond 2^53 as a string, DECIMAL always a string, dates and times as the server prints them.
    supportBigNumbers: true,
    bigNumberStrings: false,
    decimalNumbers: false,
    dateStrings: true,
    // JSON as its text on both servers (it would otherwise be parsed, and MariaDB's only by its metadata).
    jsonStrings: true,
  };
}

export function createPool(
  mysql: Mysql,
  options: MysqlConnectOptions,
  onError: (error: Error) => void,
): MysqlNs.Pool {
  const pool = mysql.createPool({
    ...connectionConfig(options),
    connectionLimit: options.poolMax,
    maxIdle: options.poolMax,
    idleTimeout: 10_000,
    waitForConnections: true,
    queueLimit: 0,
  });
  // A connection that fails while idle (killed, server gone) emits 'error'; with no listener that
  // would end the process. The failure of a query on it reaches its own callback.
  pool.on(
    'connection',
    (connection) => void (connection as unknown as MysqlNs.Connection).on('error', onError),
  );
  return pool;
}

/**
 * Runs `sql` on `connection`, resolving with its rows. Values are bound by the server (a prepared
 * statement), never spliced in by the client: the driver's client-side formatting would replace a
 * `?` inside a quoted name or literal too.
 */
export function run<T = Record<string, unknown>[]>(
  connection: MysqlNs.Connection | MysqlNs.PoolConnection,
  sql: string,
  values: unknown[] = [],
  prepare = values.length > 0,
  timeoutMs = RUN_TIMEOUT_MS,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const done = (error: unknown, rows: unknown): void =>
      error ? reject(error as Error) : resolve(rows as T);
    // A server that stops answering fails the statement (and the connection) after `timeoutMs`.
    if (!prepare) connection.query({ sql, timeout: timeoutMs }, done);
    else connection.execute({ sql, values, timeout: timeoutMs }, done);
  });
}

/**
 * Gives `connection` the dialect's session (see the file comment). Resolves with the server flavour
 * and, where the mode is plain words, the same session as one text statement (`again`): after a
 * connection reset, which keeps the server and its modes, that one round trip prepares it again in
 * place of this function's four.
 */
export async function prepareSession(
  connection: MysqlNs.PoolConnection,
  statementTimeoutMs: number,
): Promise<{ flavour: MysqlFlavour; again: string | undefined }> {
  const [info] = await run<{ mode: string; version: string }[]>(
    connection,
    'SELECT @@SESSION.sql_mode AS mode, @@version AS version',
  );
  const session = sessionStatement(info?.version ?? '', info?.mode ?? '', statementTimeoutMs);
  await run(connection, session.sql, session.values);
  await run(connection, 'SET SESSION TRANSACTION READ ONLY');
  const [check] = await run<{ mode: string }[]>(connection, 'SELECT @@SESSION.sql_mode AS mode');
  if (/ANSI_QUOTES|NO_BACKSLASH_ESCAPES/i.test(check?.mode ?? '')) {
    throw new SqlFailure(
      'refused',
      `the session's sql_mode (${check?.mode ?? ''}) keeps ANSI_QUOTES or NO_BACKSLASH_ESCAPES, which the read-only guard cannot lex`,
    );
  }
  const [mode, limit] = session.values;
  const again = /^[A-Za-z0-9_,]*$/.test(mode)
    ? session.sql.replace('sql_mode = ?', `sql_mode = '${mode}'`).replace(/= \?$/, `= ${limit}`) +
      `, ${session.flavour.readOnlyVariable} = 1`
    : undefined;
  return { flavour: session.flavour, again };
}

/**
 * Resets `connection`'s session (COM_RESET_CONNECTION: the open transaction rolled back, user
 * variables, temporary tables, user locks and prepared statements gone), failing after `timeoutMs`
 * with the connection destroyed: a reset that hangs must not hold the connection forever.
 *
 * The server drops the session's prepared statements with it, so the driver's cache of them is
 * emptied as the reset answers; the driver would also send a close for each, which the server no
 * longer knows: those are left out (one write each, for nothing).
 */
export function resetConnection(
  connection: MysqlNs.PoolConnection,
  timeoutMs: number,
): Promise<void> {
  forgetStatements(connection);
  return new Promise<void>((resolve, reject) => {
    const deadline = setTimeout(() => {
      connection.destroy();
      reject(
        new SqlFailure(
          'unavailable',
          `the session reset did not answer within ${timeoutMs} ms; its connection was closed`,
        ),
      );
    }, timeoutMs);
    connection.reset((error) => {
      clearTimeout(deadline);
      if (error) reject(error);
      else resolve();
    });
  });
}

/**
 * Makes the driver's cached prepared statements of `connection` close without a word to the
 * server, ahead of a session reset that drops them there: the driver, emptying its cache as the
 * reset answers, would send a close for each, which the server no longer knows.
 */
export function forgetStatements(connection: MysqlNs.PoolConnection): void {
  const cache = (connection as unknown as { _statements?: { values?(): Iterable<unknown> } })
    ._statements;
  if (typeof cache?.values === 'function')
    for (const statement of cache.values())
      if (typeof statement === 'object' && statement !== null)
        (statement as { close: () => void }).close = () => undefined;
}

/** Asks the server to stop what connection `threadId` runs, over a connection of its own. */
export async function killQuery(
  mysql: Mysql,
  options: Pick<MysqlConnectOptions, 'url'>,
  threadId: number,
): Promise<void> {
  const connection = mysql.createConnection(connectionConfig(options));
  connection.on('error', () => undefined);
  try {
    await run(connection, `KILL QUERY ${Math.trunc(threadId)}`);
  } finally {
    connection.destroy();
  }
}

/** MySQL / MariaDB error numbers by what they mean to the provider. */
const TIMEOUT_ERRNOS = new Set([1969, 3024, 1205, 1317]);
const REFUSED_ERRNOS = new Set([1792, 1290, 1142, 1143, 1044, 1227, 1370, 1095]);
const MISSING_ERRNOS = new Set([1146, 1054, 1109]);
/** Cannot connect or log in (as PostgreSQL's class 08 and 28): 1045/1698 access denied (1698 on MariaDB with no such user), 1130 host not allowed, 1251 auth method unsupported, 1820/1862 password expired. */
const UNAVAILABLE_ERRNOS = new Set([
  1040, 1203, 1045, 1698, 1130, 1251, 1820, 1862, 1049, 1053, 1077, 1152, 1153, 1158, 1159, 1160,
  1161, 1927, 2002, 2003, 2006, 2013, 4031,
]);
const LOST =
  /connection.*(lost|closed|ended)|server has gone away|Can't add new command when connection is in closed state|Pool is closed|killed/i;

/**
 * Classifies a mysql2 or network error: a lost connection (fatal errors, KILL CONNECTION, a reset
 * socket) as unavailable, worded as such; a statement stopped by the time limit as timeout; then by
 * MySQL error number.
 */
export function classifyMysql(error: unknown): SqlFailure {
  if (error instanceof SqlFailure) return error;
  const message = error instanceof Error ? error.message : String(error);
  const errno = (error as { errno?: unknown }).errno;
  const code = (error as { code?: unknown }).code;
  if (
    (typeof errno === 'number' && TIMEOUT_ERRNOS.has(errno)) ||
    code === 'PROTOCOL_SEQUENCE_TIMEOUT'
  )
    return new SqlFailure('timeout', message, { cause: error });
  if (
    (error as { fatal?: unknown }).fatal === true ||
    (typeof errno === 'number' && UNAVAILABLE_ERRNOS.has(errno)) ||
    (typeof code === 'string' && /^(E[A-Z]+|PROTOCOL_.*)$/.test(code))
  ) {
    return new SqlFailure(
      'unavailable',
      LOST.test(message) || code === 'PROTOCOL_CONNECTION_LOST'
        ? `the connection to the database was lost (${message}); try again`
        : message,
      { cause: error },
    );
  }
  if (typeof errno === 'number' && REFUSED_ERRNOS.has(errno))
    return new SqlFailure('refused', message, { cause: error });
  if (typeof errno === 'number' && MISSING_ERRNOS.has(errno))
    return new SqlFailure('missing', message, { cause: error });
  if (typeof errno !== 'number') return new SqlFailure('unavailable', message, { cause: error });
  return new SqlFailure('invalid', message, { cause: error });
}

/** A value as the driver binds it: bigint as its decimal text, booleans as 1 / 0. */
export function bindable(value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value;
}

/** The database a connection URL names (its path). */
export function databaseOf(url: string): string {
  try {
    return decodeURIComponent(new URL(url.replace(/^mariadb:/i, 'mysql:')).pathname.slice(1));
  } catch {
    return '';
  }
}
