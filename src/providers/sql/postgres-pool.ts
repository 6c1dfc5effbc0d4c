/**
 * The PostgreSQL driver of one source, loaded on first use: `pg`, the pool (at most
 * `pool.max` connections, each starting read-only with a `statement_timeout` and the served schema
 * first on its search path), the type parsers that keep dates and times as PostgreSQL prints them,
 * and the short-lived connection that cancels a backend's statement.
 */
import type PgNs from 'pg';
import type { Logger } from '../../core/log.js';
import { DEFAULT_POOL_MAX } from './options.js';

type Pg = typeof PgNs;

export interface PostgresPoolOptions {
  url: string;
  schema: string;
  statementTimeoutMs: number;
  /** Most connections the source's pool opens. @default 4 */
  poolMax?: number | undefined;
  logger: Logger;
}

/** The loaded driver: the module, the pool and the type parsers every query uses. */
export interface LoadedPostgres {
  pg: Pg;
  pool: PgNs.Pool;
  types: PgNs.CustomTypesConfig;
}

export interface PostgresPool {
  /** The driver and pool, loaded and made on the first call. */
  load(): Promise<LoadedPostgres>;
  /** A client's configuration, for a connection outside the pool (LISTEN). */
  readonly clientConfig: PgNs.ClientConfig;
  /** Asks the server to cancel what backend `pid` runs, over a connection of its own. */
  cancelBackend(pid: number): Promise<void>;
  /** Ends the pool, if it was made. */
  end(): Promise<void>;
}

/** Date and time types stay as PostgreSQL prints them: no precision or time zone lost to JS Date. */
const RAW_TEXT_TYPES = new Set([1082, 1083, 1114, 1184, 1186, 1266]);
const INT8 = 20;

export function postgresPool(options: PostgresPoolOptions): PostgresPool {
  const { logger } = options;
  const config = clientConfig(options);
  let loaded: Promise<LoadedPostgres> | undefined;

  const load = (): Promise<LoadedPostgres> => {
    loaded ??= (async () => {
      const pg = (await import('pg')).default;
      const types: PgNs.CustomTypesConfig = {
        getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
          if (RAW_TEXT_TYPES.has(oid)) return (value: string) => value;
          if (oid === INT8)
            return (value: string) => (Number.isSafeInteger(Number(value)) ? Number(value) : value);
          return pg.types.getTypeParser(oid, format ?? 'text');
        }) as PgNs.CustomTypesConfig['getTypeParser'],
      };
      const pool = new pg.Pool({
        ...config,
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
      return { pg, pool, types };
    })();
    return loaded;
  };

  const cancelBackend = async (pid: number): Promise<void> => {
    const { pg } = await load();
    const client = new pg.Client({ ...config, connectionTimeoutMillis: 2000 });
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

  const end = async (): Promise<void> => {
    if (loaded === undefined) return;
    const { pool } = await loaded;
    await pool.end().catch(() => undefined);
  };

  return { load, clientConfig: config, cancelBackend, end };
}

/** A client's 'error' is also its query's failure (classified there) or the pool's (logged there). */
function ignoreClientError(): void {}

function clientConfig(options: PostgresPoolOptions): PgNs.ClientConfig {
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
