/**
 * What a sql source lists: its schema document, then each table's rows (described by the table's
 * own comment, its size and how it pages), then the named queries that need no parameter, each
 * group in code-point order; and the definitions of all named queries, for search.
 */
import { definedProps } from '../../core/defined.js';
import type { ProviderPage, ResourceInfo, SearchDocument } from '../../core/types.js';
import { tableUri } from './address.js';
import type { TableInfo } from './dialect.js';
import type { NamedQuery } from './options.js';
import { isRequired } from './params.js';
import type { SqlSettings } from './settings.js';

/** Longest table comment shown in a table's description, in characters. */
const MAX_COMMENT = 1000;
const JSON_TYPE = 'application/json';

/** One page of the listing after the key `after` (the keys say 's', 't:TABLE', 'q:QUERY'). */
export function listPage(
  settings: SqlSettings,
  tables: readonly TableInfo[],
  after: string | undefined,
  limit: number,
): ProviderPage {
  const { root, database, kind, queries } = settings;
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
  ];
  for (const t of tables) all.push({ key: `t:${t.name}`, info: tableInfo(settings, t) });
  const listed = Object.entries(queries)
    .filter(([, q]) => !(q.params ?? []).some(isRequired))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [name, q] of listed)
    all.push({ key: `q:${name}`, info: queryInfo(settings, name, q) });
  const start = after === undefined ? 0 : all.findIndex((e) => compareKeys(e.key, after) > 0);
  const from = start < 0 ? all.length : start;
  const page = all.slice(from, from + limit);
  const items = page.map((e) => e.info);
  return from + limit < all.length ? { items, last: page[page.length - 1]!.key } : { items };
}

/**
 * Every named query's definition, searchable under its URI — the listed ones (no required
 * parameter) beside their result, the templated ones by their definition alone.
 */
export function querySearchDocuments(settings: SqlSettings): SearchDocument[] {
  return Object.entries(settings.queries).map(([name, q]) => ({
    info: queryInfo(settings, name, q),
    text: [
      `query ${name}`,
      q.description ?? '',
      q.sql,
      ...(q.params ?? []).map((p) => `parameter ${p.name}`),
    ]
      .filter((line) => line !== '')
      .join('\n'),
  }));
}

/** Whether `key` could be a listing key (the registry checks cursors with it). */
export function isListKey(key: string): boolean {
  return key.length <= 4096 && !key.includes('\0') && (key === 's' || /^[tq]:.+$/s.test(key));
}

function queryInfo(settings: SqlSettings, name: string, q: NamedQuery): ResourceInfo {
  return {
    uri: `${settings.root}queries/${name}`,
    name,
    title: `${settings.database} query ${name}`,
    ...definedProps({ description: q.description }),
    mimeType: JSON_TYPE,
  };
}

function tableInfo(settings: SqlSettings, t: TableInfo): ResourceInfo {
  const { root, database, pageRows } = settings;
  const key =
    t.pageKey.length === 0
      ? 'no stable key: first page only'
      : `paged by ${t.hiddenKey === true ? 'rowid' : t.pageKey.join(', ')}`;
  // The table's own comment first: what the table is, in its authors' words.
  const comment = t.comment === undefined ? '' : `${bounded(t.comment)}\n\n`;
  return {
    uri: tableUri(root, t.name, 'rows'),
    name: t.name,
    title: `${t.name} (${database})`,
    description: `${comment}Rows of table ${t.name}: ${t.columns.length} columns, ${key}; JSON pages of ${pageRows} rows with a next link. Schema: ${tableUri(root, t.name, 'schema')}`,
    mimeType: JSON_TYPE,
  };
}

/** A table comment as a description shows it: at most MAX_COMMENT characters. */
function bounded(comment: string): string {
  return comment.length <= MAX_COMMENT ? comment : `${comment.slice(0, MAX_COMMENT - 1)}…`;
}

/** Orders list keys: the schema, then tables, then queries, each by name in code-point order. */
function compareKeys(a: string, b: string): number {
  const rank = (k: string): number => (k === 's' ? 0 : k.startsWith('t:') ? 1 : 2);
  const d = rank(a) - rank(b);
  if (d !== 0) return d;
  return a < b ? -1 : a > b ? 1 : 0;
}
