/**
 * Byte-bounded result sets. A statement's rows are read through a wrapper that measures every row
 * in the database, before the row is sent, and blanks the values of any row past the byte budget:
 * no value larger than the budget is ever sent to (PostgreSQL) or materialised by (SQLite) the
 * process reading it, and the reader stops at the first row past the budget.
 *
 * PostgreSQL's client buffers each DataRow message whole and reads a statement's answer at once
 * (at most the row cap and one more), so there the running total is kept by the server too (a
 * window sum in statement order): rows after the budget arrive blank. SQLite rows are stepped one at a time, so its reader keeps the total.
 *
 * A row's size is the length of its values in the database's text form (PostgreSQL: what is sent,
 * sized by each column's type — see PgSizing; SQLite: `octet_length`, the UTF-8 or blob bytes): the
 * JSON a client gets is checked again against the same cap. The sizes a cut result tells (`rowBytes`,
 * `usedBytes`) are these; on PostgreSQL exact but for a type whose cast to text spells more than it
 * sends (inet, cidr), where they are over.
 */

import { rememberRecent } from '../../core/memo.js';

/**
 * The wrapper's extra columns: the row's size (PostgreSQL: of a row past the budget only, else
 * NULL), and (PostgreSQL) the running total through it — exact while within the budget.
 */
export const ROW_BYTES = '__reservoir_row_bytes';
export const RUN_BYTES = '__reservoir_run_bytes';

const alias = (i: number): string => `c${i + 1}`;

/**
 * How the wrapper sizes a PostgreSQL column's values, by its type (postgres-types.ts): `string`
 * (text, varchar, bpchar) the value's own bytes, as sent (a bpchar's padding included, which its
 * cast to text drops); a number, a type whose text is always that long (bool: t or f; uuid); `text`
 * any other type, the bytes of its cast to text — the text it is sent as, or longer where the cast
 * spells more (inet and cidr print their mask there).
 */
export type PgSizing = 'string' | 'text' | number;

/**
 * PostgreSQL: `inner` (one SELECT, WITH … SELECT, VALUES or TABLE, no trailing `;`) with one column
 * per entry of `sizing` (how each is sized), each value sent only while the running size stays
 * within `budget`; then the row size (of a row past the budget; NULL for the others) and the
 * running total (past the budget: some number over it). The inner statement's parameters
 * ($1 …) keep their meaning.
 */
export function postgresBounded(
  inner: string,
  sizing: readonly PgSizing[],
  budget: number,
): string {
  return keptBounded(`${sizing.join(',')}\0${budget}\0${inner}`);
}

/**
 * `inner` wrapped for `budget` — or, where no more than `rows` rows of at most `rowWidth` bytes each
 * (postgres-types.ts; undefined: unbounded) can pass it, `inner` as the wrapper answers it without
 * sizing a value: its columns, a NULL row size and a running total of 0. The rows, and every value,
 * come out as the wrapper's would; the database does not size what cannot matter.
 */
export function postgresBoundedRows(
  inner: string,
  sizing: readonly PgSizing[],
  budget: number,
  rowWidth: number | undefined,
  rows: number,
): string {
  if (rowWidth === undefined || rows * rowWidth > budget)
    return postgresBounded(inner, sizing, budget);
  const names = sizing.map((_, i) => alias(i));
  return (
    `SELECT ${[...names.map((c) => `q.${c}`), `NULL::int8 AS ${ROW_BYTES}`, `0::int8 AS ${RUN_BYTES}`].join(', ')} ` +
    `FROM (${inner}\n) AS q${names.length === 0 ? '' : `(${names.join(', ')})`}`
  );
}

/**
 * The same table page or statement is wrapped alike on every call: built once and kept a while
 * (core/memo.ts), keyed by column sizings, budget and text (short texts only).
 */
const keptBounded = rememberRecent(
  (key) => {
    const [sizing, budget] = key.split('\0', 2);
    const inner = key.slice(sizing!.length + budget!.length + 2);
    const sizings = sizing === '' ? [] : sizing!.split(',');
    return buildPostgresBounded(
      inner,
      sizings.map((s) => (s === 'string' || s === 'text' ? s : Number(s))),
      Number(budget),
    );
  },
  { entries: 256, maxKeyLength: 4096 },
);

