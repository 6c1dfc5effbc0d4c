/**
 * The SQL provider: one SQLite file, PostgreSQL schema or MySQL / MariaDB database as read-only
 * `db://<name>/` resources — the schema, each table's schema, keyset-paged table rows (JSON or CSV)
 * and named queries with typed, bound parameters — plus change detection and, through
 * `sqlQueryTool`, an opt-in read-only query tool. The driver loads on first use. See
 * docs/providers/sql.md for URIs, JSON shapes and the safety model.
 *
 * This module composes the source; each concern has its own: settings.ts (options and defaults),
 * database-calls.ts (typed, worded failures), schema-cache.ts, listing.ts, read-rows.ts,
 * named-query.ts, client-statement.ts (`sql_query`), and the dialects behind open.ts.
 */
import { ConfigError, NotFoundError } from '../../core/errors.js';
import { silentLogger } from '../../core/log.js';
import type { ProviderFactory, ReadResult } from '../../core/types.js';
import { parseSqlUri, tableUri } from './address.js';
import { runClientStatement } from './client-statement.js';
import { databaseCalls } from './database-calls.js';
import { isListKey, listPage, querySearchDocuments } from './listing.js';
import { readNamedQuery } from './named-query.js';
import { openDialect } from './open.js';
import { sqlSourceOptions, type SqlSourceOptions } from './options.js';
import type { SqlOptions, SqlProvider } from './public-types.js';
import { readRows } from './read-rows.js';
import { SchemaCache } from './schema-cache.js';
import { sqlSettings } from './settings.js';
import { sqlTemplates } from './templates.js';
import { schemaDocument, tableDocument } from './views.js';
import { ChangeWatcher } from './watch.js';

export const PROVIDER_NAME = 'sql';
export { sqlSourceOptions, type SqlSourceOptions };
export type { SqlOptions, SqlProvider, SqlQueryResult } from './public-types.js';

export const sqlProvider = ((options: SqlOptions): SqlProvider => {
  const { logger = silentLogger, ...rest } = options;
  const settings = sqlSettings(rest);
  const { config, kind, database, root, maxRows, timeoutMs, queries } = settings;
  const dialect = openDialect(config, {
    statementTimeoutMs: timeoutMs,
    logger,
    schema: settings.schema,
  });
  const call = databaseCalls({
    kind,
    database,
    timeoutMs,
    logger,
    onStale: () => forgetSchema(),
  });
  const schema = new SchemaCache(() => dialect, call);
  /** The schema changed, or may have: what was learnt of tables and statements is read again. */
  const forgetSchema = (): void => {
    schema.drop();
    dialect.forgetShapes?.();
  };
  const watcher = new ChangeWatcher(() => dialect, {
    intervalMs: settings.pollIntervalMs,
    channel: config.notifyChannel,
    logger,
    onSchemaChange: () => forgetSchema(),
  });
  const source = { settings, dialect, call, schema };

  const json = (uri: string, value: unknown): ReadResult => ({
    contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(value) }],
  });

  const templates = sqlTemplates({
    root,
    database,
    maxRows,
    pageRows: settings.pageRows,
    queries,
    tables: () => schema.tables(root),
    distinct: (info, column, value) => call(root, () => dialect.distinct(info, column, value, 101)),
  });

  const provider: SqlProvider = {
    name: PROVIDER_NAME,
    root,
    database,
    dialect: kind,
    maxRows,
    statementTimeoutMs: timeoutMs,
    queryToolEnabled: settings.queryTool,

    list: async (after, limit) => listPage(settings, await schema.tables(root), after, limit),

    searchDocuments: () => querySearchDocuments(settings),

    isValidKey: isListKey,

    async read(uri, ctx) {
      const target = parseSqlUri(uri, root);
      switch (target.kind) {
        case 'schema': {
          // A PostgreSQL source serves one schema of its database, named; the others have one.
          const served = kind === 'postgres' ? settings.schema : undefined;
          const meta = { name: database, dialect: kind, schema: served };
          return json(uri, schemaDocument(root, meta, await schema.tables(uri, true), queries));
        }
        case 'table-schema':
          return json(uri, tableDocument(root, await schema.table(uri, target.table)));
        case 'rows':
          return readRows(source, uri, target, ctx.signal);
        case 'query':
          return readNamedQuery(source, uri, target, ctx.signal);
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
        return watcher.watch((await schema.table(uri, target.table)).name, onChange);
      if (target.kind === 'query' && !Object.hasOwn(queries, target.name))
        throw new NotFoundError(uri);
      return watcher.watch(undefined, onChange);
    },

    onListChanged: (listener) => watcher.onListChanged(listener),

    query: (sql, params = [], opts = {}) => runClientStatement(source, sql, params, opts),

    watchStats: () => watcher.stats(),

    async ready() {
      await call(root, () => dialect.ping());
      const refusal = await provider.misconfigured();
      if (refusal !== undefined)
        throw new ConfigError(`sql source '${database}'`, refusal, { source: root });
    },

    // A role sql_query would refuse every call of is a configuration error, said at start, not at the first query.
    misconfigured: async () =>
      settings.queryTool && dialect.roleRefusal !== undefined
        ? call(root, () => dialect.roleRefusal!())
        : undefined,

    async close() {
      await watcher.close();
      await dialect.close();
    },
  };
  return provider;
}) satisfies ProviderFactory<SqlOptions>;
