/**
 * Shared watches, counted: the first subscriber of a key starts the one underlying watch, later
 * ones share it, and the last one's stop ends it. Each stop function works once.
 */
export class SharedWatches<Shared> {
  private readonly entries = new Map<string, { shared: Shared; count: number }>();

  constructor(private readonly end: (shared: Shared, key: string) => void) {}

  /** Joins the watch of `key`, starting it with `start` when none runs; returns the stop-once function. */
  acquire(key: string, start: () => Shared): { shared: Shared; stop: () => void } {
    let entry = this.entries.get(key);
    if (entry === undefined) {
      entry = { shared: start(), count: 0 };
      this.entries.set(key, entry);
    }
    entry.count += 1;
    const held = entry;
    let stopped = false;
    return {
      shared: held.shared,
      stop: () => {
        if (stopped) return;
        stopped = true;
        held.count -= 1;
        if (held.count === 0 && this.entries.get(key) === held) {
          this.entries.delete(key);
          this.end(held.shared, key);
        }
      },
    };
  }

  get size(): number {
    return this.entries.size;
  }

  /** Ends every watch (on close). */
  clear(): void {
    for (const [key, entry] of this.entries) this.end(entry.shared, key);
    this.entries.clear();
  }
}
