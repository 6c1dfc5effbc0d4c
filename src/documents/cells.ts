/** A1-style cell ranges (`A1:D20`, or one cell `B3`) for `?range=`. */
import { DocumentError } from './types.js';

export interface CellRange {
  top: number;
  left: number;
  bottom: number;
  right: number;
}

/** Column letters → 1-based number (`A` → 1, `AA` → 27). */
function column(letters: string): number {
  let n = 0;
  for (const c of letters.toUpperCase()) n = n * 26 + (c.charCodeAt(0) - 64);
  return n;
}

export function parseCellRange(value: string): CellRange {
  const found = /^([A-Za-z]{1,3})([1-9]\d{0,6})(?::([A-Za-z]{1,3})([1-9]\d{0,6}))?$/.exec(value);
  if (found === null)
    throw new DocumentError(
      'invalid_argument',
      `range=${value.slice(0, 40)} is not a cell range like A1:D20`,
      {
        argument: 'range',
      },
    );
  const left = column(found[1]!);
  const top = Number(found[2]);
  const right = found[3] === undefined ? left : column(found[3]);
  const bottom = found[4] === undefined ? top : Number(found[4]);
  if (right < left || bottom < top)
    throw new DocumentError(
      'invalid_argument',
      `range=${value}: the second corner comes before the first`,
      {
        argument: 'range',
      },
    );
  return { top, left, bottom, right };
}

export function columnName(n: number): string {
  let name = '';
  for (let v = n; v > 0; v = Math.floor((v - 1) / 26))
    name = String.fromCharCode(65 + ((v - 1) % 26)) + name;
  return name;
}
