/**
 * The SQLite dialect: better-sqlite3 (the build core/sqlite-driver.ts picks, loaded on first use),
 * the file opened with `readonly: true` and `PRAGMA query_only = ON`. Table pages and introspection
 * run in-process (each is one indexed range scan); statements of unknown cost run in a killable
 * child process (sqlite-child.ts).
 *
 * The file is checked before every call: gone means unavailable (the open handle would otherwise go
 * on reading the unlinked file), and a different inode (the file was replaced) means reopen.
 */
import { statSync } from 'node:fs';
import type BetterSqlite3 from 'better-sqlite3';
import { definedProps } from '../../core/defined.js';
import { loadSqliteDriver } from '../../core/sqlite-driver.js';
import {
  byName,
  quoteIdent,
  rowObject,
  SqlFailure,
  type Dialect,
  type QueryLimits,
  type RowsPage,
  type TableInfo,
} from './dialect.js';
import { BudgetMeter } from './budget.js';
import { classify, SqliteChild } from './sqlite-child.js';

type Database = BetterSqlite3.Database;
type Statement = BetterSqlite3.Statement<unknown[], Record<string, unknown>>;

/** The alias a hidden rowid key is selected under (one of INTERNAL_COLUMNS: never shown). */
const KEY_ALIAS = '__reservoir_rowid';

interface Opened {
  db: Database;
  ino: number;
  dev: number;
  statements: Map<string, Statement>;
}

