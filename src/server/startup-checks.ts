/**
 * Checks run once when `reservoir serve` starts: each source with a readiness check is asked once,
 * in the background, and one whose configuration its own checks reject (a ConfigError from
 * `ready()`, e.g. a PostgreSQL role that `sql_query` refuses) is logged at `error`, naming the
 * source and why — before any client asks. A source that merely cannot answer yet is left to the
 * source-health tracking and /readyz, as before.
 */
import { isReservoirError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { redactCredentials } from '../core/source-health.js';
import type { Provider } from '../core/types.js';

/** Asks every provider with a `ready()` once; resolves when each has answered (never rejects). */
export async function reportMisconfiguredSources(providers: readonly Provider[], logger: Logger): Promise<void> {
  await Promise.all(
    providers.map(async (provider) => {
      if (provider.ready === undefined) return;
      try {
        await provider.ready();
      } catch (error) {
        if (!isReservoirError(error) || error.code !== 'config_invalid') return;
        logger.error(
          { source: provider.root, provider: provider.name, err: redactCredentials(error.message) },
          `source ${provider.root} is misconfigured: ${redactCredentials(error.message)}`,
        );
      }
    }),
  );
}
