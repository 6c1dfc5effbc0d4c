/**
 * Change detection by polling: one timer per watched URI, however many watchers hold it. Each poll
 * is a conditional request (`If-None-Match` / `If-Modified-Since`); a 304 is no change, a 200 is a
 * change only when the content differs from the last seen (by hash), and a resource that appears or
 * disappears (404) is a change too. Transient failures (timeouts, 5xx) change nothing: the next poll
 * tries again. The last watcher to leave stops the timer and aborts a poll in flight; `close()`
 * stops everything. Polls never overlap: the next is scheduled when one ends.
 */
import { NotFoundError } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';

/** What one poll saw: the content hash, `missing` (404), or `unchanged` (304 / nothing to compare). */
export type PollOutcome = { hash: string } | 'missing' | 'unchanged';

/** Polls one URI; the poller keeps the state between calls opaque. */
export type PollFn = (signal: AbortSignal, first: boolean) => Promise<PollOutcome>;

interface Watched {
  listeners: Set<() => void>;
  last: string | undefined;
  timer: NodeJS.Timeout | undefined;
  controller: AbortController;
  ready: Promise<void>;
}

export class Poller {
  private readonly watched = new Map<string, Watched>();

  constructor(
    private readonly intervalMs: number,
    private readonly logger: Logger,
  ) {}

  /** Number of URIs polled, for tests and metrics. */
  get size(): number {
    return this.watched.size;
  }

  /**
   * Adds a watcher of `uri`. The first one takes a baseline with `poll`: a 404 there is NotFoundError
   * and starts nothing; other failures start the watch anyway (it recovers when the source returns).
   */
  async watch(uri: string, poll: PollFn, onChange: () => void): Promise<() => void> {
    let watched = this.watched.get(uri);
    if (watched === undefined) {
      const created: Watched = { listeners: new Set(), last: undefined, timer: undefined, controller: new AbortController(), ready: Promise.resolve() };
      created.ready = this.baseline(uri, created, poll);
      this.watched.set(uri, created);
      watched = created;
    }
    const listener = (): void => onChange();
    watched.listeners.add(listener);
    try {
      await watched.ready;
    } catch (error) {
      watched.listeners.delete(listener);
      throw error;
    }
    const current = watched;
    let stopped = false;
    return () => {
      if (stopped) return;
      stopped = true;
      current.listeners.delete(listener);
      if (current.listeners.size === 0 && this.watched.get(uri) === current) this.stop(uri, current);
    };
  }

  close(): void {
    for (const [uri, watched] of [...this.watched]) this.stop(uri, watched);
  }

  private async baseline(uri: string, watched: Watched, poll: PollFn): Promise<void> {
    let outcome: PollOutcome;
    try {
      outcome = await poll(watched.controller.signal, true);
    } catch (error) {
      if (error instanceof NotFoundError) {
        this.stop(uri, watched);
        throw error;
      }
      this.logger.warn({ uri, err: describe(error) }, 'http source: the first poll of a watched resource failed; polling continues');
      this.schedule(uri, watched, poll);
      return;
    }
    if (outcome !== 'unchanged') watched.last = outcome === 'missing' ? outcome : outcome.hash;
    this.schedule(uri, watched, poll);
  }

  private schedule(uri: string, watched: Watched, poll: PollFn): void {
    if (this.watched.get(uri) !== watched || watched.controller.signal.aborted) return;
    watched.timer = setTimeout(() => void this.tick(uri, watched, poll), this.intervalMs);
    watched.timer.unref();
  }

  private async tick(uri: string, watched: Watched, poll: PollFn): Promise<void> {
    watched.timer = undefined;
    let outcome: PollOutcome;
    try {
      outcome = await poll(watched.controller.signal, false);
    } catch (error) {
      outcome = error instanceof NotFoundError ? 'missing' : 'unchanged';
      if (outcome === 'unchanged' && !watched.controller.signal.aborted) {
        this.logger.debug({ uri, err: describe(error) }, 'http source: a poll failed; the next one tries again');
      }
    }
    if (watched.controller.signal.aborted) return;
    if (outcome !== 'unchanged') {
      const next = outcome === 'missing' ? outcome : outcome.hash;
      const changed = watched.last !== undefined && watched.last !== next;
      watched.last = next;
      if (changed) for (const listener of [...watched.listeners]) listener();
    }
    this.schedule(uri, watched, poll);
  }

  private stop(uri: string, watched: Watched): void {
    if (this.watched.get(uri) === watched) this.watched.delete(uri);
    if (watched.timer !== undefined) clearTimeout(watched.timer);
    watched.timer = undefined;
    watched.controller.abort();
  }
}

/** An error as logged: its code and message only (never a cause chain that might hold a request). */
function describe(error: unknown): { code?: unknown; message: string } {
  const e = error as { code?: unknown; message?: unknown };
  return { code: e?.code, message: typeof e?.message === 'string' ? e.message : String(error) };
}
