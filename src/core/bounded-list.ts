/**
 * One provider `list` call under a time budget, so a slow source cannot hold a merged list page
 * hostage. When the budget runs out the call's signal aborts (the provider may stop its work) and
 * the caller gets a `timeout` error at once, whatever the provider does next. The signal handed to
 * the provider is made only if the provider reads it, as the deadline step does.
 */
import { ReservoirError } from './errors.js';
import type { CallContext, Provider, ProviderPage } from './types.js';

/** Default time one source may spend on its part of a list page, ms. */
export const DEFAULT_SOURCE_LIST_TIMEOUT_MS = 2000;

/** Calls `provider.list` with at most `budgetMs` to answer; rejects with a `timeout` ReservoirError past it. */
export async function listWithin(
  provider: Provider,
  after: string | undefined,
  limit: number,
  ctx: CallContext,
  budgetMs: number,
): Promise<ProviderPage> {
  if (budgetMs <= 0) throw budgetError(provider, 0);
  const budget = new AbortController();
  let signal: AbortSignal | undefined;
  const bounded: CallContext = {
    get signal() {
      return (signal ??= AbortSignal.any([ctx.signal, budget.signal]));
    },
    ...(ctx.principal === undefined ? {} : { principal: ctx.principal }),
    ...(ctx.allows === undefined ? {} : { allows: ctx.allows }),
  };
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = budgetError(provider, budgetMs);
      budget.abort(error);
      reject(error);
    }, budgetMs);
  });
  const work = provider.list(after, limit, bounded);
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
    // The abandoned call may still settle later: its outcome no longer matters to anyone.
    work.catch(() => undefined);
    expired.catch(() => undefined);
  }
}

function budgetError(provider: Provider, budgetMs: number): ReservoirError {
  return new ReservoirError('timeout', `Source ${provider.root} did not answer its part of the list within ${budgetMs} ms`, {
    data: { source: provider.root, timeoutMs: budgetMs },
  });
}
