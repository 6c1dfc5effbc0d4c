/**
 * The turns a list page takes on the event loop. A page of 1,000 files is ~20 ms of work on a
 * loaded core: run in one piece, every other request on the connection (a read, a cancel) waits
 * behind it. The walk, the building of the page's items and its head reads share one Slice: each
 * checks `spent` between two entries and, when it is, awaits `next()`, so the page never holds the
 * thread longer than SLICE_MS at a time and a read sent meanwhile is answered between two slices.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

/** The longest a list page runs before it gives the event loop a turn, ms. */
export const SLICE_MS = 2;

export class Slice {
  private started = performance.now();

  /** Whether this slice has run its time: the caller should `await next()` before going on. */
  get spent(): boolean {
    return performance.now() - this.started >= SLICE_MS;
  }

  /** Gives the event loop a turn (I/O, other requests' work), then starts the next slice. */
  async next(): Promise<void> {
    await nextTurn();
    this.started = performance.now();
  }
}
