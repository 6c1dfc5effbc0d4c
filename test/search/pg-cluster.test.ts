// A PostgreSQL index shared by several instances (RESERVOIR_TEST_PG; skipped with a message when
// unset): the first instance takes the sources' leases and builds the index once; an instance that
// joins answers searches from it at once and writes nothing; a change is fed by the holder alone
// and found through either; when the holder goes, another takes its leases over and feeds the
// changes made since. Then the tables of another schema version are rebuilt with one log line, those
// of version 3 (whose texts lack their size lexemes) included.
import { rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Registry } from '../../src/core/registry.js';
import type { Logger } from '../../src/core/log.js';
import { silentLogger } from '../../src/core/log.js';
import type { Provider } from '../../src/core/types.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { PG_SCHEMA_VERSION } from '../../src/search/pg/schema.js';
import { SearchService, type SearchPage } from '../../src/search/service.js';
import { eventually } from '../helpers/eventually.js';
import { createWhole } from '../helpers/tree.js';
import { ctx, removeDir, tempDir, writeTree } from '../providers/helpers.js';
import { PG_URL, testSchema } from './backends.js';

const SCHEMA = testSchema();
let root: string;
const open: { registry: Registry; service: SearchService }[] = [];

function instance(logger: Logger = silentLogger): { registry: Registry; service: SearchService } {
  const registry = new Registry().mount(
    filesProvider({ root, watch: { settleMs: 10 } }) as Provider,
  );
  const service = new SearchService(
    registry,
    {
      stateDir: tempDir('reservoir-state-'),
      postgres: { url: PG_URL, schema: SCHEMA, leaseTickMs: 100 },
    },
    logger,
  );
  const pair = { registry, service };
  open.push(pair);
  return pair;
}

async function stop(pair: { registry: Registry; service: SearchService }): Promise<void> {
  open.splice(open.indexOf(pair), 1);
  await pair.service.close();
  await pair.registry.close();
}

const names = (page: SearchPage): string[] => page.hits.map((h) => h.name).sort();
const find = async (service: SearchService, query: string): Promise<string[]> =>
  names(await service.search({ query, limit: 20 }, ctx()));

