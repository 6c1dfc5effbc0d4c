/**
 * The PostgreSQL dialect: `pg` (loaded on first use) with one pool per source of at most `pool.max`
 * connections (default 4), each starting with `default_transaction_read_only=on` and a
 * `statement_timeout`. Table pages, named queries, introspection and `sql_query` calls all take
 * their connection from it, so concurrent calls queue for a connection instead of opening backends.
 * Dropped connections are discarded by the pool (an error handler keeps them from crashing the
 * process); a call that meets one is retried once on a fresh connection, and while the server stays
 * unreachable calls fail fast for a growing backoff (250 ms doubling to 5 s), so a dead database
 * costs nothing per request and the source recovers by itself when it answers again.
 *
 * A `sql_query` statement runs in BEGIN READ ONLY with SET LOCAL statement_timeout and a role
 * check, alone through the extended protocol (one statement per Parse: stacked statements are
 * refused by the server), then ROLLBACK and DISCARD ALL, so no session state (settings, advisory
 * locks) outlives the call on the pooled connection.
 *
 * Every statement of unknown size is read through the byte-bounded wrapper of budget.ts (values
 * past the budget are never sent), and every one can be cancelled: when the call's signal aborts,
 * a cancel reaches the backend at once (pg_cancel_backend over a short-lived connection, which
 * needs no free pool slot) and the connection is discarded rather than reused.
 */
import type PgNs from 'pg';
import type CursorNs from 'pg-cursor';
import type { Logger } from '../../core/log.js';
import { BudgetMeter, postgresBounded } from './budget.js';
import {
  quoteIdent,
  SqlFailure,
  type Dialect,
  type QueryLimits,
  type QueryOutput,
  type RowsPage,
} from './dialect.js';
import { wrappable } from './guard.js';
import { DEFAULT_POOL_MAX } from './options.js';
import { pooled, type Work as PooledWork } from './pooled.js';
import { connectUnlessAborted, listenOn } from './postgres-connect.js';
import { createRoleCheck } from './postgres-role.js';
import { FINGERPRINT, introspect } from './postgres-schema.js';

type Pg = typeof PgNs;
type Cursor = typeof CursorNs;

export interface PostgresDialectOptions {
  url: string;
  schema: string;
  statementTimeoutMs: number;
  allowPrivilegedRole: boolean;
  /** Most connections the source's pool opens. @default 4 */
  poolMax?: number;
  logger: Logger;
}

/** Date and time types stay as PostgreSQL prints them: no precision or time zone lost to JS Date. */
const RAW_TEXT_TYPES = new Set([1082, 1083, 1114, 1184, 1186, 1266]);
const INT8 = 20;
/** Rows fetched per round trip from a bounded cursor (values past the byte budget arrive blank). */
const BATCH_ROWS = 200;

interface Loaded {
  pg: Pg;
  Cursor: Cursor;
  pool: PgNs.Pool;
  types: PgNs.CustomTypesConfig;
}

/** Work on one pooled connection; `spoil()` makes it be discarded instead of returned. */
type Work<T> = PooledWork<PgNs.PoolClient, T>;

