/**
 * PostgreSQL introspection: the served schema's tables, columns, keys, indexes and foreign keys
 * (into the shapes of dialect.ts), and the cheap per-table change fingerprint the watcher polls.
 */
import { definedProps } from '../../core/defined.js';
import type PgNs from 'pg';
import { byName, tableComment, type TableInfo } from './dialect.js';

/**
 * Per table: the catalog row's xmin (moves on ALTER, TRUNCATE …), the main fork's size, and the
 * statistics counters of inserted, updated and deleted tuples (these lag: a session flushes them
 * at most once a second, and up to 10 s after it goes idle).
 */
export const FINGERPRINT = `SELECT c.relname AS name,
  concat_ws(':', c.xmin::text, pg_catalog.pg_relation_size(c.oid), s.n_tup_ins, s.n_tup_upd, s.n_tup_del) AS f
FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_catalog.pg_stat_all_tables s ON s.relid = c.oid
WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition`;

export async function introspect(client: PgNs.ClientBase, schema: string): Promise<TableInfo[]> {
  const tables = await client.query<{
    oid: number;
    name: string;
    estimate: number;
    comment: string | null;
  }>({
    text: `SELECT c.oid::int AS oid, c.relname AS name, c.reltuples::float8 AS estimate,
        pg_catalog.obj_description(c.oid, 'pg_class') AS comment
      FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition`,
    values: [schema],
  });
  const oids = tables.rows.map((t) => t.oid);
  const columns = await client.query<{
    oid: number;
    name: string;
    type: string;
    notnull: boolean;
    dflt: string | null;
  }>({
    text: `SELECT a.attrelid::int AS oid, a.attname AS name, pg_catalog.format_type(a.atttypid, a.atttypmod) AS type,
        a.attnotnull AS notnull, pg_catalog.pg_get_expr(d.adbin, d.adrelid) AS dflt
      FROM pg_catalog.pg_attribute a LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE a.attrelid = ANY($1::oid[]) AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attrelid, a.attnum`,
    values: [oids],
  });
  const indexes = await client.query<{
    oid: number;
    name: string;
    unique: boolean;
    primary: boolean;
    def: string;
    plain: boolean;
    columns: (string | null)[];
  }>({
    text: `SELECT i.indrelid::int AS oid, ic.relname AS name, i.indisunique AS unique, i.indisprimary AS primary,
        pg_catalog.pg_get_indexdef(i.indexrelid) AS def, (i.indpred IS NULL AND i.indexprs IS NULL) AS plain,
        ARRAY(SELECT a.attname::text FROM unnest(i.indkey::int2[]) WITH ORDINALITY k(attnum, ord)
          LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
          WHERE k.ord <= i.indnkeyatts ORDER BY k.ord) AS columns
      FROM pg_catalog.pg_index i JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid
      WHERE i.indrelid = ANY($1::oid[])`,
    values: [oids],
  });
  const fks = await client.query<{
    oid: number;
    name: string;
    ref: string;
    columns: string[];
    refs: string[];
  }>({
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
      const pageKey =
        primary !== undefined ? primaryKey : (unique?.columns.map((c) => c ?? '') ?? []);
      return {
        name: t.name,
        columns: cols.map((c) => ({
          name: c.name,
          type: c.type,
          nullable: !c.notnull,
          ...definedProps({ default: c.dflt ?? undefined }),
        })),
        primaryKey,
        pageKey,
        indexes: idx.map((i) => ({
          name: i.name,
          columns: i.columns.map((c) => c ?? '<expression>'),
          unique: i.unique,
          primary: i.primary,
          definition: i.def,
        })),
        foreignKeys: fks.rows
          .filter((f) => f.oid === t.oid)
          .map((f) => ({ columns: f.columns, table: f.ref, references: f.refs })),
        // a negative estimate: the table was never analysed
        ...definedProps({
          estimatedRows: t.estimate >= 0 ? Math.round(t.estimate) : undefined,
          comment: tableComment(t.comment),
        }),
      };
    })
    .sort(byName);
}
