/**
 * MySQL / MariaDB introspection: the connected database's base tables, columns, keys, indexes and
 * foreign keys from information_schema (into the shapes of dialect.ts), and the change fingerprint
 * the watcher polls.
 *
 * The fingerprint: per table, a digest of its columns from information_schema (moves on any ALTER
 * that changes a column) and, for the tables whose rows are watched, `CHECKSUM TABLE` — a checksum of
 * every row, exact for every engine. It costs a read of each watched table per poll, so watching a
 * large table wants a longer `pollIntervalMs`. information_schema's UPDATE_TIME is not used: InnoDB
 * keeps it in memory only, drops it on restart and on eviction from the table cache, and leaves it
 * NULL for a table written in a still-open transaction; TABLE_ROWS and DATA_LENGTH are estimates
 * that miss updates in place. The table set itself comes from information_schema.TABLES.
 */
import { definedProps } from '../../core/defined.js';
import type * as MysqlNs from 'mysql2';
import { byName, tableComment, type TableInfo } from './dialect.js';
import { run } from './mysql-connect.js';

/** Quotes an identifier MySQL's way (backticks, doubled inside). */
export function quoteMysql(name: string): string {
  return `\`${name.replaceAll('`', '``')}\``;
}

type Connection = MysqlNs.PoolConnection;

export async function introspectMysql(connection: Connection): Promise<TableInfo[]> {
  const tables = await run<
    { name: string; estimate: number | string | null; comment: string | null }[]
  >(
    connection,
    `SELECT TABLE_NAME AS name, TABLE_ROWS AS estimate, TABLE_COMMENT AS comment FROM information_schema.TABLES
      WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE IN ('BASE TABLE', 'SYSTEM VERSIONED')`,
  );
  const columns = await run<
    { tbl: string; name: string; type: string; nullable: string; dflt: string | null }[]
  >(
    connection,
    `SELECT TABLE_NAME AS tbl, COLUMN_NAME AS name, COLUMN_TYPE AS type, IS_NULLABLE AS nullable, COLUMN_DEFAULT AS dflt
      FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME, ORDINAL_POSITION`,
  );
  const stats = await run<
    {
      tbl: string;
      name: string;
      col: string | null;
      nonUnique: number | string;
      sub: number | null;
    }[]
  >(
    connection,
    `SELECT TABLE_NAME AS tbl, INDEX_NAME AS name, COLUMN_NAME AS col, NON_UNIQUE AS nonUnique, SUB_PART AS sub
      FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX`,
  );
  const fks = await run<{ tbl: string; name: string; col: string; ref: string; refCol: string }[]>(
    connection,
    `SELECT TABLE_NAME AS tbl, CONSTRAINT_NAME AS name, COLUMN_NAME AS col, REFERENCED_TABLE_NAME AS ref, REFERENCED_COLUMN_NAME AS refCol
      FROM information_schema.KEY_COLUMN_USAGE
      WHERE TABLE_SCHEMA = DATABASE() AND REFERENCED_TABLE_NAME IS NOT NULL ORDER BY TABLE_NAME, CONSTRAINT_NAME, ORDINAL_POSITION`,
  );
  return tables
    .map((t): TableInfo => {
      const cols = columns.filter((c) => c.tbl === t.name);
      const notNull = new Set(cols.filter((c) => c.nullable === 'NO').map((c) => c.name));
      const byIndex = new Map<string, { columns: string[]; unique: boolean; plain: boolean }>();
      for (const s of stats.filter((x) => x.tbl === t.name)) {
        const entry = byIndex.get(s.name) ?? {
          columns: [],
          unique: Number(s.nonUnique) === 0,
          plain: true,
        };
        entry.columns.push(s.col ?? '<expression>');
        // a prefix (SUB_PART) or expression part does not make the whole value unique
        if (s.col === null || s.sub !== null) entry.plain = false;
        byIndex.set(s.name, entry);
      }
      const indexes = [...byIndex]
        .map(([name, i]) => ({ name, ...i, primary: name === 'PRIMARY' }))
        .sort(byName);
      const primary = indexes.find((i) => i.primary);
      const unique = indexes
        .filter((i) => i.unique && i.plain && i.columns.every((c) => notNull.has(c)))
        .sort((a, b) => a.columns.length - b.columns.length || byName(a, b))[0];
      const constraints = new Map<
        string,
        { columns: string[]; table: string; references: string[] }
      >();
      for (const f of fks.filter((x) => x.tbl === t.name)) {
        const entry = constraints.get(f.name) ?? { columns: [], table: f.ref, references: [] };
        entry.columns.push(f.col);
        entry.references.push(f.refCol);
        constraints.set(f.name, entry);
      }
      const estimate = t.estimate === null ? undefined : Number(t.estimate);
      return {
        name: t.name,
        columns: cols.map((c) => ({
          name: c.name,
          type: c.type,
          nullable: c.nullable !== 'NO',
          // information_schema spells a NULL default as the word NULL on MariaDB
          ...definedProps({ default: c.dflt === 'NULL' ? undefined : (c.dflt ?? undefined) }),
        })),
        primaryKey: primary?.columns ?? [],
        pageKey: primary?.plain === true ? primary.columns : (unique?.columns ?? []),
        indexes: indexes.map((i) => ({
          name: i.name,
          columns: i.columns,
          unique: i.unique,
          primary: i.primary,
        })),
        foreignKeys: [...constraints.values()],
        ...definedProps({
          estimatedRows: estimate !== undefined && Number.isFinite(estimate) ? estimate : undefined,
          comment: tableComment(t.comment),
        }),
      };
    })
    .sort(byName);
}

