/**
 * The PostgreSQL dialect: `pg` (loaded on first use) with one pool per source of at most `pool.max`
 * connections (default 4), each starting with `default_transaction_read_only=on` and a
 * `statement_timeout` (postgres-pool.ts). Table pages, named queries, introspection and `sql_query`
 * calls all take their connection from it, so concurrent calls queue for a connection instead of
 * opening backends. Dropped connections are discarded by the pool (an error handler keeps them from
 * crashing the process); a call that meets one is retried once on a fresh connection, and while the
 * server stays unreachable calls fail fast for a growing backoff (250 ms doubling to 5 s), so a dead
 * database costs nothing per request and the source recovers by itself when it answers again.
 *
 * A `sql_query` statement runs in BEGIN READ ONLY with its own statement_timeout and a role check,
 * alone through the extended protocol (one statement per Parse: stacked statements are refused by
 * the server), then ROLLBACK and what DISCARD ALL does (END_AND_RESET), so no session state
 * (settings, advisory locks) outlives the call on the pooled connection — all of it one write and
 * one round trip (postgres-read-only.ts, postgres-pipeline.ts); the answer goes out as soon as the
 * statement's rows are in. The transaction is what keeps the statement's commit-able effects from
 * committing: in autocommit on a read-only connection a SELECT still creates large objects
 * (lo_create, lo_from_bytea) and sends notifications (pg_notify).
 *
 * Every statement of unknown size is read through the byte-bounded wrapper of budget.ts
 * (postgres-bounded-read.ts: values past the budget are never sent), and every one can be cancelled: when
 * the call's signal aborts, a cancel reaches the backend at once (pg_cancel_backend over a
 * short-lived connection, which needs no free pool slot) and the connection is discarded rather
 * than reused.
 */
import type PgNs from 'pg';
import type { Logger } from '../../core/log.js';
import { postgresBoundedRows } from './budget.js';
import { quoteIdent, rowsPageFrom, SqlFailure, type Dialect } from './dialect.js';
import { pooled, type Work as PooledWork } from './pooled.js';
import { queryNamed } from './postgres-named.js';
import { classify } from './postgres-classify.js';
import { readBounded, rowsWithin, ShapeCache, withFreshShape } from './postgres-bounded-read.js';
import { listenOn } from './postgres-listen.js';
import { postgresPool } from './postgres-pool.js';
import { pgColumnsOfTypes } from './postgres-types.js';
import { readOnlyQuery } from './postgres-read-only.js';
import { createRoleCheck } from './postgres-role.js';
import { FINGERPRINT, introspect } from './postgres-schema.js';

export interface PostgresDialectOptions {
  url: string;
  schema: string;
  statementTimeoutMs: number;
  allowPrivilegedRole: boolean;
  /** Most connections the source's pool opens. @default 4 */
  poolMax?: number | undefined;
  logger: Logger;
}

/** Work on one pooled connection; `spoil()` makes it be discarded instead of returned. */
type Work<T> = PooledWork<PgNs.PoolClient, T>;

export function postgresDialect(options: PostgresDialectOptions): Dialect {
  const { schema } = options;
  const driver = postgresPool(options);
  const shapes = new ShapeCache();

  /**
   * Runs `work` on a pooled connection (pooled.ts: retried once when the connection failed, then
   * backoff). When `signal` aborts, the backend's statement is cancelled, the call rejects at once
   * and the connection is discarded.
   */
  const gate = pooled<PgNs.PoolClient>({
    acquire: async () => (await driver.load()).pool.connect(),
    release: (client, discard) => client.release(discard ? true : undefined),
    cancel: (client) => {
      const pid = (client as unknown as { processID?: number | null }).processID;
      if (typeof pid === 'number') void driver.cancelBackend(pid);
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

  const roleCheck = createRoleCheck(options.allowPrivilegedRole);

  return {
    kind: 'postgres',

    introspect: () => withClient((client) => introspect(client, schema)),

    rowsPage: (table, after, { limit, maxBytes, signal }) =>
      withClient(async (client, spoil) => {
        // The introspected columns, named: one round trip, no shape query. A column dropped since is
        // 'missing' (the schema is read again); rows past the budget arrive blank, so the page's rows
        // are bounded without a cursor.
        const names = table.columns.map((c) => c.name);
        const { sql, values } = pageStatement(
          schema,
          table.name,
          names,
          table.pageKey,
          after,
          limit,
        );
        const { types } = await driver.load();
        const { sizing, rowWidth } = pgColumnsOfTypes(table.columns.map((c) => c.type));
        let result: PgNs.QueryArrayResult;
        try {
          // named: parsed once per connection (postgres-named.ts)
          result = await queryNamed(client, spoil, {
            text: postgresBoundedRows(sql, sizing, maxBytes, rowWidth, limit),
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
        const out = rowsWithin(result.rows, names, { maxRows: result.rows.length, maxBytes });
        return rowsPageFrom(table, names, out.rows, out.over);
      }, signal),

    namedQuery: (sql, params, limits) =>
      withClient(async (client) => {
        const loaded = await driver.load();
        return withFreshShape(() => readBounded(client, loaded, shapes, sql, params, limits));
      }, limits.signal),

    // A stale shape fails the transaction: the retry runs in a transaction of its own.
    readOnlyQuery: (sql, params, limits) =>
      withClient(async (client, spoil, defer) => {
        const { types } = await driver.load();
        const call = { client, types, shapes, roleCheck, spoil, defer };
        return withFreshShape(() => readOnlyQuery(call, sql, params, limits));
      }, limits.signal),

    forgetShapes: () => shapes.forget(),

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
      const { pg } = await driver.load();
      try {
        return await listenOn(pg, driver.clientConfig, channel, onNotify, onError);
      } catch (error) {
        throw classify(error);
      }
    },

    async close() {
      gate.close();
      await driver.end();
    },
  };
}

/**
 * One keyset page of a table: its columns `names`, `limit` rows after the page key `after` in key
 * order (a first page only, in the server's order, without a key), parameters bound.
 */
function pageStatement(
  schema: string,
  table: string,
  names: readonly string[],
  pageKey: readonly string[],
  after: unknown[] | undefined,
  limit: number,
): { sql: string; values: unknown[] } {
  const select = `SELECT ${names.map(quoteIdent).join(', ')} FROM ${quoteIdent(schema)}.${quoteIdent(table)}`;
  // No stable key: a first page only, in whatever order the server returns it.
  if (pageKey.length === 0) return { sql: `${select} LIMIT $1`, values: [limit] };
  const keys = pageKey.map(quoteIdent);
  const lhs = keys.length === 1 ? keys[0]! : `(${keys.join(', ')})`;
  const rhs = keys.length === 1 ? '$1' : `(${keys.map((_, i) => `$${i + 1}`).join(', ')})`;
  const where = after === undefined ? '' : ` WHERE ${lhs} > ${rhs}`;
  const values = after === undefined ? [limit] : [...after, limit];
  return {
    sql: `${select}${where} ORDER BY ${keys.join(', ')} LIMIT $${values.length}`,
    values,
  };
}
