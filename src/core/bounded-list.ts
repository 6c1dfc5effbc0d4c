/**
 * One provider `list` call under a time budget, so a slow source cannot hold a merged list page
 * hostage. When the budget runs out the call's signal aborts (the provider may stop its work) and
 * the caller gets a `timeout` error at once, whatever the provider does next. The signal handed to
 * the provider is made only if the provider reads it, as the deadline step does; once made, the
 * caller's own abort also ends the wait at once (with the caller's reason).
 */
import { ConfigError, ReservoirError } from './errors.js';
import type { CallContext, Provider, ProviderPage } from './types.js';

/** Default time one source may spend on its part of a list page, ms. */
export const DEFAULT_SOURCE_LIST_TIMEOUT_MS = 2000;

/** `value` when it is a whole number of milliseconds, at least 1; a ConfigError otherwise. */
export function checkSourceListTimeout(value: number): number {
  if (Number.isSafeInteger(value) && value >= 1) return value;
  throw new ConfigError(
    'sourceListTimeoutMs',
    'must be a whole number of milliseconds, at least 1',
    {
      value,
    },
  );
}

/** Calls `provider.list` with at most `budgetMs` to answer; rejects with a `timeout` ReservoirError past it. */
export async function listWithin(
  provider: Provider,
  after: string | undefined,
  limit: number,
  ctx: CallContext,
  budgetMs: number,
): Promise<ProviderPage> {
  if (budgetMs <= 0) throw budgetError(provider, 0);
  // The provider's signal: the budget's, which the caller's abort reaches too once the provider
  // has read it. Not `AbortSignal.any`: a composite signal with an abort listener stays in a
  // process-wide set until it aborts (Node 20 and 24 alike), and with it this call's context and
  // page — every list page a source ever answered stayed in memory (~360 B a resource).
  const budget = new AbortController();
  let stop!: (reason: unknown) => void;
  const stopped = new Promise<never>((_, reject) => (stop = reject));
  let forward: (() => void) | undefined;
  // The caller's fields stay own properties (a spread keeps them); any others read through the prototype.
  const own: PropertyDescriptorMap = {};
  for (const key of ['principal', 'allows'] as const)
    if (ctx[key] !== undefined) own[key] = { value: ctx[key], enumerable: true };
  const bounded = Object.create(ctx, {
    ...own,
    signal: {
      enumerable: true,
      get(): AbortSignal {
        if (forward === undefined) {
          // Linked on first use; from then on the caller's abort ends the wait at once.
          const caller = ctx.signal;
          forward = () => {
            budget.abort(caller.reason);
            stop(caller.reason);
          };
          if (caller.aborted) forward();
          else caller.addEventListener('abort', forward, { once: true });
        }
        return budget.signal;
      },
    },
  }) as CallContext;
  const timer = setTimeout(() => {
    const error = budgetError(provider, budgetMs);
    budget.abort(error);
    stop(error);
  }, budgetMs);
  let work: Promise<ProviderPage> | undefined;
  try {
    work = provider.list(after, limit, bounded);
    return await Promise.race([work, stopped]);
  } finally {
    clearTimeout(timer);
    if (forward !== undefined) ctx.signal.removeEventListener('abort', forward);
    // The abandoned call may still settle later: its outcome no longer matters to anyone.
    work?.catch(() => undefined);
    stopped.catch(() => undefined);
  }
}

function budgetError(provider: Provider, budgetMs: number): ReservoirError {
  return new ReservoirError(
    'timeout',
    `Source ${provider.root} did not answer its part of the list within ${budgetMs} ms`,
    {
      data: { source: provider.root, timeoutMs: budgetMs },
    },
  );
}
