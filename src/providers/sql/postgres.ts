/**
 * The PostgreSQL dialect: `pg` (loaded on first use) with a small pool whose every connection starts
 * with `default_transaction_read_only=on` and a `statement_timeout`. Dropped connections are
 * discarded by the pool (an error handler keeps them from crashing the process); a call that meets
 * one is retried once on a fresh connection, and while the server stays unreachable calls fail fast
 * for a growing backoff (250 ms doubling to 5 s) so a dead database costs nothing per request.
 *
 * `sql_query` statements get their own short-lived connection: BEGIN READ ONLY, SET LOCAL
 * statement_timeout, a role check, the statement alone through the extended protocol (one
 * statement per Parse: stacked statements are refused by the server), a row cap through a portal
 * (pg-cursor), then ROLLBACK and disconnect, so no session state (settings, advisory locks) outlives
 * the call.
 */
import type PgNs from 'pg';
import type CursorNs from 'pg-cursor';
import type { Logger } from '../../core/log.js';
import { byName, quoteIdent, SqlFailure, type Dialect, type QueryLimits, type QueryOutput, type RowsPage, type TableInfo } from './dialect.js';

type Pg = typeof PgNs;
type Cursor = typeof CursorNs;

export interface PostgresDialectOptions {
  url: string;
  schema: string;
  statementTimeoutMs: number;
  allowPrivilegedRole: boolean;
  logger: Logger;
}

/** Date and time types stay as PostgreSQL prints them: no precision or time zone lost to JS Date. */
const RAW_TEXT_TYPES = new Set([1082, 1083, 1114, 1184, 1186, 1266]);
const INT8 = 20;
const BACKOFF_MIN_MS = 250;
const BACKOFF_MAX_MS = 5000;

