/**
 * The gate and retry loop every pooled dialect (PostgreSQL, MySQL / MariaDB) runs its work through:
 * a closed source or a database inside its backoff fails fast; a connection that failed before the
 * work's statement went out is replaced once; while the server stays unreachable calls fail fast for
 * a growing backoff (250 ms doubling to 5 s), so a dead database costs nothing per request and the
 * source recovers by itself when it answers again. When the call's signal aborts, the dialect's
 * `cancel` stops the statement in the server, the call rejects at once and the connection is
 * discarded (a late cancel must never reach a later call's statement). Work that must leave its
 * connection clean (`sql_query`) answers first and resets it before it goes back (`defer`).
 */
import { abortError, SqlFailure } from './dialect.js';

const BACKOFF_MIN_MS = 250;
const BACKOFF_MAX_MS = 5000;

/**
 * Work on one pooled connection; `spoil()` makes it be discarded instead of returned; `defer(reset)`
 * (called as the work succeeds) answers the caller at once and runs `reset` before the connection
 * goes back to the pool — discarded instead if the reset fails — so a connection's clean-up is off
 * the answer's path yet always done before it serves again.
 */
export type Work<C, T> = (
  connection: C,
  spoil: () => void,
  defer: (reset: () => Promise<void>) => void,
) => Promise<T>;

export interface PooledOptions<C> {
  /**
   * A connection from the pool (waiting for a free one). The gate answers an abort while it waits
   * at once, and hands back the connection that comes later.
   */
  acquire(): Promise<C>;
  /** Hands `connection` back to the pool, or (`discard`) closes it. */
  release(connection: C, discard: boolean): void;
  /** Stops what `connection` runs in the server (the call was aborted). */
  cancel(connection: C): void;
  /** Readies `connection` before the work (a session to set); runs after the abort wiring. */
  prepare?(connection: C): Promise<void>;
  /**
   * Calls `onLost` when `connection` dies under the work (for a driver whose pending read never
   * calls back then); returns the unsubscribe.
   */
  onLost?(connection: C, onLost: (error?: Error) => void): () => void;
  classify(error: unknown): SqlFailure;
  /** Whether a connection that failed this way is discarded rather than returned. */
  discards(failure: SqlFailure): boolean;
  /**
   * Whether work whose connection was lost after it started is run a second time. MySQL: no (the
   * statement may have run, and the server answered a moment ago: no backoff either).
   */
  retryStarted: boolean;
}

export interface Pooled<C> {
  run<T>(work: Work<C, T>, signal?: AbortSignal): Promise<T>;
  /** Later calls fail as unavailable ("the source is closed"). */
  close(): void;
}

export function pooled<C>(options: PooledOptions<C>): Pooled<C> {
  let backoffMs = 0;
  let downUntil = 0;
  let closed = false;

  const run = async <T>(work: Work<C, T>, signal?: AbortSignal): Promise<T> => {
    if (closed) throw new SqlFailure('unavailable', 'the source is closed');
    if (Date.now() < downUntil)
      throw new SqlFailure(
        'unavailable',
        `the database is unreachable; retrying in ${downUntil - Date.now()} ms`,
      );
    if (signal?.aborted === true) throw abortError(signal);
    for (let attempt = 0; ; attempt += 1) {
      let connection: C | undefined;
      let spoiled = false;
      let started = false;
      let onAbort: (() => void) | undefined;
      let unsubscribeLost: (() => void) | undefined;
      let reset: (() => Promise<void>) | undefined;
      try {
        connection = await unlessAborted(
          options.acquire,
          (late) => options.release(late, false),
          signal,
        );
        const held = connection;
        const aborted = new Promise<never>((_, reject) => {
          onAbort = () => {
            spoiled = true;
            options.cancel(held);
            reject(abortError(signal!));
          };
          if (signal?.aborted === true) onAbort();
          else signal?.addEventListener('abort', onAbort, { once: true });
        });
        aborted.catch(() => undefined);
        const racers: Promise<never>[] = [aborted];
        if (options.onLost !== undefined) {
          const lost = new Promise<never>((_, reject) => {
            unsubscribeLost = options.onLost!(held, (error) => {
              spoiled = true;
              reject(error ?? new Error('the connection to the database ended'));
            });
          });
          lost.catch(() => undefined);
          racers.push(lost);
        }
        if (options.prepare !== undefined) await Promise.race([options.prepare(held), ...racers]);
        started = true;
        const result = await Promise.race([
          work(
            held,
            () => (spoiled = true),
            (then) => (reset = then),
          ),
          ...racers,
        ]);
        const deferred = reset;
        reset = undefined;
        if (deferred === undefined || spoiled) options.release(held, spoiled);
        else
          void deferred().then(
            () => options.release(held, false),
            () => options.release(held, true),
          );
        backoffMs = 0;
        return result;
      } catch (error) {
        if (isAborted(signal)) {
          if (connection !== undefined) options.release(connection, true);
          throw abortError(signal);
        }
        const failure = options.classify(error);
        // a reset the failed work asked for is not run: the connection is discarded instead
        if (connection !== undefined)
          options.release(connection, spoiled || reset !== undefined || options.discards(failure));
        if (failure.kind !== 'unavailable') throw failure;
        if (started && !options.retryStarted) throw failure;
        if (attempt === 0 && !closed) continue;
        backoffMs = Math.min(BACKOFF_MAX_MS, Math.max(BACKOFF_MIN_MS, backoffMs * 2));
        downUntil = Date.now() + backoffMs;
        throw failure;
      } finally {
        if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort);
        unsubscribeLost?.();
      }
    }
  };

  return {
    run,
    close: () => {
      closed = true;
    },
  };
}

/**
 * What `connect` resolves with, unless `signal` aborts first: then the call rejects at once, and the
 * connection that comes later goes straight back (`release`).
 */
function unlessAborted<C>(
  connect: () => Promise<C>,
  release: (late: C) => void,
  signal: AbortSignal | undefined,
): Promise<C> {
  if (signal === undefined) return connect();
  if (signal.aborted) return Promise.reject(abortError(signal));
  return new Promise<C>((resolve, reject) => {
    const onAbort = (): void => reject(abortError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    connect().then(
      (connection) => {
        signal.removeEventListener('abort', onAbort);
        if (signal.aborted) release(connection);
        else resolve(connection);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

function isAborted(signal: AbortSignal | undefined): signal is AbortSignal {
  return signal?.aborted === true;
}
