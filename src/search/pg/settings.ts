/** Where a PostgreSQL index lives and how its sources' leases are kept (see docs/search.md). */
export interface PostgresIndexSettings {
  /** The connection URL, e.g. `postgres://reservoir@db:5432/reservoir`. */
  url: string;
  /** The schema holding the index tables (created when missing). @default reservoir_search */
  schema?: string | undefined;
  /** How often an instance tries to take the leases of sources nobody feeds, ms. @default 2000 */
  leaseTickMs?: number | undefined;
  /**
   * The deadline of each background statement (the feeder's reads and writes, the leases), ms: one
   * blocked (by a lock) or stuck past it is stopped by PostgreSQL, and the feeder logs why and goes
   * on. Searches run within their own budget. @default 60000
   */
  statementTimeoutMs?: number | undefined;
}

export const DEFAULT_PG_SCHEMA = 'reservoir_search';
export const DEFAULT_LEASE_TICK_MS = 2_000;
export const DEFAULT_STATEMENT_TIMEOUT_MS = 60_000;

/** The tables' prefix of one index: its key, so indexes of other source sets or settings never mix. */
export function tablePrefix(key: string): string {
  return `index_${key}`;
}

/** Where the index lives, for logs and `reservoir index`: the URL without its password, and the table. */
export function pgLocation(settings: PostgresIndexSettings, key: string): string {
  let where = settings.url;
  try {
    const url = new URL(settings.url);
    url.password = '';
    where = url.href;
  } catch {
    where = 'postgres';
  }
  return `${where} ${settings.schema ?? DEFAULT_PG_SCHEMA}.${tablePrefix(key)}_*`;
}
