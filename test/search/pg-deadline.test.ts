// The feeder's statements to a PostgreSQL index have a deadline of their own (RESERVOIR_TEST_PG;
// skipped with a message when unset): a write blocked by a lock another session holds on the
// index's tables is stopped by PostgreSQL at `statementTimeoutMs`, the feeder logs what ran past
// its deadline and goes on, and once the lock is gone a later change is indexed as usual.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Logger } from '../../src/core/log.js';
import { silentLogger } from '../../src/core/log.js';
import { Registry } from '../../src/core/registry.js';
import type { Provider } from '../../src/core/types.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { SearchService } from '../../src/search/service.js';
import { eventually } from '../helpers/eventually.js';
import { ctx, removeDir, tempDir, writeTree } from '../providers/helpers.js';
import { PG_URL, testSchema } from './backends.js';

const SCHEMA = testSchema();
let root: string;

afterAll(async () => {
  if (PG_URL === '') return;
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
  await client.end();
});

describe.skipIf(PG_URL === '')('the feeder of a PostgreSQL index', () => {
  beforeAll(() => {
    root = tempDir();
    writeTree(root, { 'docs/heron.md': 'the grey heron waits by the water\n' });
  });

  afterAll(() => removeDir(root));

  it('stops a write blocked by a lock past its statement deadline, logs why, and indexes later changes', async () => {
    let timedOut: (error: Error) => void = () => undefined;
    const logged = new Promise<Error>((resolve) => (timedOut = resolve));
    const logger: Logger = {
      ...silentLogger,
      warn: (obj: unknown) => {
        const error = (obj as { err?: unknown } | undefined)?.err;
        if (error instanceof Error && error.name === 'IndexStatementTimeout') timedOut(error);
      },
    } as Logger;
    const registry = new Registry().mount(
      filesProvider({ root, watch: { settleMs: 10 } }) as Provider,
    );
    const service = new SearchService(
      registry,
      {
        stateDir: tempDir('reservoir-state-'),
        postgres: { url: PG_URL, schema: SCHEMA, leaseTickMs: 100, statementTimeoutMs: 300 },
      },
      logger,
    );
    const locker = new pg.Client({ connectionString: PG_URL });
    await locker.connect();
    try {
      await service.ready;
      const location = service.file;
      const docs = location.slice(location.lastIndexOf(' ') + 1).replace(/_\*$/, '_docs');
      const [schema, table] = docs.split('.') as [string, string];
      // Another session holds the documents table: every statement of the feeder on it waits.
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE "${schema}"."${table}" IN ACCESS EXCLUSIVE MODE`);
      writeFileSync(join(root, 'docs/egret.md'), 'an egret, white, by the same water\n');
      const error = await logged;
      expect(error.message).toMatch(
        /^search index: .+ \(.+\) ran past its deadline of 300 ms and was stopped \(is a lock held on the index's tables, or PostgreSQL overloaded\?\)$/,
      );
      expect((error.cause as { code?: string }).code).toBe('57014');
      await locker.query('ROLLBACK');
      // The feeder is not stuck: the next change is written.
      writeFileSync(join(root, 'docs/stork.md'), 'a white stork nests on the roof\n');
      await eventually(
        async () => (await service.search({ query: 'stork', limit: 5 }, ctx())).hits.length === 1,
        'the stork to be indexed after the lock was released',
        { deadlineMs: 20_000, stepMs: 50 },
      );
    } finally {
      await locker.end();
      await service.close();
      await registry.close();
    }
  });
});

if (PG_URL === '')
  console.log(
    'RESERVOIR_TEST_PG is not set: the PostgreSQL feeder deadline test is skipped (e.g. RESERVOIR_TEST_PG=postgres://postgres@127.0.0.1:5432/test)',
  );
