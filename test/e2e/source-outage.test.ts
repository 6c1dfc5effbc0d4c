// One failing source never hides the others, end to end: `reservoir serve --config` with three
// sources — a files root, a SQLite file and a PostgreSQL schema reached through a TCP proxy this
// test controls (the shared PostgreSQL itself is never touched) — through the real SDK client, over
// stdio and HTTP, in both eras. With the proxy down, `resources/list`, `list_resources` and
// `find_resources` answer the files and SQLite resources with a `_meta` note naming the PostgreSQL
// source (its root, never its URL); /readyz reports it; the outage is logged once; when the proxy
// comes back the source's resources return without a restart.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { loadSqliteDriver } from '../../src/core/sqlite-driver.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Cleanup,
  connectHttp,
  connectStdio,
  label,
  listAllPages,
  spawnHttpServer,
  TARGETS,
  type Target,
} from '../helpers/clients.js';
import { hostPortOf, TcpProxy, throughProxy } from '../helpers/tcp-proxy.js';
import { removeDir, tempDir, writeTree } from '../providers/helpers.js';
import { PG_URL } from '../providers/sql-helpers.js';
import { eventuallyAccepted } from '../helpers/eventually.js';

/** A source's state changes asynchronously (a probe, a backoff of up to 5 s): a generous deadline. */
const OUTAGE_WAIT = { deadlineMs: 30_000, stepMs: 50 };

const Database = loadSqliteDriver();

const META_KEY = 'reservoir/skippedSources';
const PG_SOURCE = 'db://pgstock/';

interface Listing {
  uris: string[];
  skipped: unknown[];
  /** Each page's `_meta`, as received. */
  metas: (Record<string, unknown> | undefined)[];
}

/** Every page of `resources/list`, with the sources any page said it went without. */
async function listEverything(client: Client): Promise<Listing> {
  const pages = await listAllPages(client);
  const uris = pages.flatMap((page) => page.resources.map((r) => r.uri));
  const skipped = pages.flatMap(
    (page) =>
      ((page._meta as Record<string, unknown> | undefined)?.[META_KEY] as unknown[] | undefined) ??
      [],
  );
  return {
    uris,
    skipped,
    metas: pages.map((page) => page._meta as Record<string, unknown> | undefined),
  };
}

const hasPg = (listing: Listing): boolean => listing.uris.some((uri) => uri.startsWith(PG_SOURCE));

