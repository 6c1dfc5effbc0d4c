/**
 * The SQL provider: one SQLite file or PostgreSQL schema as read-only `db://<name>/` resources —
 * the schema, each table's schema, keyset-paged table rows (JSON or CSV) and named queries with
 * typed, bound parameters — plus change detection and, through `sqlQueryTool`, an opt-in
 * read-only query tool. The driver (better-sqlite3 or pg) loads on first use. See
 * docs/providers/sql.md for URIs, JSON shapes and the safety model.
 */
import {
  ConfigError,
  InvalidArgumentError,
  NotFoundError,
  ReservoirError,
  TooLargeError,
} from '../../core/errors.js';
import { silentLogger, type Logger } from '../../core/log.js';
import type {
  Provider,
  ProviderFactory,
  ReadResult,
  ResourceInfo,
  ResourceTemplate,
} from '../../core/types.js';
import { ProviderFailure, providerError } from '../utils/errors.js';
import { parseSqlUri, tableUri, withQuery, type SqlTarget } from './address.js';
import type { OverBudget } from './budget.js';
import {
  decodeKey,
  encodeKey,
  SqlFailure,
  toJsonValue,
  type Dialect,
  type QueryOutput,
  type RowsPage,
  type SqlKind,
  type TableInfo,
} from './dialect.js';
import { checkStatement } from './guard.js';
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
import { bindParameters, isRequired } from './params.js';
import { defaultName, openDialect } from './open.js';
import { sqlTemplates } from './templates.js';
import {
  fitRows,
  jsonRows,
  schemaDocument,
  tableDocument,
  toCsv,
  type RowsDocument,
} from './views.js';
import { ChangeWatcher } from './watch.js';

/** Longest table comment shown in a table's description, in characters. */
const MAX_COMMENT = 1000;

export const PROVIDER_NAME = 'sql';
export { sqlSourceOptions, type SqlSourceOptions };

/** How long introspected schema is reused before it is read again, ms (changes seen by a watch drop it sooner). */
const SCHEMA_TTL_MS = 5000;
const JSON_TYPE = 'application/json';

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