/** The bytes of the value of column `c` of the row `row` (0 for NULL) as `sizing` measures them. */
function sizeOf(row: string, c: string, sizing: PgSizing): string {
  if (sizing === 'string') return `coalesce(octet_length(${row}.${c}), 0)::int8`;
  if (sizing === 'text') return `coalesce(octet_length(${row}.${c}::text), 0)::int8`;
  return `CASE WHEN ${row}.${c} IS NULL THEN 0 ELSE ${Math.trunc(sizing)} END::int8`;
}

function buildPostgresBounded(inner: string, sizing: readonly PgSizing[], budget: number): string {
  const names = sizing.map((_, i) => alias(i));
  const size = (row: string): string =>
    names.length === 0 ? '0' : names.map((c, i) => sizeOf(row, c, sizing[i]!)).join(' + ');
  // Each row is sized once, as the window's argument: the running total sums sizes clamped past
  // the budget as int4 (sum(int4) is int8; sum(int8) builds a numeric per row) — exact while within
  // the budget, over it once a row is. A row alone over the budget is over the running total too,
  // so one CASE blanks both; only a row past the budget is sized again, for its size to be told.
  // (A size computed in a subquery and referenced twice would be computed twice: the planner pulls
  // such a subquery up and copies its expression into every reference.)
  const clamp = budget < INT4_MAX ? `least(${size('q')}, ${budget + 1})::int4` : size('q');
  const values = names.map((c) => `CASE WHEN r.${RUN_BYTES} <= ${budget} THEN r.${c} END`);
  return (
    `SELECT ${values.join(', ')}${values.length === 0 ? '' : ', '}` +
    `CASE WHEN r.${RUN_BYTES} > ${budget} THEN ${size('r')} END AS ${ROW_BYTES}, r.${RUN_BYTES} FROM (` +
    `SELECT ${[...names.map((c) => `q.${c}`), `(sum(${clamp}) OVER (ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW))::int8 AS ${RUN_BYTES}`].join(', ')} ` +
    `FROM (${inner}\n) AS q${names.length === 0 ? '' : `(${names.join(', ')})`}) AS r`
  );
}

/** PostgreSQL's largest int4: a budget from it on is summed as int8. */
const INT4_MAX = 2 ** 31 - 1;

/**
 * SQLite: `inner` with the columns `names` (in order; they may repeat), each row's values present
 * only when the whole row fits `budget`, under their own names; then the row size
 * (`__reservoir_row_bytes`). The reader keeps the running total. Self-contained (no outer names):
 * the query process (sqlite-child.ts) runs this very function, since only it knows the columns.
 */
export function sqliteBounded(inner: string, names: readonly string[], budget: number): string {
  const rowBytes = '__reservoir_row_bytes';
  const quote = (name: string): string => `"${name.replaceAll('"', '""')}"`;
  const aliases = names.map((_, i) => `c${i + 1}`);
  const size =
    aliases.length === 0 ? '0' : aliases.map((c) => `coalesce(octet_length(${c}), 0)`).join(' + ');
  const values = aliases.map(
    (c, i) => `CASE WHEN ${rowBytes} <= ${budget} THEN ${c} END AS ${quote(names[i]!)}`,
  );
  return `WITH __reservoir_q(${aliases.join(', ')}) AS (${inner}\n) SELECT ${[...values, rowBytes].join(', ')} FROM (SELECT *, ${size} AS ${rowBytes} FROM __reservoir_q)`;
}

/** Where a read stopped for the byte budget: the first row left out (0-based) and its size. */
export interface OverBudget {
  row: number;
  rowBytes: number;
  /** Bytes of the rows kept before it. */
  usedBytes: number;
  budget: number;
  /** `rowBytes` is a lower bound: the read stopped before the row had arrived whole (MySQL's wire meter). */
  atLeast?: boolean;
}

/** Counts rows' sizes against a budget; `add` says whether a row (of `bytes`) is still within it. */
export class BudgetMeter {
  private count = 0;
  /** Bytes of the rows within the budget so far. */
  used = 0;
  over: OverBudget | undefined;

  constructor(readonly budget: number) {}

  add(bytes: number): boolean {
    if (this.over !== undefined) return false;
    if (this.used + bytes > this.budget) {
      this.over = { row: this.count, rowBytes: bytes, usedBytes: this.used, budget: this.budget };
      return false;
    }
    this.used += bytes;
    this.count += 1;
    return true;
  }
}
