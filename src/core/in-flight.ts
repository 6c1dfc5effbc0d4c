/**
 * The requests a transport has taken and not yet answered, so shutdown can wait for them (the
 * drain: docs/operations.md). Each transport counts at its own dispatch layer — the HTTP endpoint
 * per response, the stdio wire per JSON-RPC id — and `idle` resolves once none is left.
 */
export class InFlight<K> {
  private readonly keys = new Set<K>();
  private waiters: Array<() => void> = [];

  get size(): number {
    return this.keys.size;
  }

  /** The keys still in flight (a copy). */
  values(): K[] {
    return [...this.keys];
  }

  add(key: K): void {
    this.keys.add(key);
  }

  /** Marks `key` answered; unknown keys are ignored. */
  delete(key: K): void {
    if (!this.keys.delete(key) || this.keys.size > 0) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /**
   * Resolves true once nothing is in flight, or false when `signal` aborts first (the grace period
   * ran out). The waiter is removed on both paths.
   */
  idle(signal?: AbortSignal): Promise<boolean> {
    if (this.keys.size === 0) return Promise.resolve(true);
    if (signal?.aborted === true) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const wake = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve(true);
      };
      const onAbort = (): void => {
        this.waiters = this.waiters.filter((w) => w !== wake);
        resolve(false);
      };
      this.waiters.push(wake);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
