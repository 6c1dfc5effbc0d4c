/**
 * The SQL provider's resource templates — a table's rows, a table's schema, each named query —
 * with completion of table names, the format, and query parameters (from their allowed values, or
 * the distinct values of a column).
 */
import type { Completer, ResourceTemplate } from '../../core/types.js';
import type { TableInfo } from './dialect.js';
import type { NamedQuery } from './options.js';
import { queryTemplate } from './views.js';

const JSON_TYPE = 'application/json';

export interface TemplateSource {
  root: string;
  database: string;
  maxRows: number;
  pageRows: number;
  queries: Record<string, NamedQuery>;
  /** The served tables (cached by the provider). */
  tables(): Promise<TableInfo[]>;
  /** Up to 101 distinct values of `column` starting with `value`. */
  distinct(table: TableInfo, column: string, value: string): Promise<string[]>;
}

export function sqlTemplates(source: TemplateSource): ResourceTemplate[] {
  const { root, database, maxRows, pageRows, queries } = source;
  const tableCompleter: Completer = async (value) => {
    const names = (await source.tables()).map((t) => t.name).filter((n) => n.startsWith(value));
    return { values: names.slice(0, 100), total: names.length, hasMore: names.length > 100 };
  };

  const templates: ResourceTemplate[] = [
    {
      uriTemplate: `${root}tables/{table}/rows{?after,limit,format}`,
      name: `${database}-table-rows`,
      title: `Rows of a ${database} table`,
      description:
        `One page of a table's rows in primary-key order (keyset paging): JSON { table, pageKey, columns, rows, count, limit, next }, ` +
        `where next is the URI of the following page (null on the last). limit: 1-${maxRows} (default ${pageRows}); format: json or csv. ` +
        'Take after from a next link; it is opaque.',
      mimeType: JSON_TYPE,
      complete: {
        table: tableCompleter,
        format: (v) => ({ values: ['csv', 'json'].filter((f) => f.startsWith(v)) }),
      },
    },
    {
      uriTemplate: `${root}tables/{table}/schema`,
      name: `${database}-table-schema`,
      title: `Schema of a ${database} table`,
      description:
        'A table’s columns (name, type, nullable, default), primary key, page key, indexes and foreign keys, as JSON.',
      mimeType: JSON_TYPE,
      complete: { table: tableCompleter },
    },
    ...Object.entries(queries).map(([name, q]): ResourceTemplate => ({
      uriTemplate: queryTemplate(root, name, q),
      name: `${database}-query-${name}`,
      title: `${database} query ${name}`,
      description: `${q.description ?? `The named query ${name}`}. JSON { query, params, columns, rows, rowCount }; at most ${maxRows} rows.`,
      mimeType: JSON_TYPE,
      complete: Object.fromEntries((q.params ?? []).map((p) => [p.name, paramCompleter(p)])),
    })),
  ];

  function paramCompleter(param: NonNullable<NamedQuery['params']>[number]): Completer {
    return async (value, _context, ctx) => {
      let values: string[];
      if (param.values !== undefined) values = param.values.map(String);
      else if (param.type === 'boolean') values = ['false', 'true'];
      else if (param.complete !== undefined) {
        const [t, column] = param.complete.split('.') as [string, string];
        const info = (await source.tables()).find((x) => x.name === t);
        if (info === undefined || !info.columns.some((c) => c.name === column))
          return { values: [] };
        ctx.signal.throwIfAborted();
        values = await source.distinct(info, column, value);
      } else return { values: [] };
      const matching = values.filter((v) => v.startsWith(value));
      return {
        values: matching.slice(0, 100),
        total: matching.length,
        hasMore: matching.length > 100,
      };
    };
  }

  return templates;
}