export function postgresDialect(options: PostgresDialectOptions): Dialect {
  const { schema, logger } = options;
  let loaded: Promise<{ pg: Pg; Cursor: Cursor; pool: PgNs.Pool; types: PgNs.CustomTypesConfig }> | undefined;
  let backoffMs = 0;
  let downUntil = 0;
  const watched = new WeakSet<PgNs.PoolClient>();
  let closed = false;

  const load = () => {
    loaded ??= (async () => {
      const pg = (await import('pg')).default;
      const Cursor = (await import('pg-cursor')).default;
      const types: PgNs.CustomTypesConfig = {
        getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
          if (RAW_TEXT_TYPES.has(oid)) return (value: string) => value;
          if (oid === INT8) return (value: string) => (Number.isSafeInteger(Number(value)) ? Number(value) : value);
          return pg.types.getTypeParser(oid, format ?? 'text');
        }) as PgNs.CustomTypesConfig['getTypeParser'],
      };
      const pool = new pg.Pool({ ...clientConfig(options), types, max: 4, idleTimeoutMillis: 10_000 });
      pool.on('error', (error) => logger.warn({ err: error.message }, 'sql: an idle PostgreSQL connection failed; it was discarded'));
      return { pg, Cursor, pool, types };
    })();
    return loaded;
  };

  /** Runs `work` on a pooled connection: retried once when the connection failed, then backoff. */
  const withClient = async <T>(work: (client: PgNs.PoolClient) => Promise<T>): Promise<T> => {
    if (closed) throw new SqlFailure('unavailable', 'the source is closed');
    if (Date.now() < downUntil) throw new SqlFailure('unavailable', `the database is unreachable; retrying in ${downUntil - Date.now()} ms`);
    const { pool } = await load();
    for (let attempt = 0; ; attempt += 1) {
      let client: PgNs.PoolClient | undefined;
      try {
        client = await pool.connect();
        // The pool listens for errors only while a client is idle; a connection that dies while
        // checked out emits 'error' too (besides failing its query), which would end the process.
        if (!watched.has(client)) {
          watched.add(client);
          client.on('error', () => undefined);
        }
        const result = await work(client);
        client.release();
        backoffMs = 0;
        return result;
      } catch (error) {
        const failure = classify(error);
        client?.release(failure.kind === 'unavailable' ? true : undefined);
        if (failure.kind !== 'unavailable') throw failure;
        if (attempt === 0 && !closed) continue;
        backoffMs = Math.min(BACKOFF_MAX_MS, Math.max(BACKOFF_MIN_MS, backoffMs * 2));
        downUntil = Date.now() + backoffMs;
        throw failure;
      }
    }
  };

  const capped = async (client: PgNs.ClientBase, Cursor: Cursor, types: PgNs.CustomTypesConfig, sql: string, params: unknown[], maxRows: number): Promise<QueryOutput> => {
    const cursor = client.query(new Cursor(sql, params, { rowMode: 'array', types }));
    const { rows, fields } = await new Promise<{ rows: unknown[][]; fields: { name: string }[] }>((resolve, reject) => {
      cursor.read(maxRows + 1, (error, rows, result) => (error ? reject(error) : resolve({ rows: rows as unknown[][], fields: result?.fields ?? [] })));
    });
    await cursor.close();
    const truncated = rows.length > maxRows;
    return { columns: fields.map((f) => f.name), rows: truncated ? rows.slice(0, maxRows) : rows, truncated };
  };

  return {
    kind: 'postgres',

    introspect: () => withClient((client) => introspect(client, schema)),

    rowsPage: (table, after, limit) =>
      withClient(async (client): Promise<RowsPage> => {
        const target = `${quoteIdent(schema)}.${quoteIdent(table.name)}`;
        if (table.pageKey.length === 0) {
          // No stable key: a first page only, in whatever order the server returns it.
          const result = await client.query<Record<string, unknown>>({ text: `SELECT * FROM ${target} LIMIT $1`, values: [limit] });
          return { rows: result.rows, keys: result.rows.map(() => []) };
        }
        const keys = table.pageKey.map(quoteIdent);
        const lhs = keys.length === 1 ? keys[0]! : `(${keys.join(', ')})`;
        const rhs = keys.length === 1 ? '$1' : `(${keys.map((_, i) => `$${i + 1}`).join(', ')})`;
        const where = after === undefined ? '' : ` WHERE ${lhs} > ${rhs}`;
        const values = [...(after ?? []), limit];
        const sql = `SELECT * FROM ${target}${where} ORDER BY ${keys.join(', ')} LIMIT $${values.length}`;
        const result = await client.query<Record<string, unknown>>({ text: sql, values });
        return { rows: result.rows, keys: result.rows.map((r) => table.pageKey.map((k) => r[k])) };
      }),

    async namedQuery(sql, params, limits) {
      const { Cursor, types } = await load();
      return withClient((client) => capped(client, Cursor, types, sql, params, limits.maxRows));
    },

    async readOnlyQuery(sql, params, limits: QueryLimits) {
      if (closed) throw new SqlFailure('unavailable', 'the source is closed');
      const { pg, Cursor, types } = await load();
      const client = new pg.Client({ ...clientConfig(options), types });
      client.on('error', () => undefined); // a connection dropped mid-call fails the call, never the process
      try {
        await client.connect();
        const ms = Math.max(1, Math.floor(limits.timeoutMs));
        const setup = (await client.query(
          `BEGIN TRANSACTION READ ONLY; SET LOCAL statement_timeout = ${ms}; SET LOCAL idle_in_transaction_session_timeout = ${ms * 2}; ${ROLE_CHECK}`,
        )) as unknown as PgNs.QueryResult[];
        const role = setup[setup.length - 1]?.rows[0] as Record<string, unknown> | undefined;
        const privileges = ['superuser', 'read_files', 'write_files', 'programs', 'signal'].filter((p) => role?.[p] === true);
        if (privileges.length > 0 && !options.allowPrivilegedRole) {
          throw new SqlFailure(
            'refused',
            `sql_query will not run as role ${String(role?.['role'])} (${privileges.join(', ')}): connect as a role that may only read (see docs/providers/sql.md), or set allowPrivilegedRole`,
          );
        }
        const output = await capped(client, Cursor, types, sql, params, limits.maxRows);
        await client.query('ROLLBACK');
        return output;
      } catch (error) {
        throw error instanceof SqlFailure ? error : classify(error);
      } finally {
        await client.end().catch(() => undefined);
      }
    },

    distinct: (table, column, prefix, limit) =>
      withClient(async (client) => {
        const col = quoteIdent(column);
        const sql =
          `SELECT DISTINCT ${col}::text AS v FROM ${quoteIdent(schema)}.${quoteIdent(table.name)} ` +
          `WHERE left(${col}::text, $1) = $2 ORDER BY 1 LIMIT $3`;
        const result = await client.query<{ v: string }>({ text: sql, values: [prefix.length, prefix, limit] });
        return result.rows.map((r) => r.v);
      }),

    ping: () =>
      withClient(async (client) => {
        await client.query('SELECT 1');
      }),

    fingerprint: () =>
      withClient(async (client) => {
        const result = await client.query<{ name: string; f: string }>({ text: FINGERPRINT, values: [schema] });
        return new Map(result.rows.map((r) => [r.name, r.f]));
      }),

    async listen(channel, onNotify, onError) {
      const { pg } = await load();
      let client: PgNs.Client | undefined;
      let stopped = false;
      let retry: NodeJS.Timeout | undefined;
      let delay = BACKOFF_MIN_MS;
      const connect = async (): Promise<void> => {
        const c = new pg.Client(clientConfig(options));
        client = c;
        c.on('notification', (n) => onNotify(n.payload ?? ''));
        c.on('error', (error) => {
          onError(error);
          void c.end().catch(() => undefined);
          schedule();
        });
        await c.connect();
        await c.query(`LISTEN ${quoteIdent(channel)}`);
        delay = BACKOFF_MIN_MS;
      };
      const schedule = (): void => {
        if (stopped || retry !== undefined) return;
        retry = setTimeout(() => {
          retry = undefined;
          connect().catch((error: unknown) => {
            onError(error);
            delay = Math.min(BACKOFF_MAX_MS, delay * 2);
            schedule();
          });
        }, delay);
      };
      try {
        await connect();
      } catch (error) {
        await client?.end().catch(() => undefined);
        throw classify(error);
      }
      return async () => {
        stopped = true;
        if (retry !== undefined) clearTimeout(retry);
        await client?.end().catch(() => undefined);
      };
    },

    async close() {
      closed = true;
      if (loaded === undefined) return;
      const { pool } = await loaded;
      await pool.end().catch(() => undefined);
    },
  };
}

