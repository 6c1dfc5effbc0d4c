/** The `too_large` errors of SQL reads: a row alone over the result cap, a named query over a cap. */
import { ReservoirError } from '../../core/errors.js';
import type { OverBudget } from './budget.js';

/** The error for a read whose first row alone passes the result cap (a later one just ends the page). */
export function rowTooLarge(uri: string, over: OverBudget): ReservoirError {
  return new ReservoirError(
    'too_large',
    `Row too large: row ${over.row + 1} of ${uri} holds ${over.atLeast === true ? 'more than ' : ''}${over.rowBytes} bytes, over the ${over.budget}-byte result cap`,
    { data: { uri, size: over.rowBytes, limit: over.budget, measure: 'row' } },
  );
}

/** A named query whose rows pass the byte cap: its parameters should narrow it. */
export function queryOverBytes(uri: string, over: OverBudget, maxBytes: number): ReservoirError {
  const size = over.usedBytes + over.rowBytes;
  return new ReservoirError(
    'too_large',
    `Query result too large: ${uri} returns more than ${maxBytes} bytes (the result cap; at least ${size}); narrow its parameters`,
    { data: { uri, size, limit: maxBytes, measure: 'bytes' } },
  );
}

/** A named query with more rows than the row cap: its parameters should narrow it. */
export function queryOverRows(uri: string, maxRows: number): ReservoirError {
  return new ReservoirError(
    'too_large',
    `Query result too large: ${uri} returns more than ${maxRows} rows (the row cap); narrow its parameters`,
    { data: { uri, size: maxRows + 1, limit: maxRows, measure: 'rows' } },
  );
}
