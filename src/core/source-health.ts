/**
 * Which mounted sources are failing right now. The registry reports every list call's outcome here:
 * a source that fails (it threw, or ran past its time budget) is marked down and logged once, at
 * `warn`, for the whole outage. While it is down, list pages skip it at once (a hung source costs
 * a page nothing after the page that found it down) and a background probe — a one-item list, one at
 * a time, a second apart — tries it; the first success (of a probe, or of /readyz's check) marks it
 * up again and logs once, at `info`, so it comes back by itself. /readyz reads the outages; list
 * answers name the sources they skipped. Only a source's root (its URI prefix, e.g. `db://shop/`)
 * and a failure kind reach an MCP client; the error's own message, which may name hosts, goes to
 * the log and to /readyz, with credentials in URLs removed.
 */
import { listWithin } from './bounded-list.js';
import { isReservoirError, ReservoirError } from './errors.js';
import { silentLogger, type Logger } from './log.js';
import type { Provider } from './types.js';

/**
 * The result `_meta` key naming the sources a listing went without (each `{ source, reason }`):
 * on `resources/list` pages and on the `list_resources` / `find_resources` tool results. Absent when
 * every source answered.
 */
export const SKIPPED_SOURCES_META_KEY = 'reservoir/skippedSources';

/** Why a source was skipped: it said it cannot answer, it ran past its budget, or it failed otherwise. */
export type SkipReason = 'unavailable' | 'timeout' | 'error';

/** A source a list page went without, as the page's `_meta` names it. */
export interface SkippedSource {
  /** The mount's root, e.g. `db://shop/`: the source's public name, never its connection details. */
  source: string;
  reason: SkipReason;
}

/** A source that is down now, as /readyz reports it. */
export interface SourceOutage extends SkippedSource {
  /** When the outage was first seen (ISO 8601). */
  since: string;
  /** The last error's message, with any credentials in URLs removed (for operators). */
  message: string;
}

/** Default pause between two probes of a down source, ms. */
export const DEFAULT_SOURCE_PROBE_INTERVAL_MS = 1000;

interface Tracked {
  outage: SourceOutage;
  provider: Provider;
  timer: NodeJS.Timeout | undefined;
}

export interface SourceHealthOptions {
  logger?: Logger | undefined;
  /** Time a probe (a one-item list) may take, ms. @default 2000 */
  probeBudgetMs?: number | undefined;
  /** Pause between two probes of a down source, ms. @default 1000 */
  probeIntervalMs?: number | undefined;
}

export class SourceHealth {
  private readonly down = new Map<string, Tracked>();
  private readonly logger: Logger;
  private readonly probeBudgetMs: number;
  private readonly probeIntervalMs: number;

  constructor(options: SourceHealthOptions = {}) {
    this.logger = options.logger ?? silentLogger;
    this.probeBudgetMs = options.probeBudgetMs ?? 2000;
    this.probeIntervalMs = options.probeIntervalMs ?? DEFAULT_SOURCE_PROBE_INTERVAL_MS;
  }

  /**
   * Records a failure of `provider`; logs only when it starts an outage, and from then on probes the
   * source in the background (one one-item list at a time, `probeIntervalMs` apart) until it answers.
   * Returns what a page names.
   */
  failed(provider: Provider, error: unknown): SkippedSource {
    const reason = reasonOf(error);
    const message = redactCredentials(error instanceof Error ? error.message : String(error));
    const known = this.down.get(provider.root);
    if (known === undefined) {
      this.logger.warn(
        { source: provider.root, provider: provider.name, reason, err: message },
        'source failed; lists skip it until it answers again',
      );
      const tracked: Tracked = {
        outage: { source: provider.root, reason, since: new Date().toISOString(), message },
        provider,
        timer: undefined,
      };
      this.down.set(provider.root, tracked);
      this.schedule(tracked);
    } else {
      known.outage.reason = reason;
      known.outage.message = message;
    }
    return { source: provider.root, reason };
  }