describe.skipIf(PG_URL === undefined || PG_URL === '')(
  'one failing source never hides the others',
  () => {
    const schema = `outage_${process.pid}_${Date.now().toString(36)}`;
    let admin: pg.Client;
    let dir: string;
    let config: string;
    let proxy: TcpProxy;

    beforeAll(async () => {
      admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      await admin.query(
        `CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.stock (id int PRIMARY KEY, label text); INSERT INTO ${schema}.stock VALUES (1, 'bolt')`,
      );
      const target = hostPortOf(PG_URL!);
      proxy = new TcpProxy(target.host, target.port);
      await proxy.up();

      dir = tempDir('reservoir-outage-');
      writeTree(join(dir, 'docs'), { 'a.md': '# a\n', 'b.md': '# b\n' });
      const db = new Database(join(dir, 'shop.db'));
      db.exec(
        `CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT); INSERT INTO items (label) VALUES ('apple');`,
      );
      db.close();
      config = join(dir, 'reservoir.json');
      const pgUrl = throughProxy(PG_URL!, proxy);
      writeFileSync(
        config,
        JSON.stringify({
          sources: [
            { type: 'files', root: 'docs' },
            { type: 'sql', path: 'shop.db', name: 'shop' },
            { type: 'sql', url: pgUrl, name: 'pgstock', schema },
          ],
        }),
      );
    });

    afterAll(async () => {
      await proxy?.down();
      await admin?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
      await admin?.end();
      removeDir(dir);
    });

    describe.each(TARGETS)('$transport $era', (target: Target) => {
      const cleanup = new Cleanup();
      let client: Client;
      let stderr: () => string;
      let readyz:
        | (() => Promise<{
            status: number;
            body: {
              status: string;
              sources: { source: string; ready: boolean; reason?: string; message?: string }[];
            };
          }>)
        | undefined;

      beforeAll(async () => {
        await proxy.up();
        if (target.transport === 'stdio') {
          const connection = await connectStdio(target.era, [], ['--config', config], cleanup);
          client = connection.client;
          stderr = connection.stderr;
        } else {
          const server = await spawnHttpServer(
            [],
            ['--config', config, '--log-level', 'info'],
            cleanup,
          );
          client = (await connectHttp(target.era, server.url, cleanup)).client;
          stderr = server.stderr;
          const url = new URL('/readyz', server.url);
          readyz = async () => {
            const response = await fetch(url);
            return { status: response.status, body: (await response.json()) as never };
          };
        }
      });

      afterAll(async () => {
        await cleanup.run();
        await proxy.up();
      });

      it(`answers every other source with a _meta note naming the down one, reports it, and lists it again once it is back (${label(target)})`, async () => {
        // The first connection to PostgreSQL can outlast a list's wait on a loaded machine, and that
        // list rightly skips it: start from a list with every source up, as after the outage below.
        const all = await eventuallyAccepted(
          () => listEverything(client),
          (l) => l.skipped.length === 0,
          'a list with every source up',
          OUTAGE_WAIT,
        );
        expect(all.skipped).toEqual([]);
        expect(all.uris).toEqual(
          expect.arrayContaining([
            expect.stringMatching(/\/docs\/a\.md$/),
            'db://shop/schema',
            'db://pgstock/schema',
            'db://pgstock/tables/stock/rows',
          ]),
        );
        const others = all.uris.filter((uri) => !uri.startsWith(PG_SOURCE));
        if (readyz !== undefined) expect((await readyz()).status).toBe(200);

        await proxy.down();
        // The provider may answer from its schema cache for a moment: wait until it reports the outage.
        const down = await eventuallyAccepted(
          () => listEverything(client),
          (l) => l.skipped.length > 0,
          'the list to skip the PostgreSQL source',
          OUTAGE_WAIT,
        );
        expect(down.skipped).toEqual([{ source: PG_SOURCE, reason: 'unavailable' }]);
        expect(down.uris).toEqual(others);
        // Our note joins the SDK's own `_meta` (a 2026-07-28 result names the server there), never replaces it.
        if (target.era === '2026')
          for (const meta of down.metas)
            expect(meta?.['io.modelcontextprotocol/serverInfo']).toMatchObject({
              name: 'reservoir',
            });
        // Lists again during the outage: still answered, and the outage is logged once, not per request.
        expect((await listEverything(client)).uris).toEqual(others);

        const tool = await client.callTool({ name: 'list_resources', arguments: { limit: 1000 } });
        expect(tool.isError).toBeFalsy();
        const listed = tool.structuredContent as {
          resources: { uri: string }[];
          skippedSources?: unknown;
        };
        expect(listed.resources.map((r) => r.uri)).toEqual(others);
        expect(listed.skippedSources).toEqual([{ source: PG_SOURCE, reason: 'unavailable' }]);
        expect((tool._meta as Record<string, unknown>)[META_KEY]).toEqual([
          { source: PG_SOURCE, reason: 'unavailable' },
        ]);
        expect((tool.content as { text: string }[])[0]!.text).toContain(
          `Left out because they cannot answer right now: ${PG_SOURCE}`,
        );

        const found = await client.callTool({ name: 'find_resources', arguments: { name: '*' } });
        expect(found.isError).toBeFalsy();
        const matches = found.structuredContent as {
          resources: { uri: string }[];
          skippedSources?: unknown;
        };
        expect(matches.resources.map((r) => r.uri)).toEqual(others);
        expect(matches.skippedSources).toEqual([{ source: PG_SOURCE, reason: 'unavailable' }]);

        if (readyz !== undefined) {
          const report = await readyz();
          expect(report.status).toBe(503);
          const pgState = report.body.sources.find((s) => s.source === PG_SOURCE);
          expect(pgState).toMatchObject({ ready: false, reason: 'unavailable' });
          expect(JSON.stringify(report.body)).not.toContain(String(proxy.port) + '/test');
          expect(
            report.body.sources.filter((s) => s.source !== PG_SOURCE).every((s) => s.ready),
          ).toBe(true);
        }
        const failures = stderr()
          .split('\n')
          .filter((line) => line.includes('source failed') && line.includes(PG_SOURCE));
        expect(failures).toHaveLength(1);
        expect(failures[0]).not.toContain('postgres://');

        await proxy.up();
        const back = await eventuallyAccepted(
          () => listEverything(client),
          hasPg,
          'the PostgreSQL source to be listed again',
          OUTAGE_WAIT,
        );
        expect(back.skipped).toEqual([]);
        expect(back.uris).toEqual(all.uris);
        if (readyz !== undefined) expect((await readyz()).status).toBe(200);
        if (target.transport === 'http') {
          await eventuallyAccepted(
            async () => stderr(),
            (text) => text.includes('source answers again'),
            'the recovery log line',
            OUTAGE_WAIT,
          );
        }
      });
    });
  },
);