function clientConfig(options: PostgresDialectOptions): PgNs.ClientConfig {
  return {
    connectionString: options.url,
    application_name: 'reservoir',
    connectionTimeoutMillis: 5000,
    // Every transaction is read-only unless a statement says otherwise; reads have a deadline;
    // unqualified names in named queries and sql_query resolve in the served schema first.
    options:
      `-c default_transaction_read_only=on -c statement_timeout=${options.statementTimeoutMs}` +
      (/^[A-Za-z_][A-Za-z0-9_]*$/.test(options.schema) ? ` -c search_path=${options.schema},public` : ''),
    query_timeout: options.statementTimeoutMs + 5000,
  };
}

const ROLE_CHECK = `SELECT current_user AS role, r.rolsuper AS superuser,
  pg_catalog.pg_has_role(current_user, 'pg_read_server_files', 'USAGE') AS read_files,
  pg_catalog.pg_has_role(current_user, 'pg_write_server_files', 'USAGE') AS write_files,
  pg_catalog.pg_has_role(current_user, 'pg_execute_server_program', 'USAGE') AS programs,
  pg_catalog.pg_has_role(current_user, 'pg_signal_backend', 'USAGE') AS signal
FROM pg_catalog.pg_roles r WHERE r.rolname = current_user`;

/**
 * Per table: the catalog row's xmin (moves on ALTER, TRUNCATE …), the main fork's size, and the
 * statistics counters of inserted, updated and deleted tuples (these lag: a session flushes them
 * at most once a second, and up to 10 s after it goes idle).
 */
const FINGERPRINT = `SELECT c.relname AS name,
  concat_ws(':', c.xmin::text, pg_catalog.pg_relation_size(c.oid), s.n_tup_ins, s.n_tup_upd, s.n_tup_del) AS f
FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_catalog.pg_stat_all_tables s ON s.relid = c.oid
WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition`;