  /** Records a success of `provider`; logs when it ends an outage. */
  succeeded(provider: Provider): void {
    const known = this.down.get(provider.root);
    if (known === undefined) return;
    this.stop(known);
    this.logger.info(
      { source: provider.root, provider: provider.name, downSince: known.outage.since },
      'source answers again; lists include it',
    );
  }

  /** The outage of the source at `root`, if it is down. */
  outage(root: string): SourceOutage | undefined {
    const known = this.down.get(root);
    return known === undefined ? undefined : { ...known.outage };
  }

  /** Forgets a source that is no longer mounted (and stops probing it). */
  forget(root: string): void {
    const known = this.down.get(root);
    if (known !== undefined) this.stop(known);
  }

  /** Stops every probe. */
  close(): void {
    for (const known of [...this.down.values()]) this.stop(known);
  }

  private stop(known: Tracked): void {
    clearTimeout(known.timer);
    known.timer = undefined;
    if (this.down.get(known.provider.root) === known) this.down.delete(known.provider.root);
  }

  private schedule(known: Tracked): void {
    known.timer = setTimeout(() => {
      known.timer = undefined;
      const { provider } = known;
      listWithin(
        provider,
        undefined,
        1,
        { signal: AbortSignal.timeout(this.probeBudgetMs) },
        this.probeBudgetMs,
      ).then(
        () => {
          if (this.down.get(provider.root) === known) this.succeeded(provider);
        },
        (error: unknown) => {
          if (this.down.get(provider.root) !== known) return;
          this.failed(provider, error);
          this.schedule(known);
        },
      );
    }, this.probeIntervalMs);
    known.timer.unref();
  }
}

/** What a readiness check says of one source. */
export interface SourceReadiness {
  source: string;
  ready: boolean;
  reason?: SkipReason;
  /** The error's message, credentials removed. */
  message?: string;
  since?: string;
}

/**
 * Checks whether `provider` can answer now, within `budgetMs`: its own `ready()` when it has one;
 * otherwise, while it is known to be down, a one-item list (a source with neither is ready until a
 * list fails). The outcome feeds `health`, so a recovery seen here is seen by lists too.
 */
export async function probeSource(
  provider: Provider,
  health: SourceHealth,
  budgetMs: number,
): Promise<SourceReadiness> {
  const check = provider.ready?.bind(provider);
  if (check === undefined && health.outage(provider.root) === undefined)
    return { source: provider.root, ready: true };
  try {
    if (check === undefined)
      await listWithin(provider, undefined, 1, { signal: AbortSignal.timeout(budgetMs) }, budgetMs);
    else await withinBudget(check(), provider, budgetMs);
    health.succeeded(provider);
    return { source: provider.root, ready: true };
  } catch (error) {
    // A source misconfigured for its own checks (a SQL role sql_query refuses) still serves lists:
    // not ready, but not an outage that lists skip.
    if (isReservoirError(error) && error.code === 'config_invalid') {
      return {
        source: provider.root,
        ready: false,
        reason: 'error',
        message: redactCredentials(error.message),
      };
    }
    health.failed(provider, error);
    const outage = health.outage(provider.root)!;
    return {
      source: provider.root,
      ready: false,
      reason: outage.reason,
      message: outage.message,
      since: outage.since,
    };
  }
}

async function withinBudget(
  work: Promise<void>,
  provider: Provider,
  budgetMs: number,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new ReservoirError(
            'timeout',
            `Source ${provider.root} did not answer its readiness check within ${budgetMs} ms`,
          ),
        ),
      budgetMs,
    );
  });
  try {
    await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
    work.catch(() => undefined);
  }
}

function reasonOf(error: unknown): SkipReason {
  if (isReservoirError(error) && (error.code === 'unavailable' || error.code === 'timeout'))
    return error.code;
  return 'error';
}

/** Removes `user:password@` from anything URL-shaped in `text`, and `password=` parameters. */
export function redactCredentials(text: string): string {
  return text
    .replace(/([a-z][a-z0-9+.-]*:\/\/)[^/\s@]*@/gi, '$1***@')
    .replace(/(password=)[^&\s]*/gi, '$1***');
}
