/**
 * The statements of a search over the whole index, ranked by FTS5's BM25: pages of documents whose
 * name or path matches and of texts that match, resuming after a position, and the ids of every
 * document whose name or path matches. Used for callers no access rule restricts (see visible.ts
 * for the others).
 */
import type { Statement } from './reader.js';
import type { Position } from './rows.js';

/** BM25 over names and paths, a name match weighing twice a path match (a text match weighs 1). */
const NAME_RANKING = 'bm25(4.0, 2.0)';

/** What a search matches and the filters it applies (SQL over `docs d`). */
export interface Query {
  match: string;
  where: { sql: string; params: unknown[] };
}

/**
 * A page of documents whose name or path matches, best first, after `position`. FTS5 ranks the
 * matches alone (no join before the sort) and the page's documents are joined after; with
 * filters, the join applies them in SQL.
 */
export function namePage(run: Query, position: Position | undefined, page: number): Statement {
  const { match, where } = run;
  // After (s, b, d): a greater score, or the same score with b = 0 and a greater document.
  const keyset =
    position === undefined ? '' : 'AND (n.rank > ? OR (n.rank = ? AND ? = 0 AND n.rowid > ?))';
  const params = [
    match,
    ...where.params,
    ...(position === undefined ? [] : [position[0], position[0], position[1], position[2]]),
    page,
  ];
  const ranked = `SELECT n.rowid AS id, n.rank AS score FROM names n WHERE names MATCH ? AND n.rank MATCH '${NAME_RANKING}' ${keyset} ORDER BY n.rank, n.rowid LIMIT ?`;
  if (where.sql === '') {
    return {
      sql: `SELECT r.id, r.score, 0 AS blob, d.uri, d.name, d.title, d.mime, d.modified FROM (${ranked}) r LEFT JOIN docs d ON d.id = r.id ORDER BY r.score, r.id`,
      params,
    };
  }
  return {
    sql:
      'SELECT n.rowid AS id, n.rank AS score, 0 AS blob, d.uri, d.name, d.title, d.mime, d.modified FROM names n JOIN docs d ON d.id = n.rowid ' +
      `WHERE names MATCH ? AND n.rank MATCH '${NAME_RANKING}' ${where.sql} ${keyset} ORDER BY n.rank, n.rowid LIMIT ?`,
    params,
  };
}

/**
 * A page of documents whose text matches, best first, after `position`. Without filters, FTS5
 * ranks the texts alone (the fast path: no join before the sort), a page holds `page` texts, and
 * each is joined to the documents holding it (a text none holds any more comes back once, without
 * a document); with filters, the join applies them in SQL and a page holds `page` documents.
 */
export function textPage(run: Query, position: Position | undefined, page: number): Statement {
  const { match, where } = run;
  if (where.sql === '') {
    const keyset =
      position === undefined ? '' : 'AND (t.rank > ? OR (t.rank = ? AND t.rowid >= ?))';
    const ranked = `SELECT t.rowid AS blob, t.rank AS score FROM texts t WHERE texts MATCH ? AND t.rank MATCH 'bm25()' ${keyset} ORDER BY t.rank, t.rowid LIMIT ?`;
    return {
      sql: `SELECT r.blob, r.score, d.id, d.uri, d.name, d.title, d.mime, d.modified FROM (${ranked}) r LEFT JOIN docs d ON d.blob = r.blob ORDER BY r.score, r.blob, d.id`,
      params: [
        match,
        ...(position === undefined ? [] : [position[0], position[0], position[1]]),
        page,
      ],
    };
  }
  const keyset =
    position === undefined
      ? ''
      : 'AND (t.rank > ? OR (t.rank = ? AND (t.rowid > ? OR (t.rowid = ? AND d.id > ?))))';
  return {
    sql:
      'SELECT t.rowid AS blob, t.rank AS score, d.id, d.uri, d.name, d.title, d.mime, d.modified FROM texts t JOIN docs d ON d.blob = t.rowid ' +
      `WHERE texts MATCH ? AND t.rank MATCH 'bm25()' ${where.sql} ${keyset} ORDER BY t.rank, t.rowid, d.id LIMIT ?`,
    params: [
      match,
      ...where.params,
      ...(position === undefined
        ? []
        : [position[0], position[0], position[1], position[1], position[2]]),
      page,
    ],
  };
}

/** The ids of every document whose name or path matches, read in one pass (asking per row would be quadratic). */
export function namedIds(run: Query): Statement {
  return { sql: 'SELECT rowid FROM names WHERE names MATCH ?', params: [run.match], pluck: true };
}

/** Membership in a list of ids, by binary search (the list sorted first if it is not). */
export function sortedIds(ids: number[]): (id: number) => boolean {
  for (let i = 1; i < ids.length; i += 1) {
    if (ids[i]! < ids[i - 1]!) {
      ids.sort((a, b) => a - b);
      break;
    }
  }
  return (id) => {
    let low = 0;
    let high = ids.length - 1;
    while (low <= high) {
      const mid = (low + high) >>> 1;
      const at = ids[mid]!;
      if (at === id) return true;
      if (at < id) low = mid + 1;
      else high = mid - 1;
    }
    return false;
  };
}
