/**
 * Matching and ranking over what a restricted caller may see (its scope, see scope.ts), so that
 * denied documents never enter the match, the ranking, the counts or the time a search takes.
 *
 * Matching is driven by the visible set, never by the match's global hit list: the visible
 * documents (and the texts they hold) are read from the `docs` table by URI range, grouped into
 * runs of consecutive ids holding no other document (or text) in between (kept by the reader until
 * the index changes), and FTS5 is asked for matches only inside those rowid ranges. A word that only denied documents hold is then looked up
 * the way an unknown word is: FTS5 seeks into each run and finds nothing there. Documents fed
 * together (a directory walked in one go) have consecutive ids, so a visible subtree is a few
 * runs; a visible set scattered one by one among denied documents costs one seek per document
 * (still bounded by what the caller may see).
 *
 * Ranking uses no statistic of the whole index (BM25's document count, average length and how
 * many documents hold a word would all move with denied documents): a name or path match ranks
 * above a text match, and among text matches a shorter text ranks higher — a score from the
 * document alone.
 */
import type { Statement } from './reader.js';
import { compare, isAfter, type Position, type Row } from './rows.js';

/**
 * The most matches of each kind (names, texts) one search of a restricted caller ranks: every match it
 * may see is ranked at once, so a query matching more of what it may see is refused as too broad
 * (decided on what it may see alone). Statements ask for one more, to tell.
 */
export const MAX_VISIBLE_MATCHES = 10_000;

/** A name or path match outranks any text match: its score starts here. */
const NAME_SCORE = 2;
/** The text length (bytes) at which a text match's score halves. */
const HALF_SCORE_BYTES = 8192;

interface Clause {
  sql: string;
  params: readonly unknown[];
}

/** A matched row as the visible statements return it; `bytes` is the text's size (0 for a name match). */
export type VisibleRow = Row & { bytes: number };

/** Rowid ranges `[lo, hi]` (inclusive) holding visible rows and no other. */
export type Runs = [number, number][];

/**
 * The runs of consecutive rows of `table` (docs or blobs) picked by `picked` (a SELECT of ids) with
 * no other row of that table in between, as `[lo, hi]` pairs.
 */
function runs(picked: string, table: 'docs' | 'blobs', params: readonly unknown[]): Statement {
  return {
    sql:
      `WITH v(id) AS (${picked}), ` +
      `n(id, nxt) AS (SELECT id, (SELECT min(x.id) FROM ${table} x WHERE x.id > v.id) FROM v), ` +
      's(id, start) AS (SELECT id, CASE WHEN lag(nxt) OVER (ORDER BY id) = id THEN 0 ELSE 1 END FROM n), ' +
      'g(id, run) AS (SELECT id, sum(start) OVER (ORDER BY id) FROM s) ' +
      'SELECT json_array(min(id), max(id)) FROM g GROUP BY run ORDER BY 1',
    params,
    pluck: true,
    // The runs depend on the scope and the index, not on the words: a reader keeps them until the index changes.
    cache: true,
  };
}

/**
 * Two statements for one reader round trip: the runs of visible documents (for their names) and
 * of the texts they hold, within `scope` and `where` (SQL over `docs d`). Their rows are JSON pairs.
 */
export function runStatements(scope: Clause, where: Clause): [Statement, Statement] {
  const filter = `${scope.sql} ${where.sql}`;
  const params = [...scope.params, ...where.params];
  return [
    runs(`SELECT d.id FROM docs d WHERE 1 ${filter}`, 'docs', params),
    runs(`SELECT DISTINCT d.blob FROM docs d WHERE d.blob IS NOT NULL ${filter}`, 'blobs', params),
  ];
}

/** The pairs the run statements return. */
export function parseRuns(rows: readonly string[]): Runs {
  return rows.map((row) => JSON.parse(row) as [number, number]);
}

/**
 * Two statements for one reader round trip: the visible documents whose name or path matches
 * `match` (inside `docRuns`), and those whose text does (inside `blobRuns`, one row per document
 * holding the text), within `scope` and `where`; each returns at most MAX_VISIBLE_MATCHES + 1 rows.
 */
export function visibleStatements(
  match: string,
  scope: Clause,
  where: Clause,
  docRuns: Runs,
  blobRuns: Runs,
): [Statement, Statement] {
  const filter = `${scope.sql} ${where.sql}`;
  const filterParams = [...scope.params, ...where.params];
  const columns = 'd.id, d.uri, d.name, d.title, d.mime, d.modified';
  const ranges = 'WITH r(lo, hi) AS (SELECT value ->> 0, value ->> 1 FROM json_each(?)) ';
  const names: Statement = {
    sql:
      `${ranges}SELECT ${columns}, 0 AS blob, 0 AS bytes FROM r CROSS JOIN names m CROSS JOIN docs d ON d.id = m.rowid ` +
      `WHERE names MATCH ? AND m.rowid >= r.lo AND m.rowid <= r.hi ${filter} LIMIT ?`,
    params: [JSON.stringify(docRuns), match, ...filterParams, MAX_VISIBLE_MATCHES + 1],
  };
  const texts: Statement = {
    sql:
      `${ranges}SELECT ${columns}, t.rowid AS blob, b.bytes FROM r CROSS JOIN texts t CROSS JOIN docs d ON d.blob = t.rowid CROSS JOIN blobs b ON b.id = t.rowid ` +
      `WHERE texts MATCH ? AND t.rowid >= r.lo AND t.rowid <= r.hi ${filter} LIMIT ?`,
    params: [JSON.stringify(blobRuns), match, ...filterParams, MAX_VISIBLE_MATCHES + 1],
  };
  return [names, texts];
}

/** A text match's score: from 1 (an empty text) down towards 0 as the text grows. */
function textScore(bytes: number): number {
  return 1 / (1 + bytes / HALF_SCORE_BYTES);
}

/**
 * The matches ranked best first, resuming after `after`: one row per document — a name match
 * (`blob` 0) when its name or path matches (its text, if that matches too, adding to its score),
 * else its text match. Scores are stored negated, as FTS5's rank is.
 */
export function rankVisible(
  names: readonly VisibleRow[],
  texts: readonly VisibleRow[],
  after: Position | undefined,
): Row[] {
  const textOf = new Map<number, number>();
  for (const row of texts) textOf.set(row.id, textScore(row.bytes));
  const rows: Row[] = [];
  const named = new Set<number>();
  for (const row of names) {
    named.add(row.id);
    rows.push(strip(row, 0, -(NAME_SCORE + (textOf.get(row.id) ?? 0))));
  }
  for (const row of texts)
    if (!named.has(row.id)) rows.push(strip(row, row.blob, -textScore(row.bytes)));
  rows.sort(compare);
  return after === undefined ? rows : rows.filter((row) => isAfter(row, after));
}

function strip(row: VisibleRow, blob: number, score: number): Row {
  return {
    id: row.id,
    blob,
    uri: row.uri,
    name: row.name,
    title: row.title,
    mime: row.mime,
    modified: row.modified,
    score,
  };
}
