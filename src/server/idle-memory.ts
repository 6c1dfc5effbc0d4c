/**
 * The idle memory reducer: once the server goes quiet after a burst of work (a full listing of a
 * million files, a big bucket), it asks V8 once to give back what the burst left committed — the
 * young generation grown to its maximum semi-space size and old-generation pages V8 keeps. V8's own
 * memory reducer starts only after a mark-compact that grew the old generation by 10 MB, which
 * paging (everything dies young) never does, so without this the RSS stays at its peak for good.
 *
 * Cost on the hot path: two counters per operation (docs/design.md, "Memory after a burst"). A
 * timer runs only while a quiet period is awaited after operations ran, every `quietMs / 3`, and
 * stops once the server has been quiet for three ticks: an idle server runs nothing. The heap is
 * judged then, once: it is collected only if it grew by `MIN_GROWTH_BYTES` since the last time.
 */
import type { Policy } from '../policy/index.js';

/** How long the server must be quiet (no operation in flight or begun) before memory is given back, ms. */
export const DEFAULT_QUIET_MS = 6_000;
/** Heap (committed + external) growth since the last reduction that makes one worth its pause. */
export const MIN_GROWTH_BYTES = 16 * 1024 * 1024;
/** Quiet ticks in a quiet period: a tick that saw an operation starts the count again. */
const QUIET_TICKS = 3;

export interface IdleMemoryOptions {
  /** Quiet time before the reduction, ms (V8 ≤ 11 needs over 5 s, its allocation-rate window). @default 6000 */
  quietMs?: number | undefined;
}

/** What the reducer runs on: the process's heap and timers, or a test's. */
export interface IdleMemoryHost {
  /** Heap bytes held now: what a reduction could give back is judged by its growth. */
  heldBytes(): number;
  /** Gives memory back (a full GC that shrinks the young generation). */
  release(): void;
  /** Keeps the heap from growing far past its live data while work runs; called once, at the start. */
  bound?(): void;
  /** Calls `tick` after `ms`; the handle is cleared by `cancel`. */
  after(ms: number, tick: () => void): unknown;
  cancel(handle: unknown): void;
}

export class IdleMemoryReducer {
  private inFlight = 0;
  /** Operations begun: a tick that sees it moved was not quiet. */
  private begun = 0;
  private begunAtTick = 0;
  private quietTicks = 0;
  private timer: unknown;
  private baseline: number;
  private closed = false;
  private readonly tickMs: number;
  /** Reductions run (for tests and logs). */
  reductions = 0;

  constructor(
    private readonly host: IdleMemoryHost,
    options: IdleMemoryOptions = {},
  ) {
    const quietMs = options.quietMs ?? DEFAULT_QUIET_MS;
    if (!(Number.isFinite(quietMs) && quietMs > 0))
      throw new RangeError(`idle memory quietMs: expected a positive number of ms, got ${quietMs}`);
    this.tickMs = quietMs / QUIET_TICKS;
    host.bound?.();
    this.baseline = host.heldBytes();
  }

  /** `policy` with every operation counted in flight. */
  around(policy: Policy): Policy {
    return async (ctx, handler) => {
      this.inFlight += 1;
      this.begun += 1;
      try {
        return await policy(ctx, handler);
      } finally {
        this.inFlight -= 1;
        if (this.inFlight === 0 && this.timer === undefined) this.arm();
      }
    };
  }

  /** Stops the pending timer; nothing runs after. */
  close(): void {
    this.closed = true;
    if (this.timer !== undefined) this.host.cancel(this.timer);
    this.timer = undefined;
  }

  private arm(): void {
    if (this.closed) return;
    this.begunAtTick = this.begun;
    this.timer = this.host.after(this.tickMs, () => this.tick());
  }

  private tick(): void {
    this.timer = undefined;
    // An operation in flight re-arms when it ends; one begun and ended since restarts the count.
    if (this.inFlight > 0) {
      this.quietTicks = 0;
      return;
    }
    if (this.begun !== this.begunAtTick) this.quietTicks = 0;
    else this.quietTicks += 1;
    if (this.quietTicks < QUIET_TICKS) return this.arm();
    this.quietTicks = 0;
    const held = this.host.heldBytes();
    if (held - this.baseline < MIN_GROWTH_BYTES) {
      // Too little to give back for a pause: the mark stays (or falls, as the heap did).
      this.baseline = Math.min(this.baseline, held);
      return;
    }
    this.host.release();
    this.reductions += 1;
    // What a release leaves (the live data, which may have grown) is the mark to grow past.
    this.baseline = this.host.heldBytes();
  }
}