export function sqliteDialect(path: string): Dialect {
  let opened: Opened | undefined;
  let loading: Promise<typeof BetterSqlite3> | undefined;
  const child = new SqliteChild(path);

  const load = (): Promise<typeof BetterSqlite3> => {
    loading ??= Promise.resolve().then(loadSqliteDriver);
    return loading;
  };

  const closeDb = (): void => {
    opened?.db.close();
    opened = undefined;
  };

  /** The open connection, after checking the file is still the one opened. */
  const connection = async (): Promise<Opened> => {
    const Database = await load();
    const stats = statSync(path, { throwIfNoEntry: false });
    if (stats === undefined) {
      closeDb();
      child.stop();
      throw new SqlFailure('unavailable', 'the database file is missing');
    }
    if (opened !== undefined && (opened.ino !== stats.ino || opened.dev !== stats.dev)) {
      closeDb();
      child.stop();
    }
    if (opened === undefined) {
      try {
        const db = new Database(path, { readonly: true, fileMustExist: true });
        db.pragma('query_only = ON');
        db.defaultSafeIntegers(true);
        opened = { db, ino: stats.ino, dev: stats.dev, statements: new Map() };
      } catch (error) {
        throw new SqlFailure(
          'unavailable',
          `cannot open the database: ${(error as Error).message}`,
          { cause: error },
        );
      }
    }
    return opened;
  };

  /** Runs `work` on the connection, classifying SQLite errors. */
  const use = async <T>(work: (o: Opened) => T): Promise<T> => {
    const o = await connection();
    try {
      return work(o);
    } catch (error) {
      const failure =
        error instanceof SqlFailure
          ? error
          : classify((error as { code?: string }).code, (error as Error).message, error);
      if (failure.kind === 'unavailable') closeDb();
      throw failure;
    }
  };

  const prepared = (o: Opened, sql: string): Statement => {
    let statement = o.statements.get(sql);
    if (statement === undefined) {
      statement = o.db.prepare(sql);
      o.statements.set(sql, statement);
    }
    return statement;
  };

  return {
    kind: 'sqlite',

    introspect: () => use((o) => introspect(o.db)),

    rowsPage: (table, after, { limit, maxBytes }) =>
      use((o): RowsPage => {
        let sql: string;
        let values: unknown[];
        if (table.pageKey.length === 0) {
          sql = `SELECT * FROM ${quoteIdent(table.name)} LIMIT ?`;
          values = [limit];
        } else {
          const keys = table.pageKey.map(quoteIdent);
          const select =
            table.hiddenKey === true
              ? `SELECT ${keys[0]} AS ${quoteIdent(KEY_ALIAS)}, *`
              : 'SELECT *';
          const where =
            after === undefined
              ? ''
              : ` WHERE (${keys.join(', ')}) > (${keys.map(() => '?').join(', ')})`;
          sql = `${select} FROM ${quoteIdent(table.name)}${where} ORDER BY ${keys.join(', ')} LIMIT ?`;
          values = [...(after ?? []).map(bindable), limit];
        }
        // Rows are measured before they are read (a page is one short range scan, so measuring it
        // first costs less than measuring each row on the way out), both in one read transaction so
        // the rows read are the rows measured: a row over the budget is never materialised, and the
        // page ends where the budget does.
        const names = prepared(o, sql)
          .columns()
          .map((c) => c.name);
        const size = names.map((n) => `coalesce(octet_length(${quoteIdent(n)}), 0)`).join(' + ');
        const sizes = prepared(o, `SELECT ${size} FROM (${sql})`).pluck();
        const meter = new BudgetMeter(maxBytes);
        const rows = o.db.transaction((): Record<string, unknown>[] => {
          let fit = 0;
          for (const bytes of sizes.all(...values) as unknown[]) {
            if (!meter.add(Number(bytes))) break;
            fit += 1;
          }
          if (fit === 0) return [];
          // The driver sets a row's columns by assignment, so one called `__proto__` would set the
          // row's prototype: such a table's rows are read as arrays and made objects here.
          const statement = prepared(o, sql);
          const bound = [...values.slice(0, -1), fit];
          if (!names.includes('__proto__')) return statement.raw(false).all(...bound);
          const arrays = statement.raw(true).all(...bound) as unknown as unknown[][];
          return arrays.map((row) => rowObject(names, row));
        })();
        const keyOf =
          table.hiddenKey === true
            ? (r: Record<string, unknown>) => [r[KEY_ALIAS]]
            : (r: Record<string, unknown>) => table.pageKey.map((k) => r[k]);
        const pageKeys = table.pageKey.length === 0 ? rows.map(() => []) : rows.map(keyOf);
        return { rows, keys: pageKeys, ...definedProps({ over: meter.over }) };
      }),

    async namedQuery(sql, params, limits) {
      await connection();
      return child.run(sql, params.map(bindable), limits);
    },

    async readOnlyQuery(sql, params, limits: QueryLimits) {
      await connection();
      return child.run(sql, params.map(bindable), limits);
    },

    async distinct(table, column, prefix, limit) {
      await connection();
      const col = quoteIdent(column);
      const sql = `SELECT DISTINCT CAST(${col} AS TEXT) FROM ${quoteIdent(table.name)} WHERE substr(CAST(${col} AS TEXT), 1, ?) = ? ORDER BY 1 LIMIT ?`;
      const out = await child.run(sql, [prefix.length, prefix, limit], {
        maxRows: limit,
        timeoutMs: 2000,
        maxBytes: 1024 * 1024,
      });
      return out.rows.map((r) => String(r[0]));
    },

    ping: () =>
      use((o) => {
        prepared(o, 'SELECT 1').get();
      }),

    fingerprint: () =>
      use((o) => {
        const version = String(o.db.pragma('data_version', { simple: true }));
        const wal = statSync(`${path}-wal`, { throwIfNoEntry: false });
        const main = statSync(path, { throwIfNoEntry: false });
        const token = `${version}:${main?.mtimeMs ?? 0}:${main?.size ?? 0}:${wal?.mtimeMs ?? 0}:${wal?.size ?? 0}`;
        const rows = prepared(
          o,
          "SELECT name, sql FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
        ).all();
        // SQLite keeps no per-table change counters: any committed change marks every table.
        return new Map(rows.map((r) => [String(r['name']), `${token}:${String(r['sql'])}`]));
      }),

    async close() {
      child.stop();
      closeDb();
    },
  };
}

