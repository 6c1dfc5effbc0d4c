/**
 * One page of text matches, found the cheaper of two ways, with the same rows either way.
 *
 * - **The ordered probe**: the texts are walked in rank order through the rank index (schema.ts),
 *   from the page's position on, at most `walk` of them, and each is tested against the query
 *   there. When that fills the page, the page is exact: the walk saw every text before the last
 *   row it returns, in order. A common word fills a page within a few hundred texts.
 * - **The GIN path** (query.ts `textsPageSql`): every matching text after the position is found
 *   through the GIN index and sorted by rank. Its cost grows with the number of matches (each
 *   one's row is read for its size): cheap for a rare word, hundreds of ms for a word in 9% of a
 *   million texts.
 *
 * A page first walks PROBE_FIRST texts — the first page from the shortest text that can hold all
 * of the query's words (sizes.ts `lowestSizeSql`), since no text before it matches. When they do
 * not fill it, the rows they gave measure how dense the matches are where the walk began: a walk long enough to fill the page is
 * compared with the matches the GIN path would read (that density times the texts in the index),
 * and the cheaper runs — the walk capped at MAX_WALK, and the GIN path whenever a walk comes back
 * short. A word in between (say 0.3% of a million texts) costs a few thousand rows either way.
 */
import type PgNs from 'pg';
import type { Run } from '../backend.js';
import type { QueryNode } from '../query.js';
import type { Position, Row } from '../rows.js';
import { tsqueryOf } from './lexemes.js';
import {
  type BudgetedStatement,
  COLUMNS,
  inBudget,
  inNames,
  TEXT_SCORE,
  textsPageParts,
  textsPageSql,
  withinBudget,
} from './query.js';
import type { Tables } from './schema.js';
import { lowestSizeSql, NO_TEXT, sizeQuery, smallestSizeSql } from './sizes.js';

/** The texts the first walk of a page visits. */
export const PROBE_FIRST = 256;
/** The most texts a second walk visits (~tens of ms where every row is a read). */
const MAX_WALK = 32_768;
/**
 * The estimated matches from which the size search runs: each of its tests reads the query's
 * posting lists (tens of ms for a word in 9% of a million texts on a loaded machine), while the
 * GIN path reads a row per match — cheaper below some tens of thousands of matches.
 */
const SIZE_SEARCH_MATCHES = 32_768;
/**
 * The walk (texts) past which the matches of the smallest matching size are read through GIN
 * first: a walk that long reads more rows than a sparse word has texts of one size.
 */
const EXACT_SIZE_WALK = 1024;
/** How much longer than the estimate a second walk goes, so a page is rarely left short. */
const WALK_MARGIN = 1.5;
/** How long a count of the index's texts is trusted, ms. */
const COUNT_TTL_MS = 30_000;

/**
 * The SQL of one page of text matches among the first `walk` texts in rank order after `after`,
 * best first, and its parameters: the rows `textsPageSql` would give when there are `page` of
 * them; fewer when the walk ended first.
 */
export function probePageSql(
  t: Tables,
  run: Run,
  bounds: { sql: string; params: readonly unknown[] },
  after: Position | undefined,
  page: number,
  walk: number,
  start?: number,
): { text: string; values: unknown[] } {
  const { values, filters, resume, keyset } = textsPageParts(run, bounds, after, start);
  const from = resume === '' ? '' : `WHERE ${resume}`;
  values.push(walk, page);
  // The walk is a subquery with its own LIMIT: the query is tested on the walked texts alone,
  // never pushed into the walk (it would then run to the end of the index looking for matches).
  const text =
    `SELECT ${COLUMNS}, b.id AS blob, b.score FROM (` +
    `SELECT b.id, ${TEXT_SCORE} AS score, b.body FROM ${t.blobs} b ${from} ORDER BY ${TEXT_SCORE}, b.id LIMIT $${values.length - 1}` +
    `) b CROSS JOIN LATERAL (SELECT ${COLUMNS} FROM ${t.docs} d WHERE d.blob = b.id AND NOT d.names @@ $1::tsquery ${filters}) d ` +
    `WHERE b.body @@ $1::tsquery ${keyset} ORDER BY b.score, b.id, d.id LIMIT $${values.length}`;
  return { text, values };
}

const counts = new Map<string, { texts: number; at: number }>();

/** About how many texts the index holds (PostgreSQL's own counts; kept COUNT_TTL_MS). */
async function textsIn(pool: PgNs.Pool, t: Tables, run: Run): Promise<number> {
  const known = counts.get(t.blobs);
  if (known !== undefined && Date.now() - known.at < COUNT_TTL_MS) return known.texts;
  const [row] = await withinBudget<{ texts: number }>(pool, run, {
    text: `SELECT greatest(c.reltuples, pg_stat_get_live_tuples(c.oid), 0)::bigint AS texts FROM pg_class c WHERE c.oid = $1::regclass`,
    values: [t.blobs],
  });
  const texts = row?.texts ?? 0;
  counts.set(t.blobs, { texts, at: Date.now() });
  return texts;
}

