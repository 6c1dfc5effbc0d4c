/**
 * Checks run once when `reservoir serve` starts: each source with a configuration check
 * (`Provider.misconfigured`, e.g. a PostgreSQL source whose role `sql_query` refuses) is asked once,
 * in the background, and one that cannot work as declared is logged at `error`, naming the source
 * and why — before any client asks. Only those sources are contacted at start; one whose backend
 * cannot answer yet is left to the source-health tracking and /readyz, as before.
 */
import type { Logger } from '../core/log.js';
import { redactCredentials } from '../core/source-health.js';
import type { Provider } from '../core/types.js';

/** Asks every provider with a `misconfigured()` once; resolves when each has answered (never rejects). */
export async function reportMisconfiguredSources(
  providers: readonly Provider[],
  logger: Logger,
): Promise<void> {
  await Promise.all(
    providers.map(async (provider) => {
      let why: string | undefined;
      try {
        why = await provider.misconfigured?.();
      } catch {
        return;
      }
      if (why === undefined) return;
      const err = redactCredentials(why);
      logger.error(
        { source: provider.root, provider: provider.name, err },
        `source ${provider.root} is misconfigured: ${err}`,
      );
    }),
  );
}
