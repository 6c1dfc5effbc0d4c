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
 * A row's size is the length of its values in the database's text form (PostgreSQL: what is sent;
 * SQLite: `octet_length`, the UTF-8 or blob bytes): the JSON a client gets is checked again against the same cap.
 */

import { rememberRecent } from '../../core/memo.js';

/** The wrapper's extra columns: the row's size, and (PostgreSQL) the running total through it. */
export const ROW_BYTES = '__reservoir_row_bytes';
export const RUN_BYTES = '__reservoir_run_bytes';

const alias = (i: number): string => `c${i + 1}`;

/**
 * PostgreSQL: `inner` (one SELECT, WITH … SELECT, VALUES or TABLE, no trailing `;`) with `columns`
 * columns, each value sent only while the running size stays within `budget`; then the row size and
 * the running total. The inner statement's parameters ($1 …) keep their meaning.
 */
export function postgresBounded(inner: string, columns: number, budget: number): string {
  return keptBounded(`${columns}\0${budget}\0${inner}`);
}

/**
 * The same table page or statement is wrapped alike on every call: built once and kept a while
 * (core/memo.ts), keyed by column count, budget and text (short texts only).
 */
const keptBounded = rememberRecent(
  (key) => {
    const [columns, budget] = key.split('\0', 2);
    const inner = key.slice(columns!.length + budget!.length + 2);
    return buildPostgresBounded(inner, Number(columns), Number(budget));
  },
  { entries: 256, maxKeyLength: 4096 },
);

function buildPostgresBounded(inner: string, columns: number, budget: number): string {
  const names = Array.from({ length: columns }, (_, i) => alias(i));
  const size =
    names.length === 0
      ? '0'
      : names.map((c) => `coalesce(octet_length(q.${c}::text), 0)::int8`).join(' + ');
  // A row alone over the budget is blanked before the window (whose buffer would hold it), the rest
  // once the running total passes the budget.
  const fitting = names.map((c) => `CASE WHEN s.${ROW_BYTES} <= ${budget} THEN q.${c} END AS ${c}`);
  const values = names.map((c) => `CASE WHEN r.${RUN_BYTES} <= ${budget} THEN r.${c} END`);
  return (
    `SELECT ${[...values, `r.${ROW_BYTES}`, `r.${RUN_BYTES}`].join(', ')} FROM (` +
    `SELECT ${[...fitting, `s.${ROW_BYTES}`].join(', ')}, (sum(s.${ROW_BYTES}) OVER (ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW))::int8 AS ${RUN_BYTES} ` +
    `FROM (${inner}\n) AS q${names.length === 0 ? '' : `(${names.join(', ')})`} ` +
    `CROSS JOIN LATERAL (SELECT (${size}) AS ${ROW_BYTES}) AS s) AS r`
  );
}

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
