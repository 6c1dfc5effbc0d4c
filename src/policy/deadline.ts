/**
 * Deadlines. Work runs with a signal that aborts at its deadline or when the caller's signal does,
 * so it is stopped, not abandoned; past the deadline the caller is answered at once without
 * waiting for the work to notice.
 *
 * Made for many short operations: operations with the same limit expire in the order they
 * started, so each limit keeps one queue and one timer (not a timer per operation), and the
 * work's AbortController is only made if the work asks for its signal — a read answered in
 * microseconds never needs one.
 */
import { Cancellation, type CallerSignal } from '../core/cancellation.js';
import { ReservoirError } from '../core/errors.js';

/** Longest delay a Node timer accepts; a longer deadline is treated as none. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** What the work sees of its deadline. */
export interface Lease {
  /** Aborts at the deadline or when the caller aborts; made on first use. */
  readonly signal: AbortSignal;
}

interface Pending {
  deadline: number;
  expire: () => void;
  prev: Pending | undefined;
  next: Pending | undefined;
}

/** The operations running under one limit, oldest (first to expire) first. */
class DeadlineQueue {
  private head: Pending | undefined;
  private tail: Pending | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly ms: number) {}

  add(expire: () => void): Pending {
    const entry: Pending = {
      deadline: Date.now() + this.ms,
      expire,
      prev: this.tail,
      next: undefined,
    };
    if (this.tail === undefined) this.head = entry;
    else this.tail.next = entry;
    this.tail = entry;
    // The timer is armed for the oldest entry; later entries expire later.
    if (this.timer === undefined) this.arm(this.ms);
    return entry;
  }

  remove(entry: Pending): void {
    if (entry.prev === undefined) {
      if (this.head !== entry) return; // already removed
      this.head = entry.next;
    } else {
      entry.prev.next = entry.next;
    }
    if (entry.next === undefined) this.tail = entry.prev;
    else entry.next.prev = entry.prev;
    entry.prev = entry.next = undefined;
    if (this.head === undefined && this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    // Otherwise an armed timer is left to fire: it finds nothing due and re-arms for the oldest entry.
  }

  private arm(ms: number): void {
    // Unreferenced: pending deadlines alone do not keep the process alive.
    this.timer = setTimeout(this.fire, ms);
    this.timer.unref();
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    const now = Date.now();
    while (this.head !== undefined && this.head.deadline <= now) {
      const entry = this.head;
      this.remove(entry);
      entry.expire();
    }
    if (this.head !== undefined && this.timer === undefined)
      this.arm(Math.max(1, this.head.deadline - now));
  };
}

const queues = new Map<number, DeadlineQueue>();

function queueFor(ms: number): DeadlineQueue {
  let queue = queues.get(ms);
  if (queue === undefined) {
    queue = new DeadlineQueue(ms);
    queues.set(ms, queue);
  }
  return queue;
}

/**
 * Runs `work` under a deadline of `ms`. Past the deadline it rejects at once with
 * ReservoirError('timeout', …, { data: { limitMs } }) — the same error is the signal's `reason` —
 * and a caller's abort rejects with a 'timeout' error marked `cancelled: true`. The queue entry
 * and the listener on `signal` are removed on every path.
 */
export function runWithDeadline<T>(
  ms: number,
  signal: CallerSignal | undefined,
  work: (lease: Lease) => Promise<T>,
): Promise<T> {
  if (!(ms > 0))
    return Promise.reject(
      new RangeError(`deadline must be a positive number of milliseconds, got ${ms}`),
    );
  if (signal?.aborted) return Promise.reject(cancelled(ms, signal.reason));
  return new Promise<T>((resolve, reject) => {
    const lease = new LazyLease();
    const queue = ms <= MAX_TIMER_MS ? queueFor(ms) : undefined;
    const cleanup = (): void => {
      if (entry !== undefined) queue?.remove(entry);
      stopListening();
    };
    const stop = (reason: ReservoirError): void => {
      cleanup();
      lease.abort(reason);
      reject(reason);
    };
    function onParentAbort(): void {
      stop(cancelled(ms, signal?.reason));
    }
    const stopListening = listen(signal, onParentAbort);
    const entry = queue?.add(() =>
      stop(
        new ReservoirError('timeout', `Operation timed out after ${ms} ms`, {
          data: { limitMs: ms },
        }),
      ),
    );
    let running: Promise<T>;
    try {
      running = work(lease);
    } catch (error) {
      cleanup();
      return reject(error);
    }
    // Once the deadline passed, the outcome is already decided; later settling changes nothing.
    running.then(
      (value) => {
        cleanup();
        resolve(value);
      },
      (error: unknown) => {
        cleanup();
        reject(error);
      },
    );
  });
}

/** Calls `onAbort` once when `signal` aborts; the function returned stops listening. */
function listen(signal: CallerSignal | undefined, onAbort: () => void): () => void {
  if (signal === undefined) return () => undefined;
  if (signal instanceof Cancellation) return signal.onAbort(onAbort);
  signal.addEventListener('abort', onAbort, { once: true });
  return () => signal.removeEventListener('abort', onAbort);
}

/**
 * The work's view of its deadline. It holds nothing of the operation (no promise, no result), so a
 * context that keeps it after the operation ends keeps nothing else alive.
 */
class LazyLease implements Lease {
  private controller: AbortController | undefined;
  private reason: ReservoirError | undefined;

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.reason !== undefined) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  abort(reason: ReservoirError): void {
    this.reason = reason;
    this.controller?.abort(reason);
  }
}

/** Runs `fn` with a signal that aborts after `ms` or when `signal` aborts (see {@link runWithDeadline}). */
export function withDeadline<T>(
  ms: number,
  signal: CallerSignal | undefined,
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  return runWithDeadline(ms, signal, (lease) => fn(lease.signal));
}

function cancelled(ms: number, cause: unknown): ReservoirError {
  return new ReservoirError('timeout', 'Operation cancelled by the caller before it finished', {
    data: { limitMs: ms, cancelled: true },
    cause,
  });
}
