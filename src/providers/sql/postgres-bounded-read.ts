/**
 * A PostgreSQL statement of unknown size read through the byte-bounded wrapper of budget.ts, in one
 * round trip when its shape is known: the wrapper needs the statement's column count and names,
 * learnt from a `LIMIT 0` run of it (names and types, no rows) and kept for a few seconds per
 * statement text, as the provider keeps the tables it introspected. The rows come back in one
 * answer, at most `maxRows` + 1 of them (one more tells a cut result), no value past `maxBytes`
 * (values past the budget arrive blank).
 *
 * A kept shape the statement no longer has (a column dropped since: the wrapper names more columns
 * than there are) fails as `StaleShape`, and the caller runs the statement again with a fresh one.
 * A column added or renamed since shows at the latest when the shape is learnt again (SHAPE_TTL_MS,
 * or sooner when the provider sees the schema change), as on table pages.
 */
import type PgNs from 'pg';
import { definedProps } from '../../core/defined.js';
import { postgresBounded } from './budget.js';
import { SqlFailure, type QueryLimits, type QueryOutput } from './dialect.js';
import { wrappable } from './guard.js';
import type { LoadedPostgres } from './postgres-pool.js';

/** How long a statement's learnt shape is reused, ms (the provider's schema cache lives as long). */
const SHAPE_TTL_MS = 5000;
/** Most statement shapes kept (named queries and recent `sql_query` texts). */
const SHAPES_KEPT = 256;

/** The column names of statements, by their text. */
export class ShapeCache {
  private readonly shapes = new Map<string, { at: number; columns: string[] }>();

  get(sql: string): string[] | undefined {
    const kept = this.shapes.get(sql);
    if (kept === undefined) return undefined;
    if (Date.now() - kept.at < SHAPE_TTL_MS) return kept.columns;
    this.shapes.delete(sql);
    return undefined;
  }

  set(sql: string, columns: string[]): void {
    this.shapes.delete(sql);
    this.shapes.set(sql, { at: Date.now(), columns });
    if (this.shapes.size > SHAPES_KEPT) this.shapes.delete(this.shapes.keys().next().value!);
  }

  forget(sql?: string): void {
    if (sql === undefined) this.shapes.clear();
    else this.shapes.delete(sql);
  }
}

/** A kept shape the statement no longer has: run it again (its shape is forgotten). */
export class StaleShape extends Error {}

export async function readBounded(
  client: PgNs.ClientBase,
  driver: Pick<LoadedPostgres, 'types'>,
  shapes: ShapeCache,
  sql: string,
  params: unknown[],
  limits: Pick<QueryLimits, 'maxRows' | 'maxBytes'>,
): Promise<QueryOutput> {
  const { types } = driver;
  const wrap = wrappable(sql, 'postgres');
  if ('reason' in wrap) throw new SqlFailure('refused', wrap.reason);
  const inner = wrap.body;
  let columns = shapes.get(inner);
  const kept = columns !== undefined;
  if (columns === undefined) {
    const shape = await client.query({
      text: `SELECT * FROM (${inner}\n) AS q LIMIT 0`,
      values: params,
      rowMode: 'array',
      types,
    });
    columns = shape.fields.map((f) => f.name);
    shapes.set(inner, columns);
  }
  let result: PgNs.QueryArrayResult;
  try {
    result = await client.query({
      text: `${postgresBounded(inner, columns.length, limits.maxBytes)} LIMIT ${limits.maxRows + 1}`,
      values: params,
      rowMode: 'array',
      types,
    });
  } catch (error) {
    if (!kept || (error as { code?: unknown }).code !== '42P10') throw error;
    shapes.forget(inner);
    throw new StaleShape('the statement’s columns changed since its shape was learnt');
  }
  const rows: unknown[][] = [];
  let truncated = false;
  let over: QueryOutput['over'];
  let used = 0;
  for (const row of result.rows) {
    const rowBytes = Number(row[columns.length]);
    const running = Number(row[columns.length + 1]);
    if (running > limits.maxBytes) {
      over = { row: rows.length, rowBytes, usedBytes: used, budget: limits.maxBytes };
      break;
    }
    if (rows.length === limits.maxRows) {
      truncated = true;
      break;
    }
    used = running;
    rows.push(row.slice(0, columns.length));
  }
  return { columns, rows, truncated, ...definedProps({ over }) };
}

/** Runs `read`, and once more when it met a stale shape (the second learns the shape afresh). */
export async function withFreshShape<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (!(error instanceof StaleShape)) throw error;
    return read();
  }
}
