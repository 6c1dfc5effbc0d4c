/**
 * The MySQL / MariaDB dialect: `mysql2` (loaded on first use) with one pool per source of at most
 * `pool.max` connections (default 4), each given the read-only session of mysql-connect.ts before
 * its first statement. Calls beyond the cap wait for a free connection.
 *
 * Every statement streams row by row (mysql-stream.ts: the driver parses one row at a time) with
 * the row cap and the byte budget kept as rows arrive; at either the statement is stopped (KILL
 * QUERY) and its connection discarded; a table page's statement is mysql-page.ts's. A table page's rows are measured in the server, and the values of a row
 * alone over the budget are sent blank; a named query's or `sql_query` rows are measured as they
 * arrive, and also on the wire (the socket's bytes, less the protocol's most per row) so that a
 * value past the budget stops the statement before the driver holds its row whole.
 *
 * A `sql_query` statement runs inside START TRANSACTION READ ONLY after a fresh grant check (SHOW
 * GRANTS), the transaction's start written together with the statement's prepare and the statement
 * executed once the start answered (mysql-pipeline.ts); the
 * reset (COM_RESET_CONNECTION: the transaction rolled back, user variables, temporary tables, locks
 * and prepared statements gone) and the session prepared again in one statement are written behind
 * the execute, so the server runs them as the statement ends; the answer goes out without waiting
 * for them, and the connection serves again once they answered; a reset that does not answer within the
 * statement time limit (at least 1 s) closes the connection instead. Parameters are bound by the server (prepared statements), never spliced into the text.
 *
 * Cancelling a call (its signal aborts) sends KILL QUERY for its connection over a short-lived
 * connection of its own and discards the connection. A connection lost mid-statement (KILL
 * CONNECTION, a restart) fails the call as unavailable (one lost before the statement went out is
 * replaced once), and while the server stays unreachable calls fail fast for a growing backoff (250 ms to 5 s).
 */
import type * as MysqlNs from 'mysql2';
import type { Logger } from '../../core/log.js';
import { rowsPageFrom, SqlFailure, type Dialect, type QueryOutput } from './dialect.js';
import { openBinlog } from './mysql-binlog.js';
import {
  classifyMysql,
  createPool,
  databaseOf,
  forgetStatements,
  killQuery,
  prepareSession,
  resetConnection,
  run,
  RUN_TIMEOUT_MS,
  type Mysql,
} from './mysql-connect.js';
import { grantsRefusal } from './mysql-grants.js';
import { pageStatement } from './mysql-page.js';
import {
  executeStep,
  pipeline,
  pipelineAll,
  prepareStep,
  queryStep,
  resetStep,
} from './mysql-pipeline.js';
import { fingerprintMysql, introspectMysql, quoteMysql } from './mysql-schema.js';
import { streamRows, type StreamedStatement } from './mysql-stream.js';
import { DEFAULT_POOL_MAX } from './options.js';
import { pooled, type Work as PooledWork } from './pooled.js';

export interface MysqlDialectOptions {
  url: string;
  statementTimeoutMs: number;
  allowPrivilegedRole: boolean;
  /** Most connections the source's pool opens. @default 4 */
  poolMax?: number | undefined;
  logger: Logger;
}

