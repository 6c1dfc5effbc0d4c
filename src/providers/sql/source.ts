/**
 * The catalog's entry point for `type: sql` sources (loaded only when a config has one): the
 * provider, and its `sql_query_NAME` tool when `queryTool` is on.
 */
import type { SourceBuild } from '../utils/source-build.js';
import { requireSqlDrivers } from './drivers.js';
import { sqlProvider } from './index.js';
import { urlKind, type SqlSourceOptions } from './options.js';
import { sqlQueryTool } from './tool.js';

export const build: SourceBuild<SqlSourceOptions> = (options, logger) => {
  // A missing optional driver is one clear start-up (or reload) error, never a crash at the first query.
  requireSqlDrivers(
    options.url === undefined ? 'sqlite' : urlKind(options.url),
    options.url === undefined ? 'sources[].path' : 'sources[].url',
  );
  const provider = sqlProvider({ ...options, logger });
  return options.queryTool === true ? { provider, tools: [sqlQueryTool(provider)] } : { provider };
};
