/**
 * The database drivers a sql source needs, checked when the source is built (at start or on
 * reload), so a missing optional driver is one clear start-up error naming the command that installs
 * it, never a crash at the first query. `pg` and `mysql2` are optional dependencies: a
 * files-only install may leave them out. `better-sqlite3` is a core dependency (the search index
 * uses it) but is checked the same way, since its native build can fail; on Node 22 and later the
 * build checked is better-sqlite3 13, the optional `better-sqlite3-13` (core/sqlite-driver.ts).
 */
import { createRequire } from 'node:module';
import { ConfigError } from '../../core/errors.js';
import {
  SQLITE_DRIVER_13,
  SQLITE_DRIVER_13_SPEC,
  sqliteDriverPackage,
} from '../../core/sqlite-driver.js';

const DRIVERS = {
  postgres: () => ['pg'],
  mysql: () => ['mysql2'],
  sqlite: () => [sqliteDriverPackage()],
} as const;

/** What `npm install` needs to install a package: its name, or the alias spec of better-sqlite3 13. */
const installSpec = (name: string): string =>
  name === SQLITE_DRIVER_13 ? SQLITE_DRIVER_13_SPEC : name;

export type SqlDriverKind = keyof typeof DRIVERS;

/** Whether `name` can be loaded from here; `resolve` is swappable for tests. */
export type Resolve = (name: string) => string;

const defaultResolve: Resolve = (name) => createRequire(import.meta.url).resolve(name);

/** Throws ConfigError for `field` when a driver `kind` needs cannot be loaded. */
export function requireSqlDrivers(
  kind: SqlDriverKind,
  field: string,
  resolve: Resolve = defaultResolve,
): void {
  const missing = DRIVERS[kind]().filter((name) => {
    try {
      resolve(name);
      return false;
    } catch {
      return true;
    }
  });
  if (missing.length === 0) return;
  const what =
    kind === 'postgres'
      ? 'a PostgreSQL source'
      : kind === 'mysql'
        ? 'a MySQL / MariaDB source'
        : 'a SQLite source';
  throw new ConfigError(
    field,
    `${what} needs the ${missing.join(' and ')} package${missing.length === 1 ? '' : 's'}, which ${missing.length === 1 ? 'is' : 'are'} not installed; ` +
      `install ${missing.length === 1 ? 'it' : 'them'} where mcp-reservoir is installed: npm install ${missing.map(installSpec).join(' ')} (add -g for a global install)`,
    { missing },
  );
}