/** One page of text matches after `after`, best first: `page` rows, or fewer when no more match. */
export async function textsPage(
  pool: PgNs.Pool,
  t: Tables,
  run: Run,
  bounds: { sql: string; params: readonly unknown[] },
  after: Position | undefined,
  page: number,
  /** The estimated matches from which the size search runs (tests set 0 to run it on a few texts). */
  sizeSearchFrom = SIZE_SEARCH_MATCHES,
): Promise<Row[]> {
  const first = Math.max(PROBE_FIRST, page * 4);
  // The texts' count is read first, outside the page's transaction (it is kept a while).
  const texts = await textsIn(pool, t, run);
  return inBudget(pool, run, async (statement) => {
    // The first page starts where the query's words do: no text before holds them all (sizes.ts).
    let start = inNames(after) ? await lowestSize(statement, t, run) : undefined;
    if (start !== undefined && start >= NO_TEXT) return [];
    let sample = await statement<Row>(probePageSql(t, run, bounds, after, page, first, start));
    if (sample.length >= page) return sample;
    if (
      sample.length === 0 &&
      inNames(after) &&
      !hasPrefix(run.tree) &&
      (await estimatedMatches(statement, t, run)) >= sizeSearchFrom
    ) {
      // No match among the first texts walked: the walk starts where the matches do (sizes.ts).
      start = await smallestSize(statement, t, run, first, start ?? 0);
      if (start === undefined) return [];
      sample = await statement<Row>(probePageSql(t, run, bounds, after, page, first, start));
      if (sample.length >= page) return sample;
      // Sparse there too: the matches of that one size, through GIN (each read is a match), are
      // the page when there are enough of them (every other match is longer).
      if (sample.length === 0 || (page * first) / sample.length > EXACT_SIZE_WALK) {
        const rows = await statement<Row>(
          textsPageSql(t, run, bounds, after, page, sizeQuery(start)),
        );
        if (rows.length >= page) return rows;
      }
    }
    if (sample.length > 0 && first < MAX_WALK) {
      const walk = Math.ceil(((page * first) / sample.length) * WALK_MARGIN);
      const gin = (sample.length / first) * texts;
      if (walk <= MAX_WALK && walk < gin) {
        const rows = await statement<Row>(probePageSql(t, run, bounds, after, page, walk, start));
        if (rows.length >= page) return rows;
      }
    }
    return statement<Row>(textsPageSql(t, run, bounds, after, page));
  });
}

/**
 * PostgreSQL's estimate of the texts matching the search's query (from the statistics of the
 * texts' lexemes ANALYZE keeps; without them, a fixed share of the texts).
 */
async function estimatedMatches(
  statement: BudgetedStatement,
  t: Tables,
  run: Run,
): Promise<number> {
  const [row] = await statement<{ 'QUERY PLAN': { Plan: { 'Plan Rows': number } }[] }>({
    text: `EXPLAIN (FORMAT JSON) SELECT 1 FROM ${t.blobs} b WHERE b.body @@ $1::tsquery`,
    values: [tsqueryOf(run.tree)],
  });
  return row?.['QUERY PLAN'][0]?.Plan['Plan Rows'] ?? 0;
}

/**
 * Whether `node` holds a prefix: each test of the size search then reads the posting lists of
 * every word the prefix begins (GIN's partial match), tens of ms a test at a million texts, so such
 * a query keeps to the walk and GIN.
 */
function hasPrefix(node: QueryNode): boolean {
  switch (node.kind) {
    case 'term':
      return node.prefix;
    case 'or':
      return node.nodes.some(hasPrefix);
    case 'and':
      return [...node.include, ...node.exclude].some(hasPrefix);
  }
}

/** A size no text matching the search's query is below (sizes.ts); NO_TEXT when none can match. */
async function lowestSize(statement: BudgetedStatement, t: Tables, run: Run): Promise<number> {
  const values: unknown[] = [];
  const [row] = await statement<{ bytes: number }>({
    text: lowestSizeSql(t, run.tree, values),
    values,
  });
  return row?.bytes ?? 0;
}

/**
 * The smallest size of a text matching the search's query (sizes.ts), among the texts from `from`
 * bytes on after the first `walked` of them, or undefined when none does.
 */
async function smallestSize(
  statement: BudgetedStatement,
  t: Tables,
  run: Run,
  walked: number,
  from: number,
): Promise<number | undefined> {
  await statement({ text: 'SET LOCAL enable_seqscan = off', values: [] });
  const [row] = await statement<{ bytes: number }>({
    text: smallestSizeSql(t, TEXT_SCORE),
    values: [tsqueryOf(run.tree), walked, from],
  });
  await statement({ text: 'RESET enable_seqscan', values: [] });
  return row?.bytes;
}
