/**
 * A sql source's options checked and resolved once: the dialect kind, the source name and root
 * URI, and every limit with its default filled in, for the modules that serve the source to share.
 */
import { ConfigError } from '../../core/errors.js';
import type { SqlKind } from './dialect.js';
import { defaultName } from './open.js';
import {
  DEFAULT_MAX_RESULT_BYTES,
  DEFAULT_MAX_ROWS,
  DEFAULT_PAGE_ROWS,
  DEFAULT_POLL_INTERVAL_MS,
  DEFAULT_STATEMENT_TIMEOUT_MS,
  sqlSourceOptions,
  urlKind,
  type NamedQuery,
  type SqlSourceOptions,
} from './options.js';

export interface SqlSettings {
  /** The options as parsed (the dialect is opened from them). */
  config: SqlSourceOptions;
  kind: SqlKind;
  /** The source name: the URI authority. */
  database: string;
  /** `db://<database>/`. */
  root: string;
  /** The PostgreSQL schema served (`public` unless configured). */
  schema: string;
  pageRows: number;
  maxRows: number;
  timeoutMs: number;
  maxResultBytes: number;
  pollIntervalMs: number;
  queries: Record<string, NamedQuery>;
  queryTool: boolean;
}

/** Parses `options` (ConfigError naming the first bad field) and fills in the defaults. */
export function sqlSettings(options: SqlSourceOptions): SqlSettings {
  const parsed = sqlSourceOptions.safeParse(options);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(issue.path.join('.') || 'sql', issue.message);
  }
  const config = parsed.data;
  const database = config.name ?? defaultName(config.path, config.url);
  return {
    config,
    kind: config.url === undefined ? 'sqlite' : urlKind(config.url),
    database,
    root: `db://${database}/`,
    schema: config.schema ?? 'public',
    pageRows: config.pageRows ?? DEFAULT_PAGE_ROWS,
    maxRows: config.maxRows ?? DEFAULT_MAX_ROWS,
    timeoutMs: config.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS,
    maxResultBytes: config.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES,
    pollIntervalMs: config.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS,
    queries: config.queries ?? {},
    queryTool: config.queryTool ?? false,
  };
}
