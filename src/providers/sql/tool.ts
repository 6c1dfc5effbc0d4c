/**
 * `sql_query_<name>`: the opt-in tool that runs one read-only statement against one SQL source.
 * Everything that makes it safe lives in the provider and the database (see docs/providers/sql.md,
 * "Safety"), and in access control: the tool `reads` its source's root, so under access rules only
 * a principal that may read all of it is offered the tool (docs/auth.md, "Query tools"). This file
 * only describes the tool and renders its result. A refusal, a timeout or an
 * unreachable database is an `isError` result the model can act on. A client that asked for
 * progress is told the statement is running, at once and every second until it ends.
 *
 * @example
 * ```ts
 * const db = sqlProvider({ url: 'postgres://reader@db/app', queryTool: true });
 * reservoir.tools.add(sqlQueryTool(db));
 * ```
 */
import { z } from 'zod';
import { isReservoirError } from '../../core/errors.js';
import { keepJson } from '../../core/kept-json.js';
import { withProgress } from '../../core/tool-progress.js';
import { defineOneRoundTool, type Tool, type ToolResult } from '../../core/tools.js';
import type { SqlProvider } from './index.js';

export interface SqlQueryToolOptions {
  /** The tool's name. @default `sql_query_<source name>` with `.` and `-` as `_` */
  name?: string;
}

const MAX_SQL_LENGTH = 100_000;
const MAX_PARAMS = 100;
/** Rows whose JSON is at least this long (characters) have it kept for the answer (see `call`). */
export const KEEP_ROWS_JSON_FROM = 4096;

export function sqlQueryTool(provider: SqlProvider, options: SqlQueryToolOptions = {}): Tool {
  const name = options.name ?? `sql_query_${provider.database.replace(/[.-]/g, '_')}`;
  const placeholders =
    provider.dialect === 'postgres'
      ? '$1, $2, …'
      : provider.dialect === 'mysql'
        ? '?'
        : '? (or ?1, ?2, …)';
  const server = { postgres: 'PostgreSQL', mysql: 'MySQL / MariaDB', sqlite: 'SQLite' }[
    provider.dialect
  ];
  const input = z.strictObject({
    sql: z
      .string()
      .min(1)
      .max(MAX_SQL_LENGTH)
      .describe(
        `One read-only statement: SELECT, WITH … SELECT, VALUES or TABLE. Put values in params and refer to them as ${placeholders}.`,
      ),
    params: z
      .array(z.union([z.string(), z.number(), z.boolean(), z.null()]))
      .max(MAX_PARAMS)
      .optional()
      .describe(
        'Values bound to the placeholders, in order. Never splice values into the SQL text.',
      ),
    maxRows: z
      .int()
      .min(1)
      .max(provider.maxRows)
      .optional()
      .describe(`Most rows to return (1-${provider.maxRows}, default ${provider.maxRows}).`),
  });
  const output = z.object({
    columns: z.array(z.string()),
    rows: z.array(z.array(z.unknown())).describe('One array per row, values in column order.'),
    rowCount: z.number().int(),
    truncated: z.boolean().describe('More rows existed than were returned (row cap or size cap).'),
    elapsedMs: z.number(),
  });
  return defineOneRoundTool({
    name,
    title: `Query ${provider.database} (read-only SQL)`,
    description:
      `Run one read-only SQL statement against the ${server} database "${provider.database}" ` +
      `and get its rows. Only reads run: writes, DDL, several statements and functions with side effects are refused. ` +
      `At most ${provider.maxRows} rows; statements stop after ${provider.statementTimeoutMs} ms. ` +
      `Read ${provider.root}schema first for the tables and columns.`,
    input,
    output,
    // Any table the database lets the role read, whatever the access rules say of its resources.
    reads: provider.root,
    annotations: {
      title: `Query ${provider.database}`,
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
    async call({ sql, params, maxRows }, ctx): Promise<ToolResult> {
      try {
        const result = await withProgress(ctx, `querying ${provider.database}`, () =>
          provider.query(sql, params ?? [], { maxRows, signal: ctx.signal }),
        );
        // The rows are serialised once: for the text block, and kept for the structuredContent's
        // `rows`, which the stdio wire writes from it (core/kept-json.ts, mcp/direct/encode.ts) —
        // unless they are short, when serialising them again costs less than writing them apart.
        const rows = JSON.stringify(result.rows);
        if (rows.length >= KEEP_ROWS_JSON_FROM) keepJson(result.rows, rows);
        const summary = `${result.rowCount} row${result.rowCount === 1 ? '' : 's'}${result.truncated ? ' (truncated at the row or size cap: more rows exist; narrow the query, select fewer or shorter columns, or add LIMIT)' : ''}, ${result.elapsedMs} ms.`;
        // What JSON.stringify({ columns, rows }) writes.
        const text = `${summary}\n{"columns":${JSON.stringify(result.columns)},"rows":${rows}}`;
        return { content: [{ type: 'text', text }], structuredContent: { ...result } };
      } catch (error) {
        if (!isReservoirError(error)) throw error;
        const hint =
          error.code === 'timeout'
            ? ' Narrow the query (filters, LIMIT) and try again.'
            : error.code === 'unavailable'
              ? ' The database cannot answer right now; try again later.'
              : '';
        return { content: [{ type: 'text', text: `${error.message}.${hint}` }], isError: true };
      }
    },
  });
}