function introspect(db: Database): TableInfo[] {
  const tables = db
    .prepare(
      "SELECT name, wr FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
    )
    .all() as { name: string; wr: bigint }[];
  const infos: TableInfo[] = [];
  for (const table of tables) {
    const name = table.name;
    const cols = db
      .prepare(
        'SELECT name, type, "notnull" AS nn, dflt_value AS dflt, pk, hidden FROM pragma_table_xinfo(?)',
      )
      .all(name) as {
      name: string;
      type: string;
      nn: bigint;
      dflt: string | null;
      pk: bigint;
      hidden: bigint;
    }[];
    const visible = cols.filter((c) => c.hidden !== 1n);
    const columns = visible.map((c) => ({
      name: c.name,
      type: c.type === '' ? 'ANY' : c.type,
      nullable: c.nn === 0n && c.pk === 0n,
      ...definedProps({ default: c.dflt ?? undefined }),
    }));
    const primaryKey = visible
      .filter((c) => c.pk > 0n)
      .sort((a, b) => Number(a.pk - b.pk))
      .map((c) => c.name);
    const indexList = db
      .prepare('SELECT name, "unique" AS u, origin, partial FROM pragma_index_list(?)')
      .all(name) as {
      name: string;
      u: bigint;
      origin: string;
      partial: bigint;
    }[];
    const indexes = indexList
      .map((i) => {
        const cols = db
          .prepare('SELECT name FROM pragma_index_info(?) ORDER BY seqno')
          .all(i.name) as { name: string | null }[];
        const sql = db
          .prepare("SELECT sql FROM sqlite_schema WHERE type = 'index' AND name = ?")
          .pluck()
          .get(i.name) as string | null | undefined;
        return {
          name: i.name,
          columns: cols.map((c) => c.name ?? '<expression>'),
          unique: i.u === 1n,
          primary: i.origin === 'pk',
          ...definedProps({ definition: sql ?? undefined }),
        };
      })
      .sort(byName);
    const fks = db
      .prepare(
        'SELECT id, "table" AS t, "from" AS f, "to" AS r FROM pragma_foreign_key_list(?) ORDER BY id, seq',
      )
      .all(name) as {
      id: bigint;
      t: string;
      f: string;
      r: string | null;
    }[];
    const foreignKeys = [...new Set(fks.map((f) => f.id))].map((id) => {
      const parts = fks.filter((f) => f.id === id);
      return {
        columns: parts.map((p) => p.f),
        table: parts[0]!.t,
        references: parts.map((p) => p.r ?? ''),
      };
    });
    infos.push({
      name,
      columns,
      primaryKey,
      indexes,
      foreignKeys,
      ...pageKey(table.wr === 1n, primaryKey, visible),
    });
  }
  return infos.sort(byName);
}

/**
 * Rows are paged by: the primary key of a WITHOUT ROWID table; an INTEGER PRIMARY KEY (the rowid
 * itself); a primary key whose columns are all NOT NULL (SQLite lets other key columns hold NULL);
 * otherwise the hidden rowid, under whichever of its names no column shadows.
 */
function pageKey(
  withoutRowid: boolean,
  primaryKey: string[],
  columns: { name: string; type: string; nn: bigint }[],
): Pick<TableInfo, 'pageKey' | 'hiddenKey'> {
  if (withoutRowid) return { pageKey: primaryKey };
  const pkColumns = primaryKey.map((k) => columns.find((c) => c.name === k)!);
  if (pkColumns.length === 1 && pkColumns[0]!.type.toUpperCase() === 'INTEGER')
    return { pageKey: primaryKey };
  if (pkColumns.length > 0 && pkColumns.every((c) => c.nn === 1n)) return { pageKey: primaryKey };
  const names = new Set(columns.map((c) => c.name.toLowerCase()));
  const alias = ['rowid', '_rowid_', 'oid'].find((a) => !names.has(a));
  return alias === undefined ? { pageKey: [] } : { pageKey: [alias], hiddenKey: true };
}

/** better-sqlite3 binds numbers, strings, bigints, buffers and null; booleans become 1 and 0. */
function bindable(value: unknown): unknown {
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value;
}
