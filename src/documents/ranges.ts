/**
 * Checking a requested page or slide range against what the document has: an out-of-range part is
 * an invalid-argument failure that names the valid range.
 */
import { DocumentError, type NumberRange } from './types.js';

/** The first and last numbers `range` selects of `count` (all when undefined); throws when out of range. */
export function pickRange(
  range: NumberRange | undefined,
  count: number,
  argument: 'pages' | 'slides',
): [number, number] {
  if (range === undefined) return [1, count];
  const end = range.end ?? count;
  if (count === 0 || range.start > count || end > count)
    throw new DocumentError(
      'invalid_argument',
      count === 0
        ? `the document has no ${argument}`
        : `${argument}=${range.start}${range.end === undefined ? '-' : range.end === range.start ? '' : `-${range.end}`} is out of range: the document has ${argument} 1-${count}`,
      { argument, valid: count === 0 ? '' : `1-${count}`, count },
    );
  return [range.start, end];
}
