/**
 * For tests of work that must give the event loop turns: a slice whose time has always run out
 * (every look at it asks for a turn), and a count of the turns the loop takes while work runs.
 */
import { Slice } from '../../src/providers/files/slice.js';

/** A slice whose time has always run out: every look at it asks for a turn. */
export class SpentSlice extends Slice {
  override get spent(): boolean {
    return true;
  }
}

/** Counts the turns the event loop takes while `work` runs: one immediate after another. */
export async function turnsDuring<T>(
  work: () => Promise<T>,
): Promise<{ turns: number; result: T }> {
  let turns = 0;
  let running = true;
  const tick = (): void => {
    if (!running) return;
    turns += 1;
    setImmediate(tick);
  };
  setImmediate(tick);
  try {
    const result = await work();
    return { turns, result };
  } finally {
    running = false;
  }
}
