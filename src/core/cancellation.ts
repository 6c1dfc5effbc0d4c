/**
 * A request's cancellation whose AbortSignal is made only if something asks for it.
 *
 * Node's AbortSignal is an EventTarget: making one costs ~2 µs, and adding and removing a listener
 * on it ~1.6 µs more — together more than a cached read costs. The endpoints' direct reads cancel
 * through this instead: the deadline step listens with `onAbort` (a plain callback), and a real
 * signal exists only once work asks for `signal` (a provider doing I/O it can abort).
 */
export class Cancellation {
  private controller: AbortController | undefined;
  private listeners: Array<() => void> | undefined;
  private abortedWith: { reason: unknown } | undefined;

  get aborted(): boolean {
    return this.abortedWith !== undefined;
  }

  get reason(): unknown {
    return this.abortedWith?.reason;
  }

  /** The signal, made on first use (already aborted when the cancellation is). */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.abortedWith !== undefined) this.controller.abort(this.abortedWith.reason);
    }
    return this.controller.signal;
  }

  /** Cancels: `onAbort` callbacks run once, then the signal (if made) aborts. Later calls do nothing. */
  abort(reason?: unknown): void {
    if (this.abortedWith !== undefined) return;
    // As AbortController: no reason given is an AbortError.
    this.abortedWith = {
      reason:
        reason === undefined
          ? new DOMException('This operation was aborted', 'AbortError')
          : reason,
    };
    const listeners = this.listeners;
    this.listeners = undefined;
    if (listeners !== undefined) for (const listener of listeners) listener();
    this.controller?.abort(this.abortedWith.reason);
  }

  /** How many `onAbort` listeners wait (for tests: every path removes its own). */
  get listenerCount(): number {
    return this.listeners?.length ?? 0;
  }

  /** Calls `listener` once when cancelled; the function returned removes it. */
  onAbort(listener: () => void): () => void {
    (this.listeners ??= []).push(listener);
    return () => {
      const at = this.listeners?.indexOf(listener) ?? -1;
      if (at >= 0) this.listeners!.splice(at, 1);
    };
  }
}

/** What a caller hands work for its cancellation: a signal, or a cancellation that makes one on demand. */
export type CallerSignal = AbortSignal | Cancellation;

/** The AbortSignal of a caller's cancellation (made now if it is a Cancellation's). */
export function signalOf(cancel: CallerSignal): AbortSignal {
  return cancel instanceof Cancellation ? cancel.signal : cancel;
}
