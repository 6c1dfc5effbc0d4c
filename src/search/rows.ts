/**
 * The rows a search ranks and pages through, and their order — shared by the ranking over the whole
 * index (BM25) and the ranking over what a restricted caller may see (see visible.ts).
 */
import { InvalidCursorError } from '../core/errors.js';

/** Where a page ends: the last row's score, stored text (0 for a name match) and document. */
export type Position = [number, number, number];

export interface Row {
  id: number;
  /** The stored text the match came from; 0 for a name or path match. */
  blob: number;
  uri: string;
  name: string;
  title: string | null;
  mime: string | null;
  modified: string | null;
  /** Lower is better (FTS5's rank: the negated relevance). */
  score: number;
}

/** The order of rows: score, then text (name matches first), then document. */
export function compare(
  a: { score: number; blob: number; id: number },
  b: { score: number; blob: number; id: number },
): number {
  return a.score - b.score || a.blob - b.blob || a.id - b.id;
}

/** Whether `row` comes after `position` in that order. */
export function isAfter(
  row: { score: number; blob: number; id: number },
  position: Position,
): boolean {
  return compare(row, { score: position[0], blob: position[1], id: position[2] }) > 0;
}

/** A cursor's position, as sealed by `positionOf`. */
export function parseAfter(after: string): Position {
  try {
    const value = JSON.parse(after) as unknown;
    if (
      Array.isArray(value) &&
      value.length === 3 &&
      typeof value[0] === 'number' &&
      Number.isFinite(value[0]) &&
      Number.isSafeInteger(value[1]) &&
      Number.isSafeInteger(value[2])
    ) {
      return [value[0], value[1] as number, value[2] as number];
    }
  } catch {
    // fall through
  }
  throw new InvalidCursorError('unreadable cursor');
}

/** The position after `row`, for a cursor. */
export function positionOf(row: Row): string {
  return JSON.stringify([row.score, row.blob, row.id]);
}
