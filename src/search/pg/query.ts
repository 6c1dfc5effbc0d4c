/**
 * Searches of a PostgreSQL index: one ranked stream of documents, best first, read page by page
 * (each page resumes after the last row: score, text, document). A document whose name or path
 * matches ranks above any whose text alone does; names and paths by `ts_rank`, texts by their
 * size, the shorter first — as the SQLite index ranks for a restricted caller (visible.ts). Each
 * score comes from the document alone (no statistic of the whole index), so one ranking serves
 * every caller: a restricted caller's scope (scope.ts, the URI ranges its rules allow) is one more
 * condition of the same query, and documents denied to it change neither its order nor its pages.
 *
 * The two kinds are two statements, names first: every name score is below every text score, so
 * the stream is the name matches, then the text matches. Each finds its matches through a GIN
 * index; `ts_rank` runs on the name matches alone (few), a text's score is read from its row
 * (never its vector), and documents are looked up only for the texts a page reaches. What a
 * page still costs grows with the number of texts that match (each one's row is read for its
 * size): the bench's search-engines section measures it.
 *
 * Every page runs within what is left of the search's budget (`statement_timeout`); a page that
 * outruns it is stopped by PostgreSQL and the search refused as too broad.
 */
import type PgNs from 'pg';
import { QueryTooBroad, type Run } from '../backend.js';
import type { Position } from '../rows.js';
import { tsqueryOf } from './lexemes.js';
import { textScore, type Tables } from './schema.js';

/** SQLSTATE of a statement stopped by `statement_timeout` (or cancelled). */
const QUERY_CANCELED = '57014';
export const COLUMNS = 'd.id, d.uri, d.name, d.title, d.mime, d.modified';

/** Numbers the `?` placeholders of `sql` (outside quoted literals) from `$first` on. */
export function numbered(sql: string, first: number): string {
  let n = first - 1;
  return sql.replace(/'(?:[^']|'')*'|\?/g, (token) => (token === '?' ? `$${(n += 1)}` : token));
}

/** A text match's score: from its size alone (no read of its vector), the rank index's expression. */
export const TEXT_SCORE = textScore('b.bytes');
/** A name or path match's score: below -2, so every one ranks above every text match (scores -1 to 0). */
const NAME_SCORE = '(-(2 + ts_rank(d.names, $1::tsquery, 32)))::float8';

/** Whether `after` ends in the names' part of the ranking (every name match ranks above every text match). */
export function inNames(after: Position | undefined): boolean {
  return after === undefined || after[1] === 0;
}

/**
 * The SQL of one page of name and path matches, best first, after `after` (one of them), and its
 * parameters. Only documents whose name or path matches are ranked (through the GIN index of
 * `names`): few, even for a common word.
 */
export function namesPageSql(
  t: Tables,
  run: Run,
  bounds: { sql: string; params: readonly unknown[] },
  after: Position | undefined,
  page: number,
): { text: string; values: unknown[] } {
  const values: unknown[] = [tsqueryOf(run.tree), ...run.where.params, ...bounds.params];
  const filters = numbered(`${run.where.sql} ${bounds.sql}`, 2);
  let keyset = '';
  if (after !== undefined) {
    keyset = `AND (${NAME_SCORE}, d.id) > ($${values.length + 1}::float8, $${values.length + 2}::bigint)`;
    values.push(after[0], after[2]);
  }
  values.push(page);
  const text =
    `SELECT ${COLUMNS}, 0::bigint AS blob, ${NAME_SCORE} AS score FROM ${t.docs} d ` +
    `WHERE d.names @@ $1::tsquery ${filters} ${keyset} ORDER BY score, d.id LIMIT $${values.length}`;
  return { text, values };
}

/** What a page of text matches is built from, shared by the sorted GIN page and the rank walk. */
export interface TextsPageParts {
  /** $1 the tsquery, then the access filters' and bounds' parameters, then the resume position's. */
  values: unknown[];
  /** The access filters and bounds on the documents `d`, numbered from $2. */
  filters: string;
  /** Texts from the resume position on (`(score, id) >= …`), or '' from the start. */
  resume: string;
  /** Rows after the resume position (`AND (score, text, document) > …`), or ''. */
  keyset: string;
}

/**
 * What a page of text matches after `after` is built from; `from`, when given (and the page starts
 * at the first text match), is a size no matching text is below (sizes.ts): the texts start there.
 */