/**
 * The fingerprint of every table: its creation time and column digest, and for `watched` ones
 * (undefined: all) its CHECKSUM TABLE. TABLES and COLUMNS are asked apart: joined, MariaDB scans
 * COLUMNS of every database on the server (EXPLAIN: "Scanned all databases"), 20–100 ms a poll
 * instead of about 1 ms.
 */
export async function fingerprintMysql(
  connection: Connection,
  database: string,
  watched: ReadonlySet<string> | undefined,
): Promise<Map<string, string>> {
  const tables = await run<{ name: string; created: unknown }[]>(
    connection,
    `SELECT TABLE_NAME AS name, CREATE_TIME AS created FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE IN ('BASE TABLE', 'SYSTEM VERSIONED')`,
  );
  const digests = await run<{ name: string; d: string }[]>(
    connection,
    `SELECT TABLE_NAME AS name, MD5(GROUP_CONCAT(COLUMN_NAME, ' ', COLUMN_TYPE, ' ', IS_NULLABLE ORDER BY ORDINAL_POSITION SEPARATOR '|')) AS d
      FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() GROUP BY TABLE_NAME`,
  );
  const digest = new Map(digests.map((r) => [r.name, String(r.d)]));
  const prints = new Map(
    tables.map((r) => [r.name, `${String(r.created ?? '')}:${digest.get(r.name) ?? ''}`]),
  );
  const checked = [...prints.keys()].filter((name) => watched === undefined || watched.has(name));
  if (checked.length > 0) {
    const sums = await run<{ Table: string; Checksum: number | string | null }[]>(
      connection,
      `CHECKSUM TABLE ${checked.map((n) => `${quoteMysql(database)}.${quoteMysql(n)}`).join(', ')}`,
    );
    const prefix = `${database}.`;
    for (const s of sums) {
      const name = s.Table.startsWith(prefix) ? s.Table.slice(prefix.length) : s.Table;
      // a table dropped between the two statements answers NULL: it leaves the list on the next poll
      if (prints.has(name)) prints.set(name, `${prints.get(name)!}#${String(s.Checksum)}`);
    }
  }
  return prints;
}