export function postgresDialect(options: PostgresDialectOptions): Dialect {
  const { schema, logger } = options;
  let loaded: Promise<Loaded> | undefined;

  const load = () => {
    loaded ??= (async () => {
      const pg = (await import('pg')).default;
      const Cursor = onceFailingCursor((await import('pg-cursor')).default);
      const types: PgNs.CustomTypesConfig = {
        getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
          if (RAW_TEXT_TYPES.has(oid)) return (value: string) => value;
          if (oid === INT8)
            return (value: string) => (Number.isSafeInteger(Number(value)) ? Number(value) : value);
          return pg.types.getTypeParser(oid, format ?? 'text');
        }) as PgNs.CustomTypesConfig['getTypeParser'],
      };
      const pool = new pg.Pool({
        ...clientConfig(options),
        types,
        max: options.poolMax ?? DEFAULT_POOL_MAX,
        idleTimeoutMillis: 10_000,
      });
      pool.on('error', (error) =>
        logger.warn(
          { err: error.message },
          'sql: an idle PostgreSQL connection failed; it was discarded',
        ),
      );
      // The pool listens for a client's errors only while it is idle; a connection that dies while
      // checked out, or after a release that discards it, emits 'error' too (besides failing its
      // query), which with no listener ends the process. Every client the pool makes carries this
      // listener for its whole life, from the moment it connected ('connect' is emitted before the
      // pool hands it out; while connecting, pg reports errors to the connect callback instead).
      pool.on('connect', (client) => void client.on('error', ignoreClientError));
      return { pg, Cursor, pool, types };
    })();
    return loaded;
  };

  /** Asks the server to cancel what backend `pid` runs, over a connection of its own. */
  const cancelBackend = async (pid: number): Promise<void> => {
    const { pg } = await load();
    const client = new pg.Client({ ...clientConfig(options), connectionTimeoutMillis: 2000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query({ text: 'SELECT pg_catalog.pg_cancel_backend($1)', values: [pid] });
    } catch (error) {
      logger.warn(
        { err: (error as Error).message, pid },
        'sql: could not cancel an abandoned PostgreSQL statement; it runs until its statement_timeout',
      );
    } finally {
      await client.end().catch(() => undefined);
    }
  };

  /**
   * Runs `work` on a pooled connection (pooled.ts: retried once when the connection failed, then
   * backoff). When `signal` aborts, the backend's statement is cancelled, the call rejects at once
   * and the connection is discarded.
   */
  const gate = pooled<PgNs.PoolClient>({
    acquire: async (signal) => connectUnlessAborted((await load()).pool, signal),
    release: (client, discard) => client.release(discard ? true : undefined),
    cancel: (client) => {
      const pid = (client as unknown as { processID?: number | null }).processID;
      if (typeof pid === 'number') void cancelBackend(pid);
    },
    // A connection lost mid-statement fails the call at once: a cursor read on it never calls back.
    onLost: (client, onLost) => {
      client.once('error', onLost);
      client.once('end', onLost);
      return () => {
        client.off('error', onLost);
        client.off('end', onLost);
      };
    },
    classify,
    discards: (failure) => failure.kind === 'unavailable',
    retryStarted: true,
  });
  const withClient = <T>(work: Work<T>, signal?: AbortSignal): Promise<T> => gate.run(work, signal);

  /**
   * Runs `sql` through the byte-bounded wrapper: first its shape (`LIMIT 0`: names and types, no
   * rows), then its rows through a cursor, at most `maxRows` of them and no value past `maxBytes`.
   */
  const bounded = async (
    client: PgNs.ClientBase,
    sql: string,
    params: unknown[],
    limits: Pick<QueryLimits, 'maxRows' | 'maxBytes'>,
  ): Promise<QueryOutput> => {
    const { Cursor, types } = await load();
    const wrap = wrappable(sql, 'postgres');
    if ('reason' in wrap) throw new SqlFailure('refused', wrap.reason);
    const inner = wrap.body;
    const shape = await client.query({
      text: `SELECT * FROM (${inner}\n) AS q LIMIT 0`,
      values: params,
      rowMode: 'array',
      types,
    });
    const columns = shape.fields.map((f) => f.name);
    const cursor = client.query(
      new Cursor(postgresBounded(inner, columns.length, limits.maxBytes), params, {
        rowMode: 'array',
        types,
      }),
    );
    const rows: unknown[][] = [];
    let truncated = false;
    let over: QueryOutput['over'];
    let used = 0;
    try {
      reading: for (;;) {
        const want = Math.min(BATCH_ROWS, limits.maxRows + 1 - rows.length);
        const batch = await new Promise<unknown[][]>((resolve, reject) =>
          cursor.read(want, (error, got) => (error ? reject(error) : resolve(got as unknown[][]))),
        );
        for (const row of batch) {
          const rowBytes = Number(row[columns.length]);
          const running = Number(row[columns.length + 1]);
          if (running > limits.maxBytes) {
            over = { row: rows.length, rowBytes, usedBytes: used, budget: limits.maxBytes };
            break reading;
          }
          if (rows.length === limits.maxRows) {
            truncated = true;
            break reading;
          }
          used = running;
          rows.push(row.slice(0, columns.length));
        }
        if (batch.length < want) break;
      }
    } finally {
      await cursor.close();
    }
    return { columns, rows, truncated, ...(over === undefined ? {} : { over }) };
  };

  const roleCheck = createRoleCheck(options.allowPrivilegedRole);
  /** Runs `body` in a read-only transaction, then leaves the connection as it was found. */
  const readOnly = async <T>(
    client: PgNs.ClientBase,
    spoil: () => void,
    timeoutMs: number,
    body: () => Promise<T>,
  ): Promise<T> => {
    const ms = Math.max(1, Math.floor(timeoutMs));
    const check = roleCheck.begin();
    const setup = (await client.query(
      `BEGIN TRANSACTION READ ONLY; SET LOCAL statement_timeout = ${ms}; SET LOCAL idle_in_transaction_session_timeout = ${ms * 2}${check.sql}`,
    )) as unknown as PgNs.QueryResult[];
    try {
      const refusal = check.refusal(setup);
      if (refusal !== undefined) throw new SqlFailure('refused', refusal);
      return await body();
    } finally {
      // ROLLBACK ends the transaction; DISCARD ALL drops what outlives one (advisory locks, settings).
      try {
        await client.query('ROLLBACK');
        await client.query('DISCARD ALL');
      } catch {
        spoil();
      }
    }
  };

  return {
    kind: 'postgres',

    introspect: () => withClient((client) => introspect(client, schema)),

    rowsPage: (table, after, { limit, maxBytes, signal }) =>
      withClient(async (client): Promise<RowsPage> => {
        const target = `${quoteIdent(schema)}.${quoteIdent(table.name)}`;
        // The introspected columns, named: one round trip, no shape query. A column dropped since is
        // 'missing' (the schema is read again); rows past the budget arrive blank, so the page's rows
        // are bounded without a cursor.
        const names = table.columns.map((c) => c.name);
        const select = `SELECT ${names.map(quoteIdent).join(', ')} FROM ${target}`;
        let sql: string;
        let values: unknown[];
        if (table.pageKey.length === 0) {
          // No stable key: a first page only, in whatever order the server returns it.
          sql = `${select} LIMIT $1`;
          values = [limit];
        } else {
          const keys = table.pageKey.map(quoteIdent);
          const lhs = keys.length === 1 ? keys[0]! : `(${keys.join(', ')})`;
          const rhs = keys.length === 1 ? '$1' : `(${keys.map((_, i) => `$${i + 1}`).join(', ')})`;
          const where = after === undefined ? '' : ` WHERE ${lhs} > ${rhs}`;
          values = [...(after ?? []), limit];
          sql = `${select}${where} ORDER BY ${keys.join(', ')} LIMIT $${values.length}`;
        }
        const { types } = await load();
        let result: PgNs.QueryArrayResult;
        try {
          result = await client.query({
            text: postgresBounded(sql, names.length, maxBytes),
            values,
            rowMode: 'array',
            types,
          });
        } catch (error) {
          const code = (error as { code?: unknown }).code;
          if (code === '42703' || code === '42P10')
            throw new SqlFailure('missing', (error as Error).message, { cause: error });
          throw error;
        }
        const meter = new BudgetMeter(maxBytes);
        const rows: Record<string, unknown>[] = [];
        for (const row of result.rows) {
          if (!meter.add(Number(row[names.length]))) break;
          rows.push(Object.fromEntries(names.map((n, i) => [n, row[i]])));
        }
        return {
          rows,
          keys: rows.map((r) => table.pageKey.map((k) => r[k])),
          ...(meter.over === undefined ? {} : { over: meter.over }),
        };
      }, signal),

    namedQuery: (sql, params, limits) =>
      withClient((client) => bounded(client, sql, params, limits), limits.signal),

    readOnlyQuery: (sql, params, limits) =>
      withClient(
        (client, spoil) =>
          readOnly(client, spoil, limits.timeoutMs, () => bounded(client, sql, params, limits)),
        limits.signal,
      ),

    distinct: (table, column, prefix, limit) =>
      withClient(async (client) => {
        const col = quoteIdent(column);
        // Values longer than a completion could use are left out rather than sent.
        const sql =
          `SELECT DISTINCT ${col}::text AS v FROM ${quoteIdent(schema)}.${quoteIdent(table.name)} ` +
          `WHERE left(${col}::text, $1) = $2 AND octet_length(${col}::text) <= 4096 ORDER BY 1 LIMIT $3`;
        const result = await client.query<{ v: string }>({
          text: sql,
          values: [prefix.length, prefix, limit],
        });
        return result.rows.map((r) => r.v);
      }),

    ping: () =>
      withClient(async (client) => {
        await client.query('SELECT 1');
      }),

    roleRefusal: () => withClient((client) => roleCheck.now(client)),

    fingerprint: () =>
      withClient(async (client) => {
        const result = await client.query<{ name: string; f: string }>({
          text: FINGERPRINT,
          values: [schema],
        });
        return new Map(result.rows.map((r) => [r.name, r.f]));
      }),

    async listen(channel, onNotify, onError) {
      const { pg } = await load();
      try {
        return await listenOn(pg, clientConfig(options), channel, onNotify, onError);
      } catch (error) {
        throw classify(error);
      }
    },

    async close() {
      gate.close();
      if (loaded === undefined) return;
      const { pool } = await loaded;
      await pool.end().catch(() => undefined);
    },
  };
}