export function textsPageParts(
  run: Run,
  bounds: { sql: string; params: readonly unknown[] },
  after: Position | undefined,
  from?: number,
): TextsPageParts {
  const values: unknown[] = [tsqueryOf(run.tree), ...run.where.params, ...bounds.params];
  const filters = numbered(`${run.where.sql} ${bounds.sql}`, 2);
  if (after === undefined || after[1] === 0) {
    if (from === undefined) return { values, filters, resume: '', keyset: '' };
    values.push(from);
    // The same expression on the bound as on the column: the same float for the same size.
    const resume = `${TEXT_SCORE} >= ${textScore(`$${values.length}::integer`)}`;
    return { values, filters, resume, keyset: '' };
  }
  const at = values.length;
  values.push(...after);
  return {
    values,
    filters,
    resume: `(${TEXT_SCORE}, b.id) >= ($${at + 1}::float8, $${at + 2}::bigint)`,
    keyset: `AND (b.score, b.id, d.id) > ($${at + 1}::float8, $${at + 2}::bigint, $${at + 3}::bigint)`,
  };
}

/**
 * The SQL of one page of text matches (documents whose name and path do not match), best first,
 * after `after` (a text match, or undefined: from the first), and its parameters; with `also` (a
 * tsquery), of the texts that match it too. The matching
 * texts are found through the GIN index of `blobs` and sorted by their score (their size, read
 * from their row: no vector is read); documents are looked up (by `docs.blob`) only for the texts
 * the page reaches, in order, each judged by the search's filters there.
 */
export function textsPageSql(
  t: Tables,
  run: Run,
  bounds: { sql: string; params: readonly unknown[] },
  after: Position | undefined,
  page: number,
  also?: string,
): { text: string; values: unknown[] } {
  const { values, filters, resume, keyset } = textsPageParts(run, bounds, after);
  const from = resume === '' ? '' : `AND ${resume}`;
  let match = '$1::tsquery';
  if (also !== undefined) {
    values.push(also);
    match = `($1::tsquery && $${values.length}::tsquery)`;
  }
  values.push(page);
  // OFFSET 0 keeps the texts a subquery sorted on its own: the documents are then joined to the
  // first texts alone (a nested loop the LIMIT stops), never to every match.
  const text =
    `SELECT ${COLUMNS}, b.id AS blob, b.score FROM (` +
    `SELECT b.id, ${TEXT_SCORE} AS score FROM ${t.blobs} b WHERE b.body @@ ${match} ${from} ORDER BY score, b.id OFFSET 0` +
    `) b CROSS JOIN LATERAL (SELECT ${COLUMNS} FROM ${t.docs} d WHERE d.blob = b.id AND NOT d.names @@ $1::tsquery ${filters}) d ` +
    `WHERE true ${keyset} ORDER BY b.score, b.id, d.id LIMIT $${values.length}`;
  return { text, values };
}

/** Runs one statement within the search's budget; a statement that outruns it throws `QueryTooBroad`. */
export async function withinBudget<T extends PgNs.QueryResultRow>(
  pool: PgNs.Pool,
  run: Run,
  query: { text: string; values: unknown[] },
): Promise<T[]> {
  return inBudget(pool, run, (statement) => statement<T>(query));
}

/** One statement of `inBudget`'s work, run with what is left of the budget. */
export type BudgetedStatement = <T extends PgNs.QueryResultRow>(query: {
  text: string;
  values: unknown[];
}) => Promise<T[]>;

/**
 * Runs `work`'s statements on one connection, in one read-only transaction of one snapshot, each
 * within what is left of the search's budget; one that outruns it throws `QueryTooBroad`.
 */
export async function inBudget<R>(
  pool: PgNs.Pool,
  run: Run,
  work: (statement: BudgetedStatement) => Promise<R>,
): Promise<R> {
  const left = (): number => {
    const budget = Math.floor(run.deadline - Date.now());
    if (budget <= 0) throw new QueryTooBroad();
    run.signal.throwIfAborted();
    return budget;
  };
  const first = left();
  const client = await pool.connect();
  try {
    // One snapshot for every statement of a page: a text written meanwhile is seen with the bound
    // its write lowered first (sizes.ts), or not at all. No JIT (compiling costs more than a page
    // of matches takes to find) and no parallel workers (starting them costs more than a page): a
    // search is many short statements.
    await client.query(
      `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL statement_timeout = ${first}; SET LOCAL jit = off; SET LOCAL max_parallel_workers_per_gather = 0`,
    );
    let statements = 0;
    const result = await work(
      async <T extends PgNs.QueryResultRow>(query: { text: string; values: unknown[] }) => {
        statements += 1;
        if (statements > 1) await client.query(`SET LOCAL statement_timeout = ${left()}`);
        return (await client.query<T>(query)).rows;
      },
    );
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    if ((error as { code?: unknown }).code === QUERY_CANCELED) throw new QueryTooBroad();
    throw error;
  } finally {
    client.release();
  }
}
