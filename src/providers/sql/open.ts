/**
 * Which dialect a sql source's options name, built (its driver still unloaded: each loads on first
 * use), and the source's default name.
 */
import { basename, extname, resolve as resolvePath } from 'node:path';
import { ConfigError } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import type { Dialect } from './dialect.js';
import { databaseOf } from './mysql-connect.js';
import { mysqlDialect } from './mysql.js';
import { urlKind, type SqlSourceOptions } from './options.js';
import { postgresDialect } from './postgres.js';
import { sqliteDialect } from './sqlite.js';

export function openDialect(
  config: SqlSourceOptions,
  settings: { statementTimeoutMs: number; logger: Logger; schema: string },
): Dialect {
  const { statementTimeoutMs, logger, schema } = settings;
  const allowPrivilegedRole = config.allowPrivilegedRole ?? false;
  const poolMax = config.pool?.max;
  if (config.url === undefined) return sqliteDialect(resolvePath(config.path!));
  if (urlKind(config.url) === 'mysql') {
    if (databaseOf(config.url) === '')
      throw new ConfigError(
        'url',
        'a MySQL / MariaDB URL must name the database to serve (mysql://user@host:3306/DATABASE)',
      );
    return mysqlDialect({
      url: config.url,
      statementTimeoutMs,
      allowPrivilegedRole,
      logger,
      poolMax,
    });
  }
  return postgresDialect({
    url: config.url,
    schema,
    statementTimeoutMs,
    allowPrivilegedRole,
    logger,
    poolMax,
  });
}

/** The default source name: the SQLite file's base name, or the URL's database name. */
export function defaultName(path: string | undefined, url: string | undefined): string {
  let base = 'db';
  if (path !== undefined) base = basename(path, extname(path));
  else if (url !== undefined) {
    const fallback = urlKind(url) === 'mysql' ? 'mysql' : 'postgres';
    try {
      base =
        decodeURIComponent(new URL(url.replace(/^mariadb:/i, 'mysql:')).pathname.slice(1)) ||
        fallback;
    } catch {
      base = fallback;
    }
  }
  const name = base
    .toLowerCase()
    .replace(/[^a-z0-9._-]/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, 63);
  return name === '' ? 'db' : name;
}
