/**
 * The candidate rows of a search no access rule restricts, best first: two ranked streams over the
 * whole index (ranked.ts), merged, each read page by page as it is used up. The service judges each
 * row's access and stops when its page is full.
 */
import type { Run } from './backend.js';
import type { Statement } from './reader.js';
import { namedIds, namePage, sortedIds, textPage } from './ranked.js';
import { compare, type Position, type Row } from './rows.js';

export type { Run } from './backend.js';

/** Runs statements in a reader within the search's budget, one result per statement. */
export type RunQuery = (statements: readonly Statement[]) => Promise<unknown[][]>;

/** A row of a text page: without filters, a text none holds any more comes back without a document. */
type TextRow = Omit<Row, 'id'> & { id: number | null };

/**
 * The size of the next page of candidate rows: doubling (up to a bound), since a page is asked for
 * only when the one before was used up by rows that access or the name stream took out — each page
 * re-ranks every match, so fixed small pages would rank them once per page.
 */
function nextPage(page: number): number {
  return Math.min(Math.max(page * 2, 64), 65_536);
}

/**
 * Candidate rows, best first, resuming after `after`. Two ranked streams, merged: documents whose
 * name or path matches (`names`), and documents whose text matches (`texts`, one row per stored
 * text, fanned out to every document holding it) unless their name or path matched too — so each
 * document comes from exactly one stream, and a page boundary (score, text, document) is a total
 * order across both. The first page of each stream and the ids of the documents whose names match
 * are read in one round trip to a reader.
 */
export async function* candidateRows(
  query: RunQuery,
  run: Run,
  after: Position | undefined,
  want: number,
): AsyncGenerator<Row> {
  const [names, texts, named] = (await query([
    namePage(run, after, want),
    textPage(run, after, want),
    namedIds(run),
  ])) as [Row[], TextRow[], number[]];
  const nameStream = nameRows(query, run, want, names);
  const textStream = textRows(query, run, after, want, texts, sortedIds(named));
  let a = await nameStream.next();
  let b = await textStream.next();
  while (!a.done || !b.done) {
    if (b.done || (!a.done && compare(a.value, b.value) < 0)) {
      yield a.value as Row;
      a = await nameStream.next();
    } else {
      yield b.value;
      b = await textStream.next();
    }
  }
}

/** Documents whose name or path matches, best first (their `blob` is 0: they sort before text rows of equal score). */
async function* nameRows(
  query: RunQuery,
  run: Run,
  want: number,
  first: Row[],
): AsyncGenerator<Row> {
  let rows = first;
  let page = want;
  for (;;) {
    // A row without a document is a name whose document went between the ranking and the join.
    for (const row of rows) if (row.uri !== null) yield row;
    const last = rows[rows.length - 1];
    if (rows.length < page || last === undefined) return;
    page = nextPage(page);
    [rows] = (await query([namePage(run, [last.score, 0, last.id], page)])) as [Row[]];
  }
}

/** Documents whose text matches and whose name and path do not, best first, in document order within a text. */
async function* textRows(
  query: RunQuery,
  run: Run,
  after: Position | undefined,
  want: number,
  first: TextRow[],
  named: (id: number) => boolean,
): AsyncGenerator<Row> {
  let position = after;
  const past = (row: TextRow): boolean =>
    position === undefined ||
    compare(row as Row, { score: position[0], blob: position[1], id: position[2] }) > 0;
  let rows = first;
  let page = want;
  for (;;) {
    // Without filters a page holds `page` texts, and the next resumes after its last text, all of
    // whose documents this one yields; with filters it holds `page` documents.
    const byText = run.where.sql === '';
    const count = byText
      ? rows.filter((row, i) => i === 0 || row.blob !== rows[i - 1]!.blob).length
      : rows.length;
    const tail = rows[rows.length - 1];
    const last: Position | undefined =
      tail === undefined
        ? undefined
        : [tail.score, tail.blob, byText ? Number.MAX_SAFE_INTEGER : tail.id!];
    for (const row of rows) if (row.id !== null && past(row) && !named(row.id)) yield row as Row;
    if (count < page || last === undefined) return;
    page = nextPage(page);
    position = last;
    [rows] = (await query([textPage(run, position, page)])) as [TextRow[]];
  }
}
