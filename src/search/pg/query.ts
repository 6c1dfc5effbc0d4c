/**
 * Searches of a PostgreSQL index: one ranked stream of documents, best first, read page by page
 * (each page resumes after the last row: score, text, document). A document whose name or path
 * matches ranks above any whose text alone does; names and paths by `ts_rank`, texts by their
 * size, the shorter first — as the SQLite index ranks for a restricted caller (visible.ts). Each
 * score comes from the document alone (no statistic of the whole index), so one ranking serves
 * every caller: a restricted caller's scope (scope.ts, the URI ranges its rules allow) is one more
 * condition of the same query, and documents denied to it change neither its order nor its pages.
 *
 * Every page runs within what is left of the search's budget (`statement_timeout`); a page that
 * outruns it is stopped by PostgreSQL and the search refused as too broad.
 */
import type PgNs from 'pg';
import { QueryTooBroad, type Run } from '../backend.js';
import type { Position, Row } from '../rows.js';
import { tsqueryOf } from './lexemes.js';
import type { Tables } from './schema.js';

/** SQLSTATE of a statement stopped by `statement_timeout` (or cancelled). */
const QUERY_CANCELED = '57014';
const COLUMNS = 'd.id, d.uri, d.name, d.title, d.mime, d.modified';
/**
 * The text length (bytes) at which a text match's score halves (visible.ts's). A text's score
 * needs no read of its vector: only its row's size, so ranking many matches stays cheap.
 */
const HALF_SCORE_BYTES = 8192;

/** Numbers the `?` placeholders of `sql` (outside quoted literals) from `$first` on. */
export function numbered(sql: string, first: number): string {
  let n = first - 1;
  return sql.replace(/'(?:[^']|'')*'|\?/g, (token) => (token === '?' ? `$${(n += 1)}` : token));
}

/** The SQL of one page of matches and its parameters. */
export function pageSql(
  t: Tables,
  run: Run,
  bounds: { sql: string; params: readonly unknown[] },
  after: Position | undefined,
  page: number,
): { text: string; values: unknown[] } {
  const values: unknown[] = [tsqueryOf(run.tree)];
  const filters = `${run.where.sql} ${bounds.sql}`;
  const filterParams = [...run.where.params, ...bounds.params];
  // Each branch numbers its own copy of the filters' placeholders.
  const names = numbered(filters, values.length + 1);
  values.push(...filterParams);
  const texts = numbered(filters, values.length + 1);
  values.push(...filterParams);
  let keyset = '';
  if (after !== undefined) {
    const at = values.length;
    keyset = `WHERE (r.score, r.blob, r.id) > ($${at + 1}::float8, $${at + 2}::bigint, $${at + 3}::bigint)`;
    values.push(...after);
  }
  values.push(page);
  // The tsquery is a parameter of each condition (not a CTE): the planner then sees it, and
  // matches through the GIN indexes.
  const text =
    'SELECT r.* FROM (' +
    `SELECT ${COLUMNS}, 0::bigint AS blob, (-(2 + ts_rank(d.names, $1::tsquery, 32)))::float8 AS score ` +
    `FROM ${t.docs} d WHERE d.names @@ $1::tsquery ${names} ` +
    'UNION ALL ' +
    `SELECT ${COLUMNS}, b.id AS blob, (-1 / (1 + b.bytes / ${HALF_SCORE_BYTES}.0))::float8 AS score ` +
    `FROM ${t.blobs} b JOIN ${t.docs} d ON d.blob = b.id WHERE b.body @@ $1::tsquery AND NOT d.names @@ $1::tsquery ${texts}` +
    `) r ${keyset} ORDER BY r.score, r.blob, r.id LIMIT $${values.length}`;
  return { text, values };
}

/** Runs one statement within the search's budget; a statement that outruns it throws `QueryTooBroad`. */
export async function withinBudget<T extends PgNs.QueryResultRow>(
  pool: PgNs.Pool,
  run: Run,
  query: { text: string; values: unknown[] },
): Promise<T[]> {
  const budget = Math.floor(run.deadline - Date.now());
  if (budget <= 0) throw new QueryTooBroad();
  run.signal.throwIfAborted();
  const client = await pool.connect();
  try {
    await client.query(`BEGIN READ ONLY; SET LOCAL statement_timeout = ${budget}`);
    const { rows } = await client.query<T>(query);
    await client.query('COMMIT');
    return rows;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    if ((error as { code?: unknown }).code === QUERY_CANCELED) throw new QueryTooBroad();
    throw error;
  } finally {
    client.release();
  }
}

/** The next page's size: doubling (up to a bound), as a page is asked for only when access took rows out of the one before. */
function nextPage(page: number): number {
  return Math.min(Math.max(page * 2, 64), 65_536);
}

/** The matches of a search within `bounds`, best first, after `after`. */
export async function* matchingRows(
  pool: PgNs.Pool,
  t: Tables,
  run: Run,
  bounds: { sql: string; params: readonly unknown[] },
  after: Position | undefined,
  want: number,
): AsyncGenerator<Row> {
  let position = after;
  let page = want;
  for (;;) {
    const rows = await withinBudget<Row>(pool, run, pageSql(t, run, bounds, position, page));
    for (const row of rows) yield row;
    const last = rows[rows.length - 1];
    if (rows.length < page || last === undefined) return;
    position = [last.score, last.blob, last.id];
    page = nextPage(page);
  }
}
