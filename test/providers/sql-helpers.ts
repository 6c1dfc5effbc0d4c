/**
 * Shared helpers for the SQL provider tests: reading JSON documents, walking every page of a table
 * through its `next` links, and the PostgreSQL fixture switch (RESERVOIR_TEST_PG: unset skips the
 * PostgreSQL tests with a message; set but unreachable fails them).
 */
import pg from 'pg';
import { silentLogger } from '../../src/core/log.js';
import type { Provider } from '../../src/core/types.js';
import type { Dialect, TableInfo } from '../../src/providers/sql/dialect.js';
import { postgresDialect } from '../../src/providers/sql/postgres.js';
import type { RowsDocument } from '../../src/providers/sql/views.js';
import { ctx } from './helpers.js';
import { eventually } from '../helpers/eventually.js';

export const PG_URL = process.env['RESERVOIR_TEST_PG'];
export const MYSQL_URL = process.env['RESERVOIR_TEST_MYSQL'];

/** A PostgreSQL schema of a test's own, and what reads it (`pgSchema`). */
export interface PgSchema {
  admin: pg.Client;
  /** A client that keeps every value as the text the server sent (no parsing). */
  raw: pg.Client;
  /** The dialect on the schema (pool of 2, 5 s statements), its tables introspected. */
  dialect: Dialect;
  tables: TableInfo[];
  /** Closes the three and drops the schema. */
  close(): Promise<void>;
}

/** Creates `schema`, runs `ddl` in it, and opens a raw client and the dialect on it. */
export async function pgSchema(schema: string, ddl: string): Promise<PgSchema> {
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}; SET search_path = ${schema}; ${ddl}`);
  const raw = new pg.Client({
    connectionString: PG_URL,
    types: { getTypeParser: () => (text: string) => text },
  });
  await raw.connect();
  const dialect = postgresDialect({
    url: PG_URL!,
    schema,
    statementTimeoutMs: 5000,
    allowPrivilegedRole: true,
    poolMax: 2,
    logger: silentLogger,
  });
  const tables = await dialect.introspect();
  const close = async (): Promise<void> => {
    await dialect.close();
    await raw.end();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  };
  return { admin, raw, dialect, tables, close };
}

/** Whether the MySQL / MariaDB tests run; when not, the reason is printed once per file. */
export function mysqlConfigured(): boolean {
  if (MYSQL_URL !== undefined && MYSQL_URL !== '') return true;
  console.log(
    'RESERVOIR_TEST_MYSQL is not set: the MySQL / MariaDB tests of the SQL provider are skipped (e.g. RESERVOIR_TEST_MYSQL=mysql://root@127.0.0.1:3306/test)',
  );
  return false;
}

if (PG_URL === undefined || PG_URL === '') {
  console.log(
    'RESERVOIR_TEST_PG is not set: the PostgreSQL tests of the SQL provider are skipped (e.g. RESERVOIR_TEST_PG=postgres://postgres@127.0.0.1:5432/test)',
  );
}

/** Reads `uri` and parses its first content as JSON. */
export async function readJson<T = Record<string, unknown>>(
  provider: Provider,
  uri: string,
): Promise<T> {
  const result = await provider.read(uri, ctx());
  const first = result.contents[0]!;
  if (!('text' in first)) throw new Error(`${uri} is not text`);
  return JSON.parse(first.text) as T;
}

/** The JSON document a rows URI reads as (the provider's own type). */
export type RowsDoc = RowsDocument;

/** Follows `next` links from `first`, calling `between` after each page; returns every row. */
export async function walkRows(
  provider: Provider,
  first: string,
  between: (page: number) => Promise<void> | void = () => undefined,
  maxPages = 10_000,
): Promise<{ rows: Record<string, unknown>[]; pages: number }> {
  const rows: Record<string, unknown>[] = [];
  let uri: string | null = first;
  let pages = 0;
  while (uri !== null) {
    if (pages >= maxPages) throw new Error(`more than ${maxPages} pages`);
    const doc: RowsDoc = await readJson<RowsDoc>(provider, uri);
    rows.push(...doc.rows);
    pages += 1;
    uri = doc.next;
    await between(pages);
  }
  return { rows, pages };
}

/** Polls `check` until true, failing after `timeoutMs` (see eventually()). */
export async function waitUntil(
  check: () => boolean,
  what: string,
  timeoutMs = 15_000,
): Promise<void> {
  await eventually(check, what, { deadlineMs: timeoutMs, stepMs: 20 });
}
