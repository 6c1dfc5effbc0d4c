/**
 * A poller for providers that detect changes by asking: runs `check` every `intervalMs` (one at a
 * time, never overlapping), doubles the wait after each failure up to `maxBackoff` times the
 * interval (throttling and outages are not hammered), and returns to the interval after a success.
 */
export interface PollerOptions {
  intervalMs: number;
  /** Largest multiple of the interval a failing check waits. @default 64 */
  maxBackoff?: number;
  /**
   * Count the interval from the start of one check to the start of the next (a slow check does
   * not push every later one back), rather than from the end of one to the start of the next.
   * Checks still never overlap. @default false
   */
  fromStart?: boolean;
  check(): Promise<void>;
  /** Told of each failure, with the wait before the next try. */
  onError?(error: unknown, nextInMs: number): void;
}

export class Poller {
  private timer: NodeJS.Timeout | undefined;
  private factor = 1;
  private stopped = false;

  constructor(private readonly options: PollerOptions) {
    this.schedule();
  }

  /** Milliseconds until the next check (for tests and stats). */
  get waitMs(): number {
    return this.options.intervalMs * this.factor;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(tookMs = 0): void {
    if (this.stopped) return;
    const wait =
      this.options.fromStart === true && this.factor === 1
        ? Math.max(0, this.waitMs - tookMs)
        : this.waitMs;
    this.timer = setTimeout(() => void this.run(), wait);
    this.timer.unref();
  }

  private async run(): Promise<void> {
    const started = performance.now();
    try {
      await this.options.check();
      this.factor = 1;
    } catch (error) {
      this.factor = Math.min(this.factor * 2, this.options.maxBackoff ?? 64);
      this.options.onError?.(error, this.waitMs);
    }
    this.schedule(performance.now() - started);
  }
}
