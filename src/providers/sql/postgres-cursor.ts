/**
 * A PostgreSQL statement of unknown size read through the byte-bounded wrapper of budget.ts: first
 * its shape (`LIMIT 0`: names and types, no rows), then its rows through a cursor in batches, at
 * most `maxRows` of them and no value past `maxBytes` (values past the budget arrive blank).
 */
import type PgNs from 'pg';
import { postgresBounded } from './budget.js';
import { SqlFailure, type QueryLimits, type QueryOutput } from './dialect.js';
import { definedProps } from '../../core/defined.js';
import { wrappable } from './guard.js';
import type { LoadedPostgres } from './postgres-pool.js';

/** Rows fetched per round trip from a bounded cursor. */
const BATCH_ROWS = 200;

export async function readBounded(
  client: PgNs.ClientBase,
  driver: Pick<LoadedPostgres, 'Cursor' | 'types'>,
  sql: string,
  params: unknown[],
  limits: Pick<QueryLimits, 'maxRows' | 'maxBytes'>,
): Promise<QueryOutput> {
  const { Cursor, types } = driver;
  const wrap = wrappable(sql, 'postgres');
  if ('reason' in wrap) throw new SqlFailure('refused', wrap.reason);
  const inner = wrap.body;
  const shape = await client.query({
    text: `SELECT * FROM (${inner}\n) AS q LIMIT 0`,
    values: params,
    rowMode: 'array',
    types,
  });
  const columns = shape.fields.map((f) => f.name);
  const cursor = client.query(
    new Cursor(postgresBounded(inner, columns.length, limits.maxBytes), params, {
      rowMode: 'array',
      types,
    }),
  );
  const rows: unknown[][] = [];
  let truncated = false;
  let over: QueryOutput['over'];
  let used = 0;
  try {
    reading: for (;;) {
      const want = Math.min(BATCH_ROWS, limits.maxRows + 1 - rows.length);
      const batch = await new Promise<unknown[][]>((resolve, reject) =>
        cursor.read(want, (error, got) => (error ? reject(error) : resolve(got as unknown[][]))),
      );
      for (const row of batch) {
        const rowBytes = Number(row[columns.length]);
        const running = Number(row[columns.length + 1]);
        if (running > limits.maxBytes) {
          over = { row: rows.length, rowBytes, usedBytes: used, budget: limits.maxBytes };
          break reading;
        }
        if (rows.length === limits.maxRows) {
          truncated = true;
          break reading;
        }
        used = running;
        rows.push(row.slice(0, columns.length));
      }
      if (batch.length < want) break;
    }
  } finally {
    await cursor.close();
  }
  return { columns, rows, truncated, ...definedProps({ over }) };
}
