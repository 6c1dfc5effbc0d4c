/**
 * How many entries one list call of a tree-shaped source (files, git) may examine to fill a page:
 * entries it skips (ignored files, symlinks, submodules) cost a look too, so the budget is a
 * multiple of the page, with a floor for small pages. Past it the page ends early, with a cursor.
 */

/** Entries examined per entry asked for. */
const SCAN_BUDGET_FACTOR = 8;
/** Entries a page may always examine, however small. */
const SCAN_BUDGET_MIN = 10_000;

/** Entries a list call asking for `limit` items may examine. */
export function scanBudget(limit: number): number {
  return Math.max(SCAN_BUDGET_MIN, limit * SCAN_BUDGET_FACTOR);
}