export const sqlProvider = ((options: SqlOptions): SqlProvider => {
  const { logger = silentLogger, ...rest } = options;
  const parsed = sqlSourceOptions.safeParse(rest);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(issue.path.join('.') || 'sql', issue.message);
  }
  const config = parsed.data;
  const kind: SqlKind = config.url === undefined ? 'sqlite' : urlKind(config.url);
  const database = config.name ?? defaultName(config.path, config.url);
  const root = `db://${database}/`;
  const pageRows = config.pageRows ?? DEFAULT_PAGE_ROWS;
  const maxRows = config.maxRows ?? DEFAULT_MAX_ROWS;
  const timeoutMs = config.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  const maxResultBytes = config.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES;
  const queries: Record<string, NamedQuery> = config.queries ?? {};
  const schemaName = config.schema ?? 'public';
  const dialect: Dialect = openDialect(config, {
    statementTimeoutMs: timeoutMs,
    logger,
    schema: schemaName,
  });

  let cache: { at: number; tables: TableInfo[] } | undefined;
  let warnedDown = false;
  const watcher = new ChangeWatcher(() => dialect, {
    intervalMs: config.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS,
    channel: config.notifyChannel,
    logger,
    onSchemaChange: () => (cache = undefined),
  });

  /** Runs a database call for `uri`, turning failures into typed errors. */
  const guard = async <T>(
    uri: string,
    work: () => Promise<T>,
    invalidArgument = 'uri',
  ): Promise<T> => {
    try {
      const result = await work();
      if (warnedDown) logger.info({ source: database }, 'sql: the database answers again');
      warnedDown = false;
      return result;
    } catch (error) {
      if (!(error instanceof SqlFailure)) throw error;
      if (error.kind === 'unavailable') {
        if (!warnedDown)
          logger.warn({ source: database, err: error.message }, 'sql: the database is unavailable');
        warnedDown = true;
      }
      if (error.kind === 'unavailable' || error.kind === 'missing') cache = undefined;
      throw providerError(uri, worded(uri, error), { argument: invalidArgument });
    }
  };

  /** The failure worded for the caller: which database, which timeout, who refused. */
  const worded = (uri: string, error: SqlFailure): ProviderFailure => {
    const options = { cause: error };
    switch (error.kind) {
      case 'unavailable':
        return new ProviderFailure(
          'unavailable',
          `the ${kind} database '${database}' cannot answer: ${error.message}`,
          options,
        );
      case 'timeout':
        return new ProviderFailure(
          'timeout',
          `Statement timed out: ${uri} ran past the ${timeoutMs} ms statement timeout`,
          { ...options, data: { timeoutMs } },
        );
      case 'refused':
        return new ProviderFailure('refused', `refused by the database: ${error.message}`, options);
      default:
        return error;
    }
  };

  const tables = async (uri: string, fresh = false): Promise<TableInfo[]> => {
    if (!fresh && cache !== undefined && Date.now() - cache.at < SCHEMA_TTL_MS) return cache.tables;
    const list = await guard(uri, () => dialect.introspect());
    cache = { at: Date.now(), tables: list };
    return list;
  };

  /** The table `name`, re-reading the schema once before calling it missing. */
  const table = async (uri: string, name: string): Promise<TableInfo> => {
    const found =
      (await tables(uri)).find((t) => t.name === name) ??
      (await tables(uri, true)).find((t) => t.name === name);
    if (found === undefined) throw new NotFoundError(uri);
    return found;
  };

  const json = (uri: string, value: unknown): ReadResult => ({
    contents: [{ uri, mimeType: JSON_TYPE, text: JSON.stringify(value) }],
  });

  /** The error for a read whose first row alone passes the result cap (a later one just ends the page). */
  const rowTooLarge = (uri: string, over: OverBudget): ReservoirError =>
    new ReservoirError(
      'too_large',
      `Row too large: row ${over.row + 1} of ${uri} holds ${over.atLeast === true ? 'more than ' : ''}${over.rowBytes} bytes, over the ${over.budget}-byte result cap`,
      {
        data: { uri, size: over.rowBytes, limit: over.budget, measure: 'row' },
      },
    );

  const readRows = async (
    uri: string,
    target: Extract<SqlTarget, { kind: 'rows' }>,
    signal: AbortSignal,
  ): Promise<ReadResult> => {
    const limit = parseLimit(target.query.get('limit'), pageRows, maxRows);
    const format = target.query.get('format') ?? 'json';
    if (format !== 'json' && format !== 'csv')
      throw new InvalidArgumentError('format', 'expected json or csv', { value: format });
    let info = await table(uri, target.table);
    const position = target.query.get('after');
    let after: unknown[] | undefined;
    if (position !== undefined) {
      if (info.pageKey.length === 0)
        throw new InvalidArgumentError(
          'after',
          `table ${info.name} has no primary key or non-null unique index, so only its first page can be read`,
        );
      after = decodeKey(position, info.pageKey.length);
      if (after === undefined)
        throw new InvalidArgumentError(
          'after',
          'not a position this table’s pages produced; start again from the first page',
          { value: position.slice(0, 64) },
        );
    }
    const pageOf = (t: TableInfo) =>
      guard(
        uri,
        () => dialect.rowsPage(t, after, { limit: limit + 1, maxBytes: maxResultBytes, signal }),
        'after',
      );
    let page: RowsPage;
    try {
      page = await pageOf(info);
    } catch (error) {
      // The columns changed since the schema was read (it was dropped just now): read it again, once.
      if (!(error instanceof NotFoundError)) throw error;
      const fresh = await table(uri, target.table);
      if (fresh.pageKey.join('\0') !== info.pageKey.join('\0')) throw error;
      info = fresh;
      page = await pageOf(info);
    }
    if (page.over !== undefined && page.rows.length === 0) throw rowTooLarge(uri, page.over);
    // A page ends at the row cap or where the byte budget does, whichever comes first.
    const more = page.rows.length > limit || page.over !== undefined;
    const rows = page.rows.length > limit ? page.rows.slice(0, limit) : page.rows;
    const rowsUri = tableUri(root, info.name, 'rows');
    const next =
      more && info.pageKey.length > 0
        ? withQuery(rowsUri, {
            after: encodeKey(page.keys[rows.length - 1]!),
            limit: limit === pageRows ? undefined : limit,
            format: format === 'csv' ? 'csv' : undefined,
          })
        : null;
    const columns = info.columns.map((c) => c.name);
    if (format === 'csv') {
      const csv = toCsv(
        columns,
        rows.map((r) => columns.map((c) => r[c])),
      );
      const contents: ReadResult['contents'] = [{ uri, mimeType: 'text/csv', text: csv }];
      contents.push({
        uri,
        mimeType: JSON_TYPE,
        text: JSON.stringify({ table: info.name, count: rows.length, next }),
      });
      return { contents };
    }
    const document: RowsDocument = {
      table: info.name,
      pageKey: tableDocument(root, info).pageKey,
      columns,
      rows: jsonRows(rows),
      count: rows.length,
      limit,
      next,
      ...(info.pageKey.length === 0 && more
        ? {
            note: `${info.name} has no primary key or non-null unique index: only a first page can be read; use a named query or sql_query for more`,
          }
        : {}),
    };
    return json(uri, document);
  };

  const readQuery = async (
    uri: string,
    target: Extract<SqlTarget, { kind: 'query' }>,
    signal: AbortSignal,
  ): Promise<ReadResult> => {
    const query = Object.hasOwn(queries, target.name) ? queries[target.name] : undefined;
    if (query === undefined) throw new NotFoundError(uri);
    const { values, shown } = bindParameters(target.name, query, target.query);
    const out = await guard(
      uri,
      () =>
        dialect.namedQuery(query.sql, values, {
          maxRows,
          timeoutMs,
          maxBytes: maxResultBytes,
          signal,
        }),
      'query',
    );
    if (out.over !== undefined) {
      const size = out.over.usedBytes + out.over.rowBytes;
      throw new ReservoirError(
        'too_large',
        `Query result too large: ${uri} returns more than ${maxResultBytes} bytes (the result cap; at least ${size}); narrow its parameters`,
        {
          data: { uri, size, limit: maxResultBytes, measure: 'bytes' },
        },
      );
    }
    if (out.truncated) {
      throw new ReservoirError(
        'too_large',
        `Query result too large: ${uri} returns more than ${maxRows} rows (the row cap); narrow its parameters`,
        {
          data: { uri, size: maxRows + 1, limit: maxRows, measure: 'rows' },
        },
      );
    }
    const rows = out.rows.map((r) => r.map(toJson));
    const text = JSON.stringify({
      query: target.name,
      params: shown,
      columns: out.columns,
      rows,
      rowCount: rows.length,
    });
    if (Buffer.byteLength(text) > maxResultBytes)
      throw new TooLargeError(uri, Buffer.byteLength(text), maxResultBytes, 'result');
    return { contents: [{ uri, mimeType: JSON_TYPE, text }] };
  };

  const templates = sqlTemplates({
    root,
    database,
    maxRows,
    pageRows,
    queries,
    tables: () => tables(root),
    distinct: (info, column, value) =>
      guard(root, () => dialect.distinct(info, column, value, 101)),
  });

  const provider: SqlProvider = {
    name: PROVIDER_NAME,
    root,
    database,
    dialect: kind,
    maxRows,
    statementTimeoutMs: timeoutMs,
    queryToolEnabled: config.queryTool ?? false,

    async list(after, limit) {
      const all: { key: string; info: ResourceInfo }[] = [
        {
          key: 's',
          info: {
            uri: `${root}schema`,
            name: 'schema',
            title: `${database} schema`,
            description: `Tables, columns, keys and indexes of the ${kind} database ${database}`,
            mimeType: JSON_TYPE,
          },
        },
        ...(await tables(root)).map((t) => ({ key: `t:${t.name}`, info: tableInfo(t) })),
        ...Object.entries(queries)
          .filter(([, q]) => !(q.params ?? []).some(isRequired))
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .map(([name, q]) => ({
            key: `q:${name}`,
            info: {
              uri: `${root}queries/${name}`,
              name,
              title: `${database} query ${name}`,
              ...(q.description === undefined ? {} : { description: q.description }),
              mimeType: JSON_TYPE,
            },
          })),
      ];
      const start = after === undefined ? 0 : all.findIndex((e) => compareKeys(e.key, after) > 0);
      const from = start < 0 ? all.length : start;
      const page = all.slice(from, from + limit);
      const items = page.map((e) => e.info);
      return from + limit < all.length ? { items, last: page[page.length - 1]!.key } : { items };
    },

    // Every named query's definition is searchable under its URI — the listed ones (no required
    // parameter) beside their result, the templated ones by their definition alone.
    searchDocuments: () =>
      Object.entries(queries).map(([name, q]) => ({
        info: {
          uri: `${root}queries/${name}`,
          name,
          title: `${database} query ${name}`,
          ...(q.description === undefined ? {} : { description: q.description }),
          mimeType: JSON_TYPE,
        },
        text: [
          `query ${name}`,
          q.description ?? '',
          q.sql,
          ...(q.params ?? []).map((p) => `parameter ${p.name}`),
        ]
          .filter((line) => line !== '')
          .join('\n'),
      })),

    isValidKey: (key) =>
      key.length <= 4096 && !key.includes('\0') && (key === 's' || /^[tq]:.+$/s.test(key)),

    async read(uri, ctx) {
      const target = parseSqlUri(uri, root);
      switch (target.kind) {
        case 'schema':
          return json(
            uri,
            schemaDocument(
              root,
              {
                name: database,
                dialect: kind,
                ...(kind === 'postgres' ? { schema: schemaName } : {}),
              },
              await tables(uri, true),
              queries,
            ),
          );
        case 'table-schema':
          return json(uri, tableDocument(root, await table(uri, target.table)));
        case 'rows':
          return readRows(uri, target, ctx.signal);
        case 'query':
          return readQuery(uri, target, ctx.signal);
      }
    },

    canonical(uri) {
      // A rows page is a view of its table's rows, whatever its ?after, ?limit or ?format; a named
      // query's result is judged as the query, whatever its parameters. Table names are exact (no
      // case folding): the lookup compares them as the database lists them.
      const target = parseSqlUri(uri, root);
      switch (target.kind) {
        case 'schema':
          return `${root}schema`;
        case 'table-schema':
          return tableUri(root, target.table, 'schema');
        case 'rows':
          return tableUri(root, target.table, 'rows');
        case 'query':
          return `${root}queries/${encodeURIComponent(target.name)}`;
      }
    },

    templates: () => templates,

    async watch(uri, onChange) {
      const target = parseSqlUri(uri, root);
      if (target.kind === 'table-schema' || target.kind === 'rows')
        return watcher.watch((await table(uri, target.table)).name, onChange);
      if (target.kind === 'query' && !Object.hasOwn(queries, target.name))
        throw new NotFoundError(uri);
      return watcher.watch(undefined, onChange);
    },

    onListChanged: (listener) => watcher.onListChanged(listener),

    async query(sql, params = [], opts = {}) {
      const cap = Math.min(opts.maxRows ?? maxRows, maxRows);
      const verdict = checkStatement(sql, kind);
      if (!verdict.ok)
        throw new InvalidArgumentError(
          'sql',
          `refused: ${verdict.reason ?? 'not a read-only statement'}`,
        );
      const started = Date.now();
      const limits = {
        maxRows: cap,
        timeoutMs,
        maxBytes: maxResultBytes,
        ...(opts.signal === undefined ? {} : { signal: opts.signal }),
      };
      const out: QueryOutput = await guard(
        root,
        () => dialect.readOnlyQuery(sql, params, limits),
        'sql',
      );
      if (out.over !== undefined && out.rows.length === 0) throw rowTooLarge(root, out.over);
      const rows = out.rows.map((r) => r.map(toJson));
      const fitted = fitRows(rows, maxResultBytes);
      const truncated = out.truncated || out.over !== undefined || fitted.dropped;
      return {
        columns: out.columns,
        rows: fitted.rows,
        rowCount: fitted.rows.length,
        truncated,
        elapsedMs: Date.now() - started,
      };
    },

    watchStats: () => watcher.stats(),

    async ready() {
      await guard(root, () => dialect.ping());
      const refusal = await provider.misconfigured();
      if (refusal !== undefined)
        throw new ConfigError(`sql source '${database}'`, refusal, { source: root });
    },

    // A role sql_query would refuse every call of is a configuration error, said at start, not at the first query.
    misconfigured: async () =>
      (config.queryTool ?? false) && dialect.roleRefusal !== undefined
        ? guard(root, () => dialect.roleRefusal!())
        : undefined,

    async close() {
      await watcher.close();
      await dialect.close();
    },
  };

  function tableInfo(t: TableInfo): ResourceInfo {
    const key =
      t.pageKey.length === 0
        ? 'no stable key: first page only'
        : `paged by ${t.hiddenKey === true ? 'rowid' : t.pageKey.join(', ')}`;
    return {
      uri: tableUri(root, t.name, 'rows'),
      name: t.name,
      title: `${t.name} (${database})`,
      // The table's own comment first: what the table is, in its authors' words.
      description: `${t.comment === undefined ? '' : `${bounded(t.comment)}\n\n`}Rows of table ${t.name}: ${t.columns.length} columns, ${key}; JSON pages of ${pageRows} rows with a next link. Schema: ${tableUri(root, t.name, 'schema')}`,
      mimeType: JSON_TYPE,
    };
  }

  return provider;
}) satisfies ProviderFactory<SqlOptions>;

/** A table comment as a description shows it: at most MAX_COMMENT characters. */
function bounded(comment: string): string {
  return comment.length <= MAX_COMMENT ? comment : `${comment.slice(0, MAX_COMMENT - 1)}…`;
}

function toJson(value: unknown): unknown {
  return toJsonValue(value);
}

/** Orders list keys: the schema, then tables, then queries, each by name in code-point order. */
function compareKeys(a: string, b: string): number {
  const rank = (k: string): number => (k === 's' ? 0 : k.startsWith('t:') ? 1 : 2);
  const d = rank(a) - rank(b);
  if (d !== 0) return d;
  return a < b ? -1 : a > b ? 1 : 0;
}

function parseLimit(raw: string | undefined, fallback: number, max: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d{1,6}$/.test(raw) || Number(raw) < 1 || Number(raw) > max) {
    throw new InvalidArgumentError(
      'limit',
      `expected a whole number of rows from 1 to ${max} (the row cap)`,
      { value: raw.slice(0, 32), max },
    );
  }
  return Number(raw);
}
