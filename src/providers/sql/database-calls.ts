/**
 * How the SQL provider calls its database: every call runs through `call(uri, work)`, which turns a
 * dialect's SqlFailure into the typed error the caller sees, worded for them (which database,
 * which timeout, who refused), and logs the database going away and coming back once each.
 */
import type { Logger } from '../../core/log.js';
import { ProviderFailure, providerError } from '../utils/errors.js';
import { SqlFailure, type SqlKind } from './dialect.js';

export interface DatabaseCallsOptions {
  kind: SqlKind;
  database: string;
  timeoutMs: number;
  logger: Logger;
  /** Called when a failure means the schema read before may be stale (unavailable, missing). */
  onStale(): void;
}

/**
 * Runs `work` for `uri`; a failure becomes a typed error whose argument (for an invalid one) is
 * `invalidArgument`.
 */
export type DatabaseCall = <T>(
  uri: string,
  work: () => Promise<T>,
  invalidArgument?: string,
) => Promise<T>;

export function databaseCalls(options: DatabaseCallsOptions): DatabaseCall {
  const { kind, database, timeoutMs, logger } = options;
  let warnedDown = false;

  /** The failure worded for the caller: which database, which timeout, who refused. */
  const worded = (uri: string, error: SqlFailure): ProviderFailure => {
    const cause = { cause: error };
    switch (error.kind) {
      case 'unavailable':
        return new ProviderFailure(
          'unavailable',
          `the ${kind} database '${database}' cannot answer: ${error.message}`,
          cause,
        );
      case 'timeout':
        return new ProviderFailure(
          'timeout',
          `Statement timed out: ${uri} ran past the ${timeoutMs} ms statement timeout`,
          { ...cause, data: { timeoutMs } },
        );
      case 'refused':
        return new ProviderFailure('refused', `refused by the database: ${error.message}`, cause);
      default:
        return error;
    }
  };

  return async (uri, work, invalidArgument = 'uri') => {
    try {
      const result = await work();
      if (warnedDown) logger.info({ source: database }, 'sql: the database answers again');
      warnedDown = false;
      return result;
    } catch (error) {
      if (!(error instanceof SqlFailure)) throw error;
      if (error.kind === 'unavailable') {
        if (!warnedDown)
          logger.warn({ source: database, err: error.message }, 'sql: the database is unavailable');
        warnedDown = true;
      }
      if (error.kind === 'unavailable' || error.kind === 'missing') options.onStale();
      throw providerError(uri, worded(uri, error), { argument: invalidArgument });
    }
  };
}