type Connection = MysqlNs.PoolConnection;
/** The least time a session reset is given before its connection is discarded, ms. */
const RESET_MIN_MS = 1000;
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

  /**
   * Runs `work` on a pooled, prepared connection (pooled.ts: retried once when the connection was
   * lost before the statement went out, then backoff). When `signal` aborts, the statement is
   * killed, the call rejects at once and the connection is discarded.
   */
  const gate = pooled<Connection>({
    acquire: async () => {
      const { pool } = await load();
      return new Promise<Connection>((resolve, reject) =>
        pool.getConnection((error, connection) => (error ? reject(error) : resolve(connection))),
      );
    },
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
   * open transaction too), then gives it the dialect's session again in one statement; each within
   * the statement time limit (at least RESET_MIN_MS), or the connection is discarded.
   */
  const resetWithinMs = Math.min(
    RUN_TIMEOUT_MS,
    Math.max(RESET_MIN_MS, options.statementTimeoutMs),
  );
  const resetting = new Set<Promise<void>>();
  /** `done`, which close() waits for: the pool's end waits forever on a connection whose reset hangs. */
  const tracked = (done: Promise<void>): Promise<void> => {
    resetting.add(done);
    void done.then(
      () => resetting.delete(done),
      () => resetting.delete(done),
    );
    return done;
  };
  const resetSession = (connection: Connection): Promise<void> =>
    tracked(
      (async () => {
        const again = prepared.get(connection);
        if (again === undefined) {
          await resetConnection(connection, resetWithinMs);
          prepared.delete(connection);
          return;
        }
        // One round trip: the set-up is written behind the reset. Should the reset fail, the caller
        // discards the connection whatever the set-up did.
        forgetStatements(connection);
        await pipelineAll(connection, [resetStep, queryStep(again)], resetWithinMs);
      })(),
    );

  const release = (connection: Connection, spoil: boolean): void => {
    if (spoil) {
      prepared.delete(connection);
      connection.destroy();
    } else connection.release();
  };

  /** Streams a statement's rows on `connection` (mysql-stream.ts), killing it when it stops early. */
  const streamed = (statement: Omit<StreamedStatement, 'kill'>): Promise<QueryOutput> =>
    streamRows({ ...statement, kill: (id) => void kill(id) });

  /**
   * Checks the user's grants (unless allowed): one round trip, SHOW GRANTS; the user's name, which
   * only a refusal shows, is asked for only then.
   */
  const checkGrants = async (connection: Connection): Promise<string | undefined> => {
    if (options.allowPrivilegedRole) return undefined;
    return refusalOf(connection, await run<Record<string, string>[]>(connection, 'SHOW GRANTS'));
  };
  /** The refusal SHOW GRANTS's `lines` call for, if any (the user's name asked for only then). */
  const refusalOf = async (
    connection: Connection,
    lines: Record<string, string>[],
  ): Promise<string | undefined> => {
    const grants = lines.map((r) => String(Object.values(r)[0] ?? ''));
    if (grantsRefusal('', grants) === undefined) return undefined;
    const [who] = await run<{ user: string }[]>(connection, 'SELECT CURRENT_USER() AS user');
    return grantsRefusal(who?.user ?? '?', grants);
  };

  return {
    kind: 'mysql',

    introspect: () => withConnection((connection) => introspectMysql(connection)),

    rowsPage: (table, after, { limit, maxBytes, signal }) =>
      withConnection(async (connection, spoil) => {
        const { sql, values } = pageStatement(database, table, after, limit, maxBytes);
        const limits = { maxRows: limit, maxBytes, timeoutMs: options.statementTimeoutMs };
        let out: QueryOutput;
        try {
          out = await streamed({ connection, spoil, sql, params: values, limits, measured: true });
        } catch (error) {
          if ((error as { errno?: unknown }).errno === 1054)
            throw new SqlFailure('missing', (error as Error).message, { cause: error });
          throw error;
        }
        const names = table.columns.map((c) => c.name);
        return rowsPageFrom(table, names, out.rows, out.over);
      }, signal),

    namedQuery: (sql, params, limits) =>
      withConnection(
        (connection, spoil) => streamed({ connection, spoil, sql, params, limits }),
        limits.signal,
      ),

    readOnlyQuery: (sql, params, limits) =>
      withConnection(async (connection, spoilConnection, defer) => {
        let spoiled = false;
        const discarded = new AbortController();
        const spoil = (): void => {
          spoiled = true;
          discarded.abort();
          spoilConnection();
        };
        let out: QueryOutput;
        /** The session reset written behind the statement, once the statement went out. */
        let ending: Promise<void> | undefined;
        try {
          // The transaction, not the session's read-only default, is what holds a statement that
          // makes itself writable: SET STATEMENT tx_read_only = 0 FOR INSERT … writes in
          // autocommit. Its start and the statement's preparing (which runs nothing) go out
          // together; the statement is executed only once the transaction has answered that it
          // began.
          // The fresh grant check (SHOW GRANTS, unless allowed) goes out with them too: what it
          // refuses is refused before anything is executed.
          let statement: unknown;
          let lines: Record<string, string>[] = [];
          const checked = !options.allowPrivilegedRole;
          const outcomes = await pipeline(
            connection,
            [
              ...(checked
                ? [queryStep('SHOW GRANTS', (rows) => (lines = rows as typeof lines))]
                : []),
              queryStep('START TRANSACTION READ ONLY'),
              prepareStep(sql, true, (s) => (statement = s)),
            ],
            RUN_TIMEOUT_MS,
          );
          const [shown, begun, parsed] = checked ? outcomes : [null, ...outcomes];
          if (shown) throw shown;
          if (checked) {
            const refusal = await refusalOf(connection, lines);
            if (refusal !== undefined) throw new SqlFailure('refused', refusal);
          }
          if (begun) throw begun;
          if (parsed) throw parsed;
          // The reset (and the session's statement) are written behind the statement, run by the
          // server once it ends, however it ends; the answer does not wait for them.
          const again = prepared.get(connection);
          const issue =
            again === undefined
              ? undefined
              : (values: unknown[], listen: (query: NodeJS.EventEmitter) => void): void => {
                  forgetStatements(connection);
                  const steps = [
                    executeStep(statement, sql, values, listen),
                    resetStep,
                    queryStep(again),
                  ];
                  // the statement's own deadline is streamRows'; the reset's starts as it ends
                  const bounds = { timedFrom: 1, abandoned: discarded.signal };
                  ending = tracked(pipelineAll(connection, steps, resetWithinMs, bounds));
                };
          out = await streamed({ connection, spoil, sql, params, limits, issue });
        } catch (error) {
          // a connection that failed (killed, lost) takes no more commands: it is discarded as it is
          if ((error as { fatal?: unknown }).fatal === true) spoil();
          if (!spoiled) await (ending ?? resetSession(connection)).catch(spoil);
          throw error;
        }
        // Whatever the statement left (user variables, temporary tables, locks) goes with the reset,
        // after the answer and before the connection serves again; a discarded connection takes it
        // all with it.
        if (!spoiled) defer(() => ending ?? resetSession(connection));
        return out;
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
      await Promise.allSettled([...resetting]);
      const { pool } = await loaded;
      await new Promise<void>((resolve) => pool.end(() => resolve()));
    },
  };
}
