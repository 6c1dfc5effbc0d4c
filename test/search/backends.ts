/**
 * The index engines the search suite runs against: SQLite always, PostgreSQL when RESERVOIR_TEST_PG
 * is set (skipped with a message otherwise). Each PostgreSQL run keeps its tables in a schema of its
 * own, dropped when the file's tests are done.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { silentLogger } from '../../src/core/log.js';
import { Registry } from '../../src/core/registry.js';
import type { Provider } from '../../src/core/types.js';
import { filesProvider } from '../../src/providers/files/index.js';
import type { Run } from '../../src/search/backend.js';
import { PgBackend } from '../../src/search/pg/backend.js';
import { tablesOf, type Tables } from '../../src/search/pg/schema.js';
import type { PostgresIndexSettings } from '../../src/search/pg/settings.js';
import { parseQuery } from '../../src/search/query.js';
import { Segmenter } from '../../src/search/segment.js';
import { SearchService } from '../../src/search/service.js';
import { tempDir } from '../providers/helpers.js';

export const PG_URL = process.env['RESERVOIR_TEST_PG'] ?? '';

export interface Backend {
  name: 'sqlite' | 'postgres';
  /** The `postgres` search setting of this engine (undefined for SQLite). */
  postgres: PostgresIndexSettings | undefined;
}

const segmenter = new Segmenter();

/** A search of `query` as an engine is handed it: every document, a 30 s budget, no filter. */
export function searchRun(query: string): Run {
  const parsed = parseQuery(query, segmenter);
  return {
    match: parsed.match,
    tree: parsed.tree,
    where: { sql: '', params: [] },
    deadline: Date.now() + 30_000,
    signal: new AbortController().signal,
    query,
  };
}

/** A PostgreSQL index of `root` in `schema`, under a key of its own, and the names of its tables. */
export async function openPgIndex(
  schema: string,
  root: string,
): Promise<{ backend: PgBackend; tables: Tables }> {
  const key = randomBytes(4).toString('hex');
  const backend = await PgBackend.open(
    { url: PG_URL, schema, leaseTickMs: 60_000 },
    key,
    [root],
    silentLogger,
  );
  return { backend, tables: tablesOf(schema, `index_${key}`) };
}

/** A fresh schema name for this run. */
export function testSchema(): string {
  return `reservoir_test_${randomBytes(5).toString('hex')}`;
}

/** The engines, each named for `describe.each`; PostgreSQL with its own schema (drop it with `dropBackends`). */
export function backends(): Backend[] {
  const list: Backend[] = [{ name: 'sqlite', postgres: undefined }];
  if (PG_URL !== '')
    list.push({
      name: 'postgres',
      postgres: { url: PG_URL, schema: testSchema(), leaseTickMs: 100 },
    });
  else
    console.log(
      'RESERVOIR_TEST_PG is not set: the search suite runs on SQLite only (e.g. RESERVOIR_TEST_PG=postgres://postgres@127.0.0.1:5432/test)',
    );
  return list;
}

/** Drops the PostgreSQL schemas of `list`. */
export async function dropBackends(list: readonly Backend[]): Promise<void> {
  for (const backend of list) {
    if (backend.postgres?.schema === undefined) continue;
    const client = new pg.Client({ connectionString: backend.postgres.url });
    await client.connect();
    try {
      await client.query(`DROP SCHEMA IF EXISTS "${backend.postgres.schema}" CASCADE`);
    } finally {
      await client.end();
    }
  }
}

/** A search service of one engine, over the files of a root. */
export interface EngineService {
  registry: Registry;
  service: SearchService;
}

/** One search service per engine of `list` over the files under `root`, each ready (indexed). */
export async function servicesOver(
  root: string,
  list: readonly Backend[],
): Promise<EngineService[]> {
  const services: EngineService[] = [];
  for (const backend of list) {
    const registry = new Registry().mount(filesProvider({ root }) as Provider);
    const service = new SearchService(
      registry,
      { stateDir: tempDir('reservoir-state-'), postgres: backend.postgres },
      silentLogger,
    );
    services.push({ registry, service });
    await service.ready;
  }
  return services;
}

/** Closes what `servicesOver` opened and drops the PostgreSQL schemas of `list`. */
export async function closeServices(
  services: readonly EngineService[],
  list: readonly Backend[],
): Promise<void> {
  for (const { registry, service } of services) {
    await service.close();
    await registry.close();
  }
  await dropBackends(list);
}
