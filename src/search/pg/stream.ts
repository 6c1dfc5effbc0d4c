/**
 * The ranked stream of a search's matches in a PostgreSQL index, page after page: the name and
 * path matches (query.ts), then the text matches (probe.ts), each page resuming after the last
 * row of the one before.
 */
import type PgNs from 'pg';
import type { Run } from '../backend.js';
import type { Position, Row } from '../rows.js';
import { textsPage } from './probe.js';
import { inNames, namesPageSql, withinBudget } from './query.js';
import type { Tables } from './schema.js';

/** The next page's size: doubling (up to a bound), as a page is asked for only when access took rows out of the one before. */
function nextPage(page: number): number {
  return Math.min(Math.max(page * 2, 64), 65_536);
}

/** The matches of a search within `bounds`, best first, after `after`: the name and path matches, then the text matches. */
export async function* matchingRows(
  pool: PgNs.Pool,
  t: Tables,
  run: Run,
  bounds: { sql: string; params: readonly unknown[] },
  after: Position | undefined,
  want: number,
): AsyncGenerator<Row> {
  let page = want;
  let position = after;
  const names = (at: Position | undefined, size: number): Promise<Row[]> =>
    withinBudget<Row>(pool, run, namesPageSql(t, run, bounds, at, size));
  const texts = (at: Position | undefined, size: number): Promise<Row[]> =>
    textsPage(pool, t, run, bounds, at, size);
  for (const pageOf of inNames(after) ? [names, texts] : [texts]) {
    for (;;) {
      const rows = await pageOf(position, page);
      for (const row of rows) yield row;
      const last = rows[rows.length - 1];
      if (rows.length < page || last === undefined) break;
      position = [last.score, last.blob, last.id];
      page = nextPage(page);
    }
    position = undefined;
  }
}
