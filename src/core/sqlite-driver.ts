/**
 * Which better-sqlite3 this runtime loads: every place that opens a SQLite file (the search index,
 * SQLite sources, their child processes, the tests) gets the driver from here, never by importing
 * `better-sqlite3` itself.
 *
 * Two builds are installed. On Node 22 and later, better-sqlite3 13 (the optional dependency
 * `better-sqlite3-13`, an npm alias of `better-sqlite3@13`; a Node-API build shipped prebuilt, so the
 * same binary serves 22 and 24): better-sqlite3 12 aborts the process on Node 24 when a statement is
 * garbage-collected (`node::RemoveEnvironmentCleanupHook`, `(env) != nullptr`). Below 22,
 * better-sqlite3 12 (the regular dependency): 13 crashes there, and npm does not even install it
 * (its `engines` say >= 22, and npm skips an optional dependency whose engines do not match).
 * On Node 22 without 13 (an install with `--omit=optional`), 12 is used: it runs there.
 */
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

export type SqliteDriver = typeof BetterSqlite3;

/** The package of better-sqlite3 13 (see package.json's optionalDependencies). */
export const SQLITE_DRIVER_13 = 'better-sqlite3-13';
/** The package of better-sqlite3 12. */
export const SQLITE_DRIVER_12 = 'better-sqlite3';
/** What installs better-sqlite3 13 under its alias. */
export const SQLITE_DRIVER_13_SPEC = `${SQLITE_DRIVER_13}@npm:better-sqlite3@^13`;

const require = createRequire(import.meta.url);
let loaded: SqliteDriver | undefined;

function installed(name: string): boolean {
  try {
    require.resolve(name);
    return true;
  } catch {
    return false;
  }
}

/**
 * The package for Node `version` (default: this one's): 13 from 22 on, 12 below; 12 on 22 (and 23)
 * when 13 is not installed. From 24 on it is always 13: a missing 13 is then reported as missing
 * (providers/sql/drivers.ts), not papered over with a build that aborts.
 */
export function sqliteDriverPackage(
  version: string = process.versions.node,
  isInstalled: (name: string) => boolean = installed,
): string {
  const major = Number(version.split('.')[0]);
  if (major < 22) return SQLITE_DRIVER_12;
  if (major >= 24 || isInstalled(SQLITE_DRIVER_13)) return SQLITE_DRIVER_13;
  return SQLITE_DRIVER_12;
}

/** The path of this runtime's driver, for a child process to `require` (core/sqlite-process.ts). */
export function sqliteDriverPath(): string {
  return require.resolve(sqliteDriverPackage());
}

/** This runtime's driver, loaded on the first call. */
export function loadSqliteDriver(): SqliteDriver {
  loaded ??= require(sqliteDriverPackage()) as SqliteDriver;
  return loaded;
}
