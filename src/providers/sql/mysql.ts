/**
 * The MySQL / MariaDB dialect: `mysql2` (loaded on first use) with one pool per source of at most
 * `pool.max` connections (default 4), each given the read-only session of mysql-connect.ts before
 * its first statement. Calls beyond the cap wait for a free connection.
 *
 * Every statement streams row by row (the driver parses one row at a time) with the row cap and
 * the byte budget kept as rows arrive; at either the statement is stopped (KILL QUERY) and its
 * connection discarded. A table page's rows are measured in the server, and the values of a row
 * alone over the budget are sent blank; a named query's or `sql_query` rows are measured as they
 * arrive, and also on the wire (the socket's bytes, less the protocol's most per row) so that a
 * value past the budget stops the statement before the driver holds its row whole.
 *
 * A `sql_query` statement runs inside START TRANSACTION READ ONLY after a fresh grant check, then
 * a connection reset (COM_RESET_CONNECTION: the transaction rolled back, user variables, temporary
 * tables, locks and prepared statements gone), after which the session is prepared again in one
 * statement. Parameters are bound by the
 * server (prepared statements), never spliced into the text.
 *
 * Cancelling a call (its signal aborts) sends KILL QUERY for its connection over a short-lived
 * connection of its own and discards the connection. A connection lost mid-statement (KILL
 * CONNECTION, a restart) fails the call as unavailable (one lost before the statement went out is
 * replaced once), and while the server stays unreachable calls fail fast for a growing backoff (250 ms to 5 s).
 */
import type * as MysqlNs from 'mysql2';
import type { Logger } from '../../core/log.js';
import { BudgetMeter } from './budget.js';
import {
  abortError,
  SqlFailure,
  type Dialect,
  type QueryLimits,
  type QueryOutput,
  type RowsPage,
  type TableInfo,
} from './dialect.js';
import {
  classifyMysql,
  createPool,
  killQuery,
  prepareSession,
  run,
  type Mysql,
} from './mysql-connect.js';
import { openBinlog } from './mysql-binlog.js';
import { grantsRefusal } from './mysql-grants.js';
import { fingerprintMysql, introspectMysql, quoteMysql } from './mysql-schema.js';
import { DEFAULT_POOL_MAX } from './options.js';
import { pooled, type Work as PooledWork } from './pooled.js';

export interface MysqlDialectOptions {
  url: string;
  statementTimeoutMs: number;
  allowPrivilegedRole: boolean;
  /** Most connections the source's pool opens. @default 4 */
  poolMax?: number;
  logger: Logger;
}

