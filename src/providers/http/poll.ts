/**
 * Change detection by polling, on the provider kit: one shared watch per URI however many watchers
 * hold it (`SharedWatches`: the last to leave stops it, each stop works once), driven by the kit's
 * `Poller` (polls never overlap; a failing upstream is polled at a doubling interval until it
 * answers again). Each poll is a conditional request (`If-None-Match` / `If-Modified-Since`); a
 * 304 is no change, a 200 is a change only when the content differs from the last seen (by hash),
 * and a resource that appears or disappears (404) is a change too. Transient failures (timeouts,
 * 5xx) change nothing. Stopping aborts a poll in flight; `close()` stops everything.
 */
import { NotFoundError } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import { Poller as KitPoller } from '../utils/poller.js';
import { SharedWatches } from '../utils/refcount.js';

/** What one poll saw: the content hash, `missing` (404), or `unchanged` (304 / nothing to compare). */
export type PollOutcome = { hash: string } | 'missing' | 'unchanged';

/** Polls one URI; the poller keeps the state between calls opaque. */
export type PollFn = (signal: AbortSignal, first: boolean) => Promise<PollOutcome>;

interface Watched {
  listeners: Set<() => void>;
  last: string | undefined;
  poller: KitPoller | undefined;
  controller: AbortController;
  ready: Promise<void>;
}

export class Poller {
  private readonly watches = new SharedWatches<Watched>((watched) => {
    watched.poller?.stop();
    watched.controller.abort();
  });

  constructor(
    private readonly intervalMs: number,
    private readonly logger: Logger,
  ) {}

  /** Number of URIs polled, for tests and metrics. */
  get size(): number {
    return this.watches.size;
  }

  /**
   * Adds a watcher of `uri`. The first one takes a baseline with `poll`: a 404 there is NotFoundError
   * and starts nothing; other failures start the watch anyway (it recovers when the source returns).
   */
  async watch(uri: string, poll: PollFn, onChange: () => void): Promise<() => void> {
    const { shared: watched, stop } = this.watches.acquire(uri, () => {
      const created: Watched = {
        listeners: new Set(),
        last: undefined,
        poller: undefined,
        controller: new AbortController(),
        ready: Promise.resolve(),
      };
      created.ready = this.baseline(uri, created, poll);
      return created;
    });
    const listener = (): void => onChange();
    watched.listeners.add(listener);
    try {
      await watched.ready;
    } catch (error) {
      watched.listeners.delete(listener);
      stop();
      throw error;
    }
    return () => {
      watched.listeners.delete(listener);
      stop();
    };
  }

  close(): void {
    this.watches.clear();
  }

  private async baseline(uri: string, watched: Watched, poll: PollFn): Promise<void> {
    try {
      const outcome = await poll(watched.controller.signal, true);
      if (outcome !== 'unchanged') watched.last = outcome === 'missing' ? outcome : outcome.hash;
    } catch (error) {
      if (error instanceof NotFoundError) throw error;
      this.logger.warn(
        { uri, err: describe(error) },
        'http source: the first poll of a watched resource failed; polling continues',
      );
    }
    if (watched.controller.signal.aborted) return;
    watched.poller = new KitPoller({
      intervalMs: this.intervalMs,
      check: () => this.tick(watched, poll),
      onError: (error, nextInMs) => {
        if (!watched.controller.signal.aborted)
          this.logger.debug(
            { uri, err: describe(error), nextInMs },
            'http source: a poll failed; the next one tries again',
          );
      },
    });
  }

  /** One poll: a change tells every listener; a failure other than a 404 is thrown (the poller backs off). */
  private async tick(watched: Watched, poll: PollFn): Promise<void> {
    let outcome: PollOutcome;
    try {
      outcome = await poll(watched.controller.signal, false);
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
      outcome = 'missing';
    }
    if (watched.controller.signal.aborted || outcome === 'unchanged') return;
    const next = outcome === 'missing' ? outcome : outcome.hash;
    const changed = watched.last !== undefined && watched.last !== next;
    watched.last = next;
    if (changed) for (const listener of [...watched.listeners]) listener();
  }
}

/** An error as logged: its code and message only (never a cause chain that might hold a request). */
function describe(error: unknown): { code?: unknown; message: string } {
  const e = error as { code?: unknown; message?: unknown };
  return { code: e?.code, message: typeof e?.message === 'string' ? e.message : String(error) };
}