/**
 * pg-cursor with a second failure ignored. pg arms a read timer (`query_timeout`) for every query
 * and, as a cursor never calls pg's callback, the timer is never cleared: it fails the cursor again
 * later. A cursor already failed while queued on a dead connection (never submitted, so without a
 * connection) then threw a TypeError from a timer — ending the process — and one failed after
 * submission sent a stray Sync on a connection since reused. The first failure is the answer.
 */
function onceFailingCursor(Base: Cursor): Cursor {
  const fail = (
    Base.prototype as unknown as { handleError(this: unknown, ...args: unknown[]): void }
  ).handleError;
  return class OnceFailingCursor extends Base {
    handleError(...args: unknown[]): void {
      if ((this as unknown as { state?: string }).state === 'error') return;
      fail.apply(this, args);
    }
  } as Cursor;
}

/** A client's 'error' is also its query's failure (classified there) or the pool's (logged there). */
function ignoreClientError(): void {}

function clientConfig(options: PostgresDialectOptions): PgNs.ClientConfig {
  return {
    connectionString: options.url,
    application_name: 'reservoir',
    connectionTimeoutMillis: 5000,
    // Every transaction is read-only unless a statement says otherwise; reads have a deadline;
    // unqualified names in named queries and sql_query resolve in the served schema first.
    options:
      `-c default_transaction_read_only=on -c statement_timeout=${options.statementTimeoutMs}` +
      (/^[A-Za-z_][A-Za-z0-9_]*$/.test(options.schema)
        ? ` -c search_path=${options.schema},public`
        : ''),
    query_timeout: options.statementTimeoutMs + 5000,
  };
}

