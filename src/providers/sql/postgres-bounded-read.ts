/**
 * A PostgreSQL statement of unknown size read through the byte-bounded wrapper of budget.ts, in one
 * round trip when its shape is known: the wrapper needs the statement's column names and types
 * (how it sizes each), learnt from a `LIMIT 0` run of it (names and types, no rows) and kept for a few seconds per
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
import { postgresBoundedRows } from './budget.js';
import { pgColumnsOfOids, type PgColumns } from './postgres-types.js';
import { SqlFailure, type QueryLimits, type QueryOutput } from './dialect.js';
import { wrappable } from './guard.js';
import type { LoadedPostgres } from './postgres-pool.js';

/** How long a statement's learnt shape is reused, ms (the provider's schema cache lives as long). */
const SHAPE_TTL_MS = 5000;
/** Most statement shapes kept (named queries and recent `sql_query` texts). */
const SHAPES_KEPT = 256;

/** A statement's columns: their names, and what the wrapper takes of their types (postgres-types.ts). */
export interface Shape extends PgColumns {
  columns: string[];
}

/** The shape of a `LIMIT 0` run's answer. */
export function shapeOf(fields: readonly { name: string; dataTypeID: number }[]): Shape {
  return {
    columns: fields.map((f) => f.name),
    ...pgColumnsOfOids(fields.map((f) => f.dataTypeID)),
  };
}

/** The shapes of statements, by their text. */
export class ShapeCache {
  private readonly shapes = new Map<string, { at: number; shape: Shape }>();

  get(sql: string): Shape | undefined {
    const kept = this.shapes.get(sql);
    if (kept === undefined) return undefined;
    if (Date.now() - kept.at < SHAPE_TTL_MS) return kept.shape;
    this.shapes.delete(sql);
    return undefined;
  }

  set(sql: string, shape: Shape): void {
    this.shapes.delete(sql);
    this.shapes.set(sql, { at: Date.now(), shape });
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
  let shape = shapes.get(inner);
  const kept = shape !== undefined;
  if (shape === undefined) {
    const learnt = await client.query({
      text: shapeStatement(inner),
      values: params,
      rowMode: 'array',
      types,
    });
    shape = shapeOf(learnt.fields);
    shapes.set(inner, shape);
  }
  let result: PgNs.QueryArrayResult;
  try {
    result = await client.query({
      text: boundedStatement(inner, shape, limits),
      values: params,
      rowMode: 'array',
      types,
    });
  } catch (error) {
    throw staleOr(error, kept, shapes, inner);
  }
  return rowsWithin(result.rows, shape.columns, limits);
}

/** `inner` read through the byte-bounded wrapper, its rows capped at `maxRows` and one more. */
export function boundedStatement(
  inner: string,
  shape: Shape,
  limits: Pick<QueryLimits, 'maxRows' | 'maxBytes'>,
): string {
  const rows = limits.maxRows + 1;
  return `${postgresBoundedRows(inner, shape.sizing, limits.maxBytes, shape.rowWidth, rows)} LIMIT ${rows}`;
}

/**
 * What a bounded statement's failure means: a kept shape the statement no longer has (the wrapper
 * names more columns than there are: 42P10) is a StaleShape, its shape forgotten; else `error`.
 */
export function staleOr(error: unknown, kept: boolean, shapes: ShapeCache, inner: string): unknown {
  if (!kept || (error as { code?: unknown }).code !== '42P10') return error;
  shapes.forget(inner);
  return new StaleShape('the statement’s columns changed since its shape was learnt');
}

/** The answer of a bounded statement's `rows`: the columns' values of the rows within the limits. */
export function rowsWithin(
  rows: readonly unknown[][],
  columns: string[],
  limits: Pick<QueryLimits, 'maxRows' | 'maxBytes'>,
): QueryOutput {
  const kept: unknown[][] = [];
  let truncated = false;
  let over: QueryOutput['over'];
  let used = 0;
  for (const row of rows) {
    const rowBytes = Number(row[columns.length]);
    const running = Number(row[columns.length + 1]);
    if (running > limits.maxBytes) {
      over = { row: kept.length, rowBytes, usedBytes: used, budget: limits.maxBytes };
      break;
    }
    if (kept.length === limits.maxRows) {
      truncated = true;
      break;
    }
    used = running;
    kept.push(row.slice(0, columns.length));
  }
  return { columns, rows: kept, truncated, ...definedProps({ over }) };
}

/** The shape-learning statement of `inner`: its columns (names and types), no rows. */
export function shapeStatement(inner: string): string {
  return `SELECT * FROM (${inner}\n) AS q LIMIT 0`;
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
