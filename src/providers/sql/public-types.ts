/**
 * The SQL provider's public shapes (re-exported by src/index.ts): its options, the `SqlProvider`
 * contract with the query entry point of the `sql_query` tool, and that entry point's result.
 */
import type { Logger } from '../../core/log.js';
import type { Provider, ResourceTemplate } from '../../core/types.js';
import type { SqlKind } from './dialect.js';
import type { SqlSourceOptions } from './options.js';

export interface SqlOptions extends SqlSourceOptions {
  /** Where warnings go (the database going away, coming back). @default silent */
  logger?: Logger | undefined;
}

/** The result of `SqlProvider.query`: column names, rows as arrays, and whether the cap cut it. */
export interface SqlQueryResult {
  columns: string[];
  rows: unknown[][];
  rowCount: number;
  truncated: boolean;
  elapsedMs: number;
}

/** A SQL provider: the Provider contract plus the query entry point of the `sql_query` tool. */
export interface SqlProvider extends Provider {
  /** The source name (the URI authority). */
  readonly database: string;
  readonly dialect: SqlKind;
  /** Most rows a page, query or tool call returns. */
  readonly maxRows: number;
  readonly statementTimeoutMs: number;
  /** Whether the config asked for the `sql_query` tool (`queryTool: true`). */
  readonly queryToolEnabled: boolean;
  /** Runs one client statement read-only (see docs/providers/sql.md, "Safety"). */
  query(
    sql: string,
    params?: unknown[],
    options?: { maxRows?: number | undefined; signal?: AbortSignal | undefined },
  ): Promise<SqlQueryResult>;
  watchStats(): { watches: number; listListeners: number; polling: boolean; listening: boolean };
  templates(): ResourceTemplate[];
  watch(uri: string, onChange: () => void): Promise<() => void>;
  onListChanged(listener: () => void): Promise<() => void>;
  /**
   * Resolves when the database answers now; throws UnavailableError when it cannot, and, with the
   * query tool on, a ConfigError when `sql_query` would refuse the connected role (for readiness checks).
   */
  ready(): Promise<void>;
  /** With the query tool on (PostgreSQL): why `sql_query` would refuse the connected role, or undefined. */
  misconfigured(): Promise<string | undefined>;
  close(): Promise<void>;
}
