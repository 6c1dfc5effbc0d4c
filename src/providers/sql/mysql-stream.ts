/**
 * Reading a MySQL / MariaDB statement's rows as they stream (the driver parses one row at a time):
 * at most `maxRows` (then `truncated`), their bytes within `maxBytes` (then `over`). At either the
 * statement is stopped (KILL QUERY) and its connection spoiled. A named query's or `sql_query` rows
 * are measured as they arrive and also on the wire (the socket's bytes, less the protocol's most
 * per row), so that a value past the budget stops the statement before the driver holds its row
 * whole; a table page's rows carry their size, measured in the server, in a last column.
 */
import type * as MysqlNs from 'mysql2';
import { definedProps } from '../../core/defined.js';
import { BudgetMeter } from './budget.js';
import { SqlFailure, type QueryLimits, type QueryOutput } from './dialect.js';
import { bindable } from './mysql-connect.js';

export interface StreamedStatement {
  connection: MysqlNs.PoolConnection;
  /** Makes the connection be discarded instead of returned to the pool. */
  spoil(): void;
  /** Stops the statement the connection runs (KILL QUERY over a connection of its own). */
  kill(threadId: number): void;
  sql: string;
  params: unknown[];
  limits: Pick<QueryLimits, 'maxRows' | 'maxBytes' | 'timeoutMs'>;
  /** The row's size is the server's, in this last column (left out of the row): a table page. */
  measured?: boolean;
  /**
   * Sends the statement, handing `listen` its query before it goes out (by default the driver's
   * execute, prepared, values bound by the server); the dialect's `sql_query` writes a session
   * reset behind it (mysql-pipeline.ts).
   */
  issue?: ((values: unknown[], listen: (query: NodeJS.EventEmitter) => void) => void) | undefined;
}

export function streamRows(statement: StreamedStatement): Promise<QueryOutput> {
  const { connection, spoil, kill, sql, params, limits, measured = false } = statement;
  const issue =
    statement.issue ??
    ((values, listen) =>
      // always prepared: values bound by the server, one encoding whether or not there are any
      listen(connection.execute({ sql, values, rowsAsArray: true })));
  return new Promise<QueryOutput>((resolve, reject) => {
    const rows: unknown[][] = [];
    const meter = new BudgetMeter(limits.maxBytes);
    let columns: string[] = [];
    let truncated = false;
    let done = false;
    const cleanups: (() => void)[] = [];
    const finish = (error?: unknown): void => {
      if (done) return;
      done = true;
      clearTimeout(deadline);
      for (const cleanup of cleanups) cleanup();
      connection.off('error', lost);
      connection.off('end', lost);
      if (error !== undefined) reject(error);
      else resolve({ columns, rows, truncated, ...definedProps({ over: meter.over }) });
    };
    const stop = (): void => {
      spoil();
      connection.pause();
      kill(connection.threadId);
      finish();
    };
    // The server's own limit ends the statement; this one answers if the server does not.
    const deadline = setTimeout(() => {
      spoil();
      kill(connection.threadId);
      finish(new SqlFailure('timeout', `the statement ran past ${limits.timeoutMs} ms`));
    }, limits.timeoutMs + 5000);
    // A connection lost under a streamed statement (KILL CONNECTION) is reported on the
    // connection, not on the statement, which would otherwise never end.
    const lost = (error?: Error): void =>
      finish(
        Object.assign(error ?? new Error('the connection to the database ended'), { fatal: true }),
      );
    connection.once('error', lost);
    connection.once('end', lost);
    // The wire meter: bytes as they arrive, before the driver has a whole row. Once what arrived
    // after the column definitions, less the protocol's most per row, passes the budget, the
    // values already passed it: the statement stops without the row ever being held whole.
    const socket = (connection as unknown as { stream?: NodeJS.EventEmitter }).stream;
    let received = 0;
    let base: number | undefined;
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (done || measured || base === undefined) return;
      const payload =
        received - base - (rows.length + 1) * wireOverhead(columns.length) - meter.used;
      if (meter.used + payload <= limits.maxBytes) return;
      meter.over = {
        row: rows.length,
        rowBytes: payload,
        usedBytes: meter.used,
        budget: limits.maxBytes,
        atLeast: true,
      };
      stop();
    };
    socket?.on('data', onData);
    cleanups.push(() => socket?.off('data', onData));
    issue(params.map(bindable), (query) => {
      query.on('fields', (fields: MysqlNs.FieldPacket[] | undefined) => {
        columns = (fields ?? []).map((f) => f.name);
        base = received;
      });
      query.on('result', (row: unknown) => {
        // a statement without rows answers with a status (an OK packet), not a row
        if (done || !Array.isArray(row)) return;
        const values = row as unknown[];
        if (rows.length === limits.maxRows) {
          truncated = true;
          return stop();
        }
        const size = measured
          ? Number(values.pop())
          : values.reduce<number>((sum, v) => sum + sizeOf(v), 0);
        if (!meter.add(size)) return stop();
        rows.push(values);
      });
      query.on('error', (error: unknown) => finish(error));
      query.on('end', () => finish());
    });
  });
}

/**
 * Most bytes the binary protocol spends on one row of `columns` columns besides what the budget
 * counts: the packet header (4), the row marker (1), the NULL bitmap, and per value a length
 * prefix (up to 9) and a number's or date's binary form where its text is shorter (up to 8).
 */
function wireOverhead(columns: number): number {
  return 5 + Math.ceil((columns + 2) / 8) + 17 * columns;
}

/** A received value's size in bytes, as the byte budget counts it. */
function sizeOf(value: unknown): number {
  if (value === null || value === undefined) return 0;
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (value instanceof Uint8Array) return value.byteLength;
  return String(value).length;
}
