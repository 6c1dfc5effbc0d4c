/**
 * A search index in PostgreSQL full-text search, shared by every instance serving the same sources:
 * the tables (schema.ts) are built once — each source by the holder of its lease (leases.ts), the
 * others only query — and an instance that joins answers searches from them at once. Queries and
 * writes see the text as the SQLite index does (lexemes.ts), so both engines find the same
 * documents; access filtering, paging and snippets are the service's, the same over both.
 */
import type PgNs from 'pg';
import type { Logger } from '../../core/log.js';
import type { Matches, Run, SearchBackend, Totals } from '../backend.js';
import type { Position } from '../rows.js';
import { scopeSql, type Scope } from '../scope.js';
import { PgLeases } from './leases.js';
import { numbered, withinBudget } from './query.js';
import { ensureTables, type Tables } from './schema.js';
import { matchingRows } from './stream.js';
import {
  DEFAULT_LEASE_TICK_MS,
  DEFAULT_PG_SCHEMA,
  DEFAULT_STATEMENT_TIMEOUT_MS,
  tablePrefix,
  type PostgresIndexSettings,
} from './settings.js';
import { PgWriter } from './writer.js';

const INT8 = 20;

export class PgBackend implements SearchBackend {
  readonly writer: PgWriter;

  private constructor(
    readonly location: string,
    private readonly pool: PgNs.Pool,
    private readonly t: Tables,
    readonly leases: PgLeases,
    timeoutMs: number,
  ) {
    this.writer = new PgWriter(pool, t, () => leases.connection(), timeoutMs);
  }

  /** Connects, creates the index's tables when missing, and takes the leases of the sources nobody feeds. */
  static async open(
    settings: PostgresIndexSettings,
    key: string,
    roots: readonly string[],
    logger: Logger,
  ): Promise<PgBackend> {
    const pg = (await import('pg')).default;
    // Ids come back as numbers (they stay far below 2^53).
    const types: PgNs.CustomTypesConfig = {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8
          ? (value: string) => Number(value)
          : pg.types.getTypeParser(
              oid,
              format ?? 'text',
            )) as PgNs.CustomTypesConfig['getTypeParser'],
    };
    // Every statement has a deadline (a search sets its own budget in its transaction).
    const timeout = settings.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
    const config = {
      connectionString: settings.url,
      types,
      application_name: 'reservoir-search',
      statement_timeout: timeout,
    };
    const pool = new pg.Pool({ ...config, max: 4, idleTimeoutMillis: 10_000 });
    pool.on('error', (error) =>
      logger.warn({ err: error.message }, 'search index: an idle PostgreSQL connection failed'),
    );
    try {
      const schema = settings.schema ?? DEFAULT_PG_SCHEMA;
      const prefix = tablePrefix(key);
      const client = await pool.connect();
      let t: Tables;
      try {
        t = await ensureTables(client, schema, prefix, logger);
      } finally {
        client.release();
      }
      const leases = new PgLeases(
        async () => {
          const client = new pg.Client(config);
          await client.connect();
          return client;
        },
        t.namespace,
        roots,
        settings.leaseTickMs ?? DEFAULT_LEASE_TICK_MS,
        logger,
      );
      await leases.start();
      return new PgBackend(`${schema}.${prefix}`, pool, t, leases, timeout);
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw error;
    }
  }

  async isEmpty(): Promise<boolean> {
    const { rowCount } = await this.pool.query(`SELECT 1 FROM ${this.t.docs} LIMIT 1`);
    return (rowCount ?? 0) === 0;
  }

  async totals(): Promise<Totals> {
    const { rows } = await this.pool.query<Totals>(
      `SELECT (SELECT count(*) FROM ${this.t.docs}) AS docs, count(*) AS blobs, coalesce(sum(bytes), 0)::bigint AS bytes FROM ${this.t.blobs}`,
    );
    return rows[0]!;
  }

  async matches(
    run: Run,
    scope: Scope,
    after: Position | undefined,
    want: number,
    building: boolean,
  ): Promise<Matches> {
    const bounds = scopeSql(scope);
    const rows = matchingRows(this.pool, this.t, run, bounds, after, want);
    if (scope.kind !== 'ranges' || !building) return { rows };
    // While the build runs, a restricted caller is told how many documents it may see are indexed.
    const [count] = await withinBudget<{ docs: number }>(this.pool, run, {
      text: `SELECT count(*) AS docs FROM ${this.t.docs} d WHERE true ${numbered(bounds.sql, 1)}`,
      values: bounds.params,
    });
    return { rows, docs: count?.docs ?? 0 };
  }

  lost(): string | undefined {
    return undefined;
  }

  async close(): Promise<void> {
    await this.leases.close();
    await this.pool.end();
  }
}