/** Backends ended under a statement: terminated (pg_terminate_backend, 57P01) or shut down in a crash (57P02). */
const TERMINATED_SQLSTATES: Record<string, string> = {
  '57P01': 'the server terminated the backend',
  '57P02': 'the server shut down after a crash',
};
/** Socket errors of a connection that was open: reset, closed under a write, aborted. */
const LOST_ERRNOS = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ENOTCONN', 'ETIMEDOUT']);
/** What pg says when the socket ended, or when a client is used after its connection failed. */
const LOST_MESSAGES =
  /Connection terminated|connection error and is not queryable|Client was closed and is not queryable|the connection to the database ended/i;

/**
 * Classifies a pg or network error: a lost connection (a terminated backend, a reset or broken
 * socket, pg's "Connection terminated") as unavailable, worded as such; then by SQLSTATE class.
 * An errno code (`EPIPE`, `EBUSY`: five capitals, like a SQLSTATE) is never read as one — no
 * SQLSTATE class starts with E — so a broken pipe is never an 'invalid' statement.
 */
export function classify(error: unknown): SqlFailure {
  if (error instanceof SqlFailure) return error;
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown }).code;
  const errno = typeof code === 'string' && /^E[A-Z]{2,}$/.test(code) ? code : undefined;
  const sqlstate =
    errno === undefined && typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)
      ? code
      : undefined;
  const lost =
    (sqlstate !== undefined ? TERMINATED_SQLSTATES[sqlstate] : undefined) ??
    (errno !== undefined && LOST_ERRNOS.has(errno) ? `the socket failed: ${errno}` : undefined) ??
    (sqlstate === undefined && LOST_MESSAGES.test(message) ? message : undefined);
  if (lost !== undefined)
    return new SqlFailure(
      'unavailable',
      `the connection to the database was lost (${lost}); try again`,
      { cause: error },
    );
  if (sqlstate === '57P03')
    return new SqlFailure(
      'unavailable',
      `the database does not accept connections now (${message})`,
      { cause: error },
    );
  if (sqlstate === undefined) return new SqlFailure('unavailable', message, { cause: error });
  if (sqlstate === '57014') return new SqlFailure('timeout', message, { cause: error });
  if (sqlstate === '25006' || sqlstate === '42501' || sqlstate === '0A000')
    return new SqlFailure('refused', message, { cause: error });
  if (sqlstate === '42601' && /multiple commands/.test(message))
    return new SqlFailure('refused', message, { cause: error });
  if (sqlstate === '42P01' || sqlstate === '3F000')
    return new SqlFailure('missing', message, { cause: error });
  if (
    /^(08|53|57P|58)/.test(sqlstate) ||
    sqlstate === '3D000' ||
    sqlstate === '28000' ||
    sqlstate === '28P01'
  ) {
    return new SqlFailure('unavailable', message, { cause: error });
  }
  return new SqlFailure('invalid', message, { cause: error });
}