const ROW_BYTES = '__reservoir_row_bytes';
/** Column types whose values may be long (COLUMN_TYPE as information_schema prints it). */
const VARIABLE_LENGTH =
  /char|text|blob|binary|json|geometry|point|linestring|polygon|collection|set\(|enum\(|vector|inet|uuid/i;

type Connection = MysqlNs.PoolConnection;
/** Work on one pooled connection; `spoil()` makes it be discarded instead of returned. */
type Work<T> = PooledWork<Connection, T>;

export function mysqlDialect(options: MysqlDialectOptions): Dialect {
  const { logger } = options;
  const database = databaseOf(options.url);
  const connectOptions = {
    url: options.url,
    statementTimeoutMs: options.statementTimeoutMs,
    poolMax: options.poolMax ?? DEFAULT_POOL_MAX,
  };
  let loaded: Promise<{ mysql: Mysql; pool: MysqlNs.Pool }> | undefined;
  /** Prepared connections, each with its session as one statement (or undefined: prepare afresh). */
  const prepared = new WeakMap<Connection, string | undefined>();

  const load = () => {
    loaded ??= (async () => {
      const mysql = ((await import('mysql2')) as unknown as { default: Mysql }).default;
      const pool = createPool(mysql, connectOptions, (error) =>
        logger.warn({ err: error.message }, 'sql: a MySQL connection failed; it was discarded'),
      );
      return { mysql, pool };
    })();
    return loaded;
  };

  const kill = async (threadId: number): Promise<void> => {
    const { mysql } = await load();
    await killQuery(mysql, connectOptions, threadId).catch((error: unknown) =>
      logger.warn(
        { err: (error as Error).message, threadId },
        'sql: could not stop an abandoned MySQL statement; it runs until its time limit',
      ),
    );
  };

  const getConnection = (
    pool: MysqlNs.Pool,
    signal: AbortSignal | undefined,
  ): Promise<Connection> =>
    new Promise<Connection>((resolve, reject) => {
      const onAbort = (): void => reject(abortError(signal!));
      if (signal?.aborted === true) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      pool.getConnection((error, connection) => {
        signal?.removeEventListener('abort', onAbort);
        if (error) return reject(error);
        if (signal?.aborted === true) return connection.release(); // the call was answered; hand it back
        resolve(connection);
      });
    });

  /**
   * Runs `work` on a pooled, prepared connection (pooled.ts: retried once when the connection was
   * lost before the statement went out, then backoff). When `signal` aborts, the statement is
   * killed, the call rejects at once and the connection is discarded.
   */
  const gate = pooled<Connection>({
    acquire: async (signal) => getConnection((await load()).pool, signal),
    release: (connection, discard) => release(connection, discard),
    cancel: (connection) => void kill(connection.threadId),
    prepare: async (connection) => {
      if (prepared.has(connection)) return;
      const { again } = await prepareSession(connection, options.statementTimeoutMs);
      prepared.set(connection, again);
    },
    classify: classifyMysql,
    discards: (failure) => failure.kind === 'unavailable' || failure.kind === 'timeout',
    // A statement whose connection died under it (KILL CONNECTION) is not run a second time.
    retryStarted: false,
  });
  const withConnection = <T>(work: Work<T>, signal?: AbortSignal): Promise<T> =>
    gate.run(work, signal);

  /**
   * Ends the call's transaction and resets the session (COM_RESET_CONNECTION, which rolls back the
   * open transaction too), then gives it the dialect's session again in one statement.
   */
  const resetSession = async (connection: Connection): Promise<void> => {
    await new Promise<void>((resolve, reject) =>
      connection.reset((error) => (error ? reject(error) : resolve())),
    );
    const again = prepared.get(connection);
    if (again === undefined) prepared.delete(connection);
    else await run(connection, again);
  };

  const release = (connection: Connection, spoil: boolean): void => {
    if (spoil) {
      prepared.delete(connection);
      connection.destroy();
    } else connection.release();
  };

  /**
   * Streams `sql`'s rows as arrays: at most `maxRows` (then `truncated`), their measured bytes
   * within `maxBytes` (then `over`). Stopping early kills the statement and spoils the connection.
   */
  const streamed = (
    connection: Connection,
    spoil: () => void,
    sql: string,
    params: unknown[],
    limits: Pick<QueryLimits, 'maxRows' | 'maxBytes' | 'timeoutMs'>,
    /** The row's size is the server's, in this last column (left out of the row): a table page. */
    measured = false,
  ): Promise<QueryOutput> =>
    new Promise<QueryOutput>((resolve, reject) => {
      const rows: unknown[][] = [];
      const meter = new BudgetMeter(limits.maxBytes);
      let columns: string[] = [];
      let truncated = false;
      let done = false;
      const cleanups: (() => void)[] = [];
      const finish = (error?: unknown): void => {
        if (done) return;
        done = true;
        clearTimeout(deadline);
        for (const cleanup of cleanups) cleanup();
        connection.off('error', lost);
        connection.off('end', lost);
        if (error !== undefined) reject(error);
        else
          resolve({
            columns,
            rows,
            truncated,
            ...(meter.over === undefined ? {} : { over: meter.over }),
          });
      };
      const stop = (): void => {
        spoil();
        connection.pause();
        void kill(connection.threadId);
        finish();
      };
      // The server's own limit ends the statement; this one answers if the server does not.
      const deadline = setTimeout(() => {
        spoil();
        void kill(connection.threadId);
        finish(new SqlFailure('timeout', `the statement ran past ${limits.timeoutMs} ms`));
      }, limits.timeoutMs + 5000);
      // A connection lost under a streamed statement (KILL CONNECTION) is reported on the
      // connection, not on the statement, which would otherwise never end.
      const lost = (error?: Error): void =>
        finish(
          Object.assign(error ?? new Error('the connection to the database ended'), {
            fatal: true,
          }),
        );
      connection.once('error', lost);
      connection.once('end', lost);
      // The wire meter: bytes as they arrive, before the driver has a whole row. Once what arrived
      // after the column definitions, less the protocol's most per row, passes the budget, the
      // values already passed it: the statement stops without the row ever being held whole.
      const socket = (connection as unknown as { stream?: NodeJS.EventEmitter }).stream;
      let received = 0;
      let base: number | undefined;
      const onData = (chunk: Buffer): void => {
        received += chunk.length;
        if (done || measured || base === undefined) return;
        const payload =
          received - base - (rows.length + 1) * wireOverhead(columns.length) - meter.used;
        if (meter.used + payload <= limits.maxBytes) return;
        meter.over = {
          row: rows.length,
          rowBytes: payload,
          usedBytes: meter.used,
          budget: limits.maxBytes,
          atLeast: true,
        };
        stop();
      };
      socket?.on('data', onData);
      cleanups.push(() => socket?.off('data', onData));
      const values = params.map(bindable);
      // always prepared: values bound by the server, one encoding whether or not there are any
      const query = connection.execute({ sql, values, rowsAsArray: true });
      query.on('fields', (fields: MysqlNs.FieldPacket[] | undefined) => {
        columns = (fields ?? []).map((f) => f.name);
        base = received;
      });
      query.on('result', (row: unknown) => {
        // a statement without rows answers with a status (an OK packet), not a row
        if (done || !Array.isArray(row)) return;
        const values = row as unknown[];
        if (rows.length === limits.maxRows) {
          truncated = true;
          return stop();
        }
        const size = measured
          ? Number(values.pop())
          : values.reduce<number>((sum, v) => sum + sizeOf(v), 0);
        if (!meter.add(size)) return stop();
        rows.push(values);
      });
      query.on('error', (error: unknown) => finish(error));
      query.on('end', () => finish());
    });

  /** Checks the user's grants (unless allowed); a refusal is a 'refused' failure. */
  const checkGrants = async (connection: Connection): Promise<string | undefined> => {
    if (options.allowPrivilegedRole) return undefined;
    const [who] = await run<{ user: string }[]>(connection, 'SELECT CURRENT_USER() AS user');
    const lines = await run<Record<string, string>[]>(connection, 'SHOW GRANTS');
    return grantsRefusal(
      who?.user ?? '?',
      lines.map((r) => String(Object.values(r)[0] ?? '')),
    );
  };

  return {
    kind: 'mysql',

    introspect: () => withConnection((connection) => introspectMysql(connection)),

    rowsPage: (table, after, { limit, maxBytes, signal }) =>
      withConnection(async (connection, spoil): Promise<RowsPage> => {
        const { sql, values } = pageStatement(database, table, after, limit, maxBytes);
        const names = table.columns.map((c) => c.name);
        let out: QueryOutput;
        try {
          out = await streamed(
            connection,
            spoil,
            sql,
            values,
            { maxRows: limit, maxBytes, timeoutMs: options.statementTimeoutMs },
            true,
          );
        } catch (error) {
          if ((error as { errno?: unknown }).errno === 1054)
            throw new SqlFailure('missing', (error as Error).message, { cause: error });
          throw error;
        }
        const rows = out.rows.map((row) => Object.fromEntries(names.map((n, i) => [n, row[i]])));
        return {
          rows,
          keys: rows.map((r) => table.pageKey.map((k) => r[k])),
          ...(out.over === undefined ? {} : { over: out.over }),
        };
      }, signal),

    namedQuery: (sql, params, limits) =>
      withConnection(
        (connection, spoil) => streamed(connection, spoil, sql, params, limits),
        limits.signal,
      ),

    readOnlyQuery: (sql, params, limits) =>
      withConnection(async (connection, spoilConnection) => {
        let spoiled = false;
        const spoil = (): void => {
          spoiled = true;
          spoilConnection();
        };
        const refusal = await checkGrants(connection);
        if (refusal !== undefined) throw new SqlFailure('refused', refusal);
        await run(connection, 'START TRANSACTION READ ONLY');
        try {
          return await streamed(connection, spoil, sql, params, limits);
        } catch (error) {
          // a connection that failed (killed, lost) takes no more commands: it is discarded as it is
          if ((error as { fatal?: unknown }).fatal === true) spoil();
          throw error;
        } finally {
          // Whatever the statement left (user variables, temporary tables, locks) goes with the reset;
          // a discarded connection takes it all with it.
          if (!spoiled) await resetSession(connection).catch(spoil);
        }
      }, limits.signal),

    distinct: (table, column, prefix, limit) =>
      withConnection(async (connection) => {
        const col = quoteMysql(column);
        const text = `CAST(${col} AS CHAR)`;
        const sql =
          `SELECT DISTINCT ${text} AS v FROM ${quoteMysql(database)}.${quoteMysql(table.name)} ` +
          `WHERE LEFT(${text}, ${[...prefix].length}) = ? AND OCTET_LENGTH(${text}) <= 4096 ORDER BY 1 LIMIT ${Math.trunc(limit)}`;
        const rows = await run<{ v: string }[]>(connection, sql, [prefix]);
        return rows.map((r) => String(r.v));
      }),

    ping: () =>
      withConnection(async (connection) => {
        await run(connection, 'SELECT 1');
      }),

    roleRefusal: () =>
      options.allowPrivilegedRole ? Promise.resolve(undefined) : withConnection(checkGrants),

    fingerprint: (watched) =>
      withConnection((connection) => fingerprintMysql(connection, database, watched)),

    changeLog: () => openBinlog((work) => withConnection(work), database),

    async close() {
      gate.close();
      if (loaded === undefined) return;
      const { pool } = await loaded;
      await new Promise<void>((resolve) => pool.end(() => resolve()));
    },
  };
}

/**
 * One keyset page of `table`: the page in key order, `limit` rows, each with its size measured in
 * the server (last column); values of variable length in a row alone over the budget are sent
 * blank. The reader keeps the running total as rows stream and stops at the budget.
 */
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

/** A value as the driver binds it: bigint as its decimal text, booleans as 1 / 0. */
function bindable(value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value;
}

/**
 * Most bytes the binary protocol spends on one row of `columns` columns besides what the budget
 * counts: the packet header (4), the row marker (1), the NULL bitmap, and per value a length
 * prefix (up to 9) and a number's or date's binary form where its text is shorter (up to 8).
 */
function wireOverhead(columns: number): number {
  return 5 + Math.ceil((columns + 2) / 8) + 17 * columns;
}

/** A received value's size in bytes, as the byte budget counts it. */
function sizeOf(value: unknown): number {
  if (value === null || value === undefined) return 0;
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (value instanceof Uint8Array) return value.byteLength;
  return String(value).length;
}

/** The database a connection URL names (its path). */
export function databaseOf(url: string): string {
  try {
    return decodeURIComponent(new URL(url.replace(/^mariadb:/i, 'mysql:')).pathname.slice(1));
  } catch {
    return '';
  }
}