describe.skipIf(PG_URL === '')('a search index shared on PostgreSQL', () => {
  beforeAll(() => {
    root = tempDir();
    writeTree(root, {
      'docs/heron.md': 'the grey heron waits by the water\n',
      'docs/egret.md': 'an egret, white, by the same water\n',
    });
  });

  afterEach(async () => {
    for (const pair of [...open]) await stop(pair);
  });

  afterAll(async () => {
    removeDir(root);
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
    await client.end();
  });

  it('is built once by the lease holder; a joining instance answers at once, writes nothing, and finds what the holder feeds', async () => {
    const holder = instance();
    await holder.service.ready;
    expect(holder.service.writes().docsWritten).toBe(2);

    const joiner = instance();
    // Its first answer comes from the shared index, not from a build of its own.
    const first = await joiner.service.search({ query: 'water', limit: 20 }, ctx());
    expect(names(first)).toEqual(['egret.md', 'heron.md']);
    expect(first.indexing).toBeUndefined();
    expect(first.hits.find((h) => h.name === 'heron.md')!.snippet).toContain('water');
    await joiner.service.ready;
    expect(joiner.service.writes()).toEqual({ blobsWritten: 0, docsWritten: 0 });

    // whole (created empty then written, it could be fed twice: the count below is exact)
    createWhole(join(root, 'docs/ibis.md'), 'a sacred ibis by the water\n', dirname(root));
    await eventually(
      async () => (await find(joiner.service, 'ibis')).length === 1,
      'the holder to feed the new file',
      {
        deadlineMs: 20_000,
        stepMs: 50,
      },
    );
    expect(holder.service.writes().docsWritten).toBe(3);
    expect(joiner.service.writes().docsWritten).toBe(0);
    rmSync(join(root, 'docs/ibis.md'));
    await eventually(
      async () => (await find(joiner.service, 'ibis')).length === 0,
      'the holder to remove it',
      {
        deadlineMs: 20_000,
        stepMs: 50,
      },
    );
  });

  it('hands the sources to another instance when the holder goes, which catches up on what changed meanwhile', async () => {
    const holder = instance();
    await holder.service.ready;
    const next = instance();
    await next.service.ready;
    expect(next.service.writes().docsWritten).toBe(0);
    await stop(holder);
    // Changed while no instance fed the source: caught up by the new holder's reconcile.
    writeFileSync(join(root, 'docs/stork.md'), 'a white stork nests on the roof\n');
    await eventually(
      async () => (await find(next.service, 'stork')).length === 1,
      'the new holder to catch up',
      {
        deadlineMs: 20_000,
        stepMs: 50,
      },
    );
    expect(next.service.writes().docsWritten).toBeGreaterThan(0);
    rmSync(join(root, 'docs/stork.md'));
    await eventually(
      async () => (await find(next.service, 'stork')).length === 0,
      'the new holder to feed a removal',
      {
        deadlineMs: 20_000,
        stepMs: 50,
      },
    );
  });

  it('rebuilds tables written by another schema version, with one log line naming it', async () => {
    const first = instance();
    await first.service.ready;
    const location = first.service.file;
    await stop(first);
    const table = location.slice(location.lastIndexOf(' ') + 1).replace(/_\*$/, '_meta');
    const [schema, name] = table.split('.') as [string, string];
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`UPDATE "${schema}"."${name}" SET value = '0' WHERE key = 'version'`);
    await client.end();
    const warnings: string[] = [];
    const logger: Logger = {
      ...silentLogger,
      warn: (_obj: unknown, msg?: string) => void warnings.push(String(msg)),
    } as Logger;
    const second = instance(logger);
    await second.service.ready;
    expect(warnings).toEqual([
      expect.stringMatching(
        new RegExp(`schema version 0, expected ${PG_SCHEMA_VERSION}; rebuilding it$`),
      ),
    ]);
    expect(await find(second.service, 'heron')).toEqual(['heron.md']);
  });

  it('rebuilds tables of schema version 3, whose texts lack their size lexemes, with one log line', async () => {
    const first = instance();
    await first.service.ready;
    const location = first.service.file;
    await stop(first);
    const prefix = location.slice(location.lastIndexOf(' ') + 1).replace(/_\*$/, '');
    const [schema, name] = prefix.split('.') as [string, string];
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    const blobs = `"${schema}"."${name}_blobs"`;
    // Version 3's texts: the same vectors without the size lexemes.
    await client.query(
      `UPDATE ${blobs} SET body = ts_filter(setweight(body, 'D'), '{d}') WHERE true`,
    );
    await client.query(`UPDATE "${schema}"."${name}_meta" SET value = '3' WHERE key = 'version'`);
    const sized = async (): Promise<number> =>
      Number(
        (
          await client.query<{ n: string }>(
            `SELECT count(*) AS n FROM ${blobs} WHERE body @@ '#5.0'::tsquery`,
          )
        ).rows[0]?.n,
      );
    const texts = Number(
      (await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${blobs}`)).rows[0]?.n,
    );
    expect(texts).toBeGreaterThan(0);
    expect(await sized()).toBe(0);
    const warnings: string[] = [];
    const logger: Logger = {
      ...silentLogger,
      warn: (_obj: unknown, msg?: string) => void warnings.push(String(msg)),
    } as Logger;
    const second = instance(logger);
    await second.service.ready;
    expect(warnings).toEqual([
      expect.stringMatching(
        new RegExp(`schema version 3, expected ${PG_SCHEMA_VERSION}; rebuilding it$`),
      ),
    ]);
    expect(await find(second.service, 'heron')).toEqual(['heron.md']);
    const version = await client.query<{ value: string }>(
      `SELECT value FROM "${schema}"."${name}_meta" WHERE key = 'version'`,
    );
    const rebuilt = await sized();
    await client.end();
    expect(version.rows[0]?.value).toBe(PG_SCHEMA_VERSION);
    expect(rebuilt).toBeGreaterThan(0);
  });
});

describe('a PostgreSQL index that cannot be reached', () => {
  it('answers each search with an unavailable error naming the index and the cause, trying again every time', async () => {
    const dir = tempDir();
    const registry = new Registry().mount(filesProvider({ root: dir }) as Provider);
    const service = new SearchService(
      registry,
      {
        stateDir: tempDir('reservoir-state-'),
        postgres: { url: 'postgres://reservoir:hunter2@127.0.0.1:1/nowhere', schema: 'unused' },
      },
      silentLogger,
    );
    try {
      for (let attempt = 0; attempt < 2; attempt += 1)
        await expect(service.search({ query: 'anything', limit: 5 }, ctx())).rejects.toMatchObject({
          code: 'unavailable',
          message: expect.stringMatching(
            /^Resource unavailable: postgres:\/\/reservoir@127\.0\.0\.1:1\/nowhere unused\.index_\w+_\*: the search index cannot be opened in PostgreSQL \(.*ECONNREFUSED.*\); try again later$/,
          ),
        });
      expect(service.file).not.toContain('hunter2');
    } finally {
      await service.close();
      await registry.close();
      removeDir(dir);
    }
  });
});

if (PG_URL === '')
  console.log(
    'RESERVOIR_TEST_PG is not set: the shared PostgreSQL index tests are skipped (e.g. RESERVOIR_TEST_PG=postgres://postgres@127.0.0.1:5432/test)',
  );