async function introspect(client: PgNs.ClientBase, schema: string): Promise<TableInfo[]> {
  const tables = await client.query<{ oid: number; name: string; estimate: number }>({
    text: `SELECT c.oid::int AS oid, c.relname AS name, c.reltuples::float8 AS estimate
      FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition`,
    values: [schema],
  });
  const oids = tables.rows.map((t) => t.oid);
  const columns = await client.query<{ oid: number; name: string; type: string; notnull: boolean; dflt: string | null }>({
    text: `SELECT a.attrelid::int AS oid, a.attname AS name, pg_catalog.format_type(a.atttypid, a.atttypmod) AS type,
        a.attnotnull AS notnull, pg_catalog.pg_get_expr(d.adbin, d.adrelid) AS dflt
      FROM pg_catalog.pg_attribute a LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE a.attrelid = ANY($1::oid[]) AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attrelid, a.attnum`,
    values: [oids],
  });
  const indexes = await client.query<{ oid: number; name: string; unique: boolean; primary: boolean; def: string; plain: boolean; columns: (string | null)[] }>({
    text: `SELECT i.indrelid::int AS oid, ic.relname AS name, i.indisunique AS unique, i.indisprimary AS primary,
        pg_catalog.pg_get_indexdef(i.indexrelid) AS def, (i.indpred IS NULL AND i.indexprs IS NULL) AS plain,
        ARRAY(SELECT a.attname::text FROM unnest(i.indkey::int2[]) WITH ORDINALITY k(attnum, ord)
          LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
          WHERE k.ord <= i.indnkeyatts ORDER BY k.ord) AS columns
      FROM pg_catalog.pg_index i JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid
      WHERE i.indrelid = ANY($1::oid[])`,
    values: [oids],
  });
  const fks = await client.query<{ oid: number; name: string; ref: string; columns: string[]; refs: string[] }>({
    text: `SELECT con.conrelid::int AS oid, con.conname AS name, cf.relname AS ref,
        ARRAY(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(n, o)
          JOIN pg_catalog.pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n ORDER BY k.o) AS columns,
        ARRAY(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY k(n, o)
          JOIN pg_catalog.pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n ORDER BY k.o) AS refs
      FROM pg_catalog.pg_constraint con JOIN pg_catalog.pg_class cf ON cf.oid = con.confrelid
      WHERE con.contype = 'f' AND con.conrelid = ANY($1::oid[]) ORDER BY con.conname`,
    values: [oids],
  });
  return tables.rows
    .map((t): TableInfo => {
      const cols = columns.rows.filter((c) => c.oid === t.oid);
      const notNull = new Set(cols.filter((c) => c.notnull).map((c) => c.name));
      const idx = indexes.rows.filter((i) => i.oid === t.oid).sort(byName);
      const primary = idx.find((i) => i.primary);
      const primaryKey = primary?.columns.map((c) => c ?? '') ?? [];
      const unique = idx
        .filter((i) => i.unique && i.plain && i.columns.every((c) => c !== null && notNull.has(c)))
        .sort((a, b) => a.columns.length - b.columns.length || byName(a, b))[0];
      const pageKey = primary !== undefined ? primaryKey : (unique?.columns.map((c) => c ?? '') ?? []);
      return {
        name: t.name,
        columns: cols.map((c) => ({ name: c.name, type: c.type, nullable: !c.notnull, ...(c.dflt === null ? {} : { default: c.dflt }) })),
        primaryKey,
        pageKey,
        indexes: idx.map((i) => ({ name: i.name, columns: i.columns.map((c) => c ?? '<expression>'), unique: i.unique, primary: i.primary, definition: i.def })),
        foreignKeys: fks.rows.filter((f) => f.oid === t.oid).map((f) => ({ columns: f.columns, table: f.ref, references: f.refs })),
        ...(t.estimate >= 0 ? { estimatedRows: Math.round(t.estimate) } : {}),
      };
    })
    .sort(byName);
}

/** Classifies a pg or network error by SQLSTATE class. */
export function classify(error: unknown): SqlFailure {
  if (error instanceof SqlFailure) return error;
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown }).code;
  const sqlstate = typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
  if (sqlstate === undefined) return new SqlFailure('unavailable', message, { cause: error });
  if (sqlstate === '57014') return new SqlFailure('timeout', message, { cause: error });
  if (sqlstate === '25006' || sqlstate === '42501' || sqlstate === '0A000') return new SqlFailure('refused', message, { cause: error });
  if (sqlstate === '42601' && /multiple commands/.test(message)) return new SqlFailure('refused', message, { cause: error });
  if (sqlstate === '42P01' || sqlstate === '3F000') return new SqlFailure('missing', message, { cause: error });
  if (/^(08|53|57P|58)/.test(sqlstate) || sqlstate === '3D000' || sqlstate === '28000' || sqlstate === '28P01') {
    return new SqlFailure('unavailable', message, { cause: error });
  }
  return new SqlFailure('invalid', message, { cause: error });
}
