// Pins what a PostgreSQL connection dying mid-query does to the process: nothing. The query fails
// as unavailable and the server goes on (a pooled connection checked out when its socket ends used
// to emit an unhandled 'error' that ended the process). The database is reached through a TCP proxy
// this test cuts; the shared PostgreSQL itself is never touched. Skipped without RESERVOIR_TEST_PG.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnavailableError } from '../../src/core/errors.js';
import { sqlProvider, type SqlProvider } from '../../src/providers/sql/index.js';
import { hostPortOf, TcpProxy, throughProxy } from '../helpers/tcp-proxy.js';
import { ctx, rejection } from './helpers.js';
import { PG_URL, waitUntil } from './sql-helpers.js';
import { eventually } from '../helpers/eventually.js';

describe.skipIf(PG_URL === undefined || PG_URL === '')(
  'a PostgreSQL connection that dies mid-query',
  () => {
    const marker = `outage_probe_${process.pid}_${Date.now().toString(36)}`;
    let admin: pg.Client;
    let proxy: TcpProxy;
    let provider: SqlProvider;

    beforeAll(async () => {
      admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      const target = hostPortOf(PG_URL!);
      proxy = new TcpProxy(target.host, target.port);
      await proxy.up();
      provider = sqlProvider({
        url: throughProxy(PG_URL!, proxy),
        name: 'midquery',
        queries: { slow: { sql: `SELECT pg_sleep(5) AS "${marker}"` } },
      });
    });

    afterAll(async () => {
      await provider?.close();
      await proxy?.down();
      await admin?.end();
    });

    it('fails that query as unavailable and leaves the process running, then answers again through the restored link', async () => {
      const uncaught: unknown[] = [];
      const onUncaught = (error: unknown): void => void uncaught.push(error);
      process.on('uncaughtException', onUncaught);
      try {
        const reading = provider.read('db://midquery/queries/slow', ctx());
        let running = false;
        const probe = async (): Promise<void> => {
          const result = await admin.query(
            'SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE $1 AND pid <> pg_backend_pid()',
            [`%${marker}%`],
          );
          running = (result.rows[0] as { n: number }).n > 0;
        };
        await waitUntil(() => {
          void probe();
          return running;
        }, 'the slow query to run');
        await proxy.down();
        expect(await rejection(reading)).toBeInstanceOf(UnavailableError);
        await new Promise((resolve) => setImmediate(resolve));
        expect(uncaught).toEqual([]);
        await proxy.up();
        // The provider backs off after a failure (at most 5 s): it answers again once that has passed.
        await eventually(
          async () => (await provider.ready(), true),
          'the provider to answer again after its backoff',
          { deadlineMs: 15_000, stepMs: 50 },
        );
        expect(uncaught).toEqual([]);
      } finally {
        process.off('uncaughtException', onUncaught);
      }
    });
  },
);
