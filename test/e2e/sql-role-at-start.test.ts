// Issue 25, item 4: a PostgreSQL role that sql_query refuses (a superuser; a role with write grants)
// is reported when the source starts — an error-level log line of `reservoir serve` naming the
// source, the role and why, before any query; /readyz names the source not ready with the reason;
// `reservoir check --connect` fails it — while a role that may only read passes all three. Skipped
// without RESERVOIR_TEST_PG (its `postgres` user is a superuser).
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Cleanup, newClient, spawnHttpServer } from '../helpers/clients.js';
import { checkConnect, readyzWithToken, sourceErrorLine } from '../helpers/check-connect.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';

const PG_URL = process.env['RESERVOIR_TEST_PG'];
const TOKEN = randomBytes(16).toString('hex');

describe.skipIf(PG_URL === undefined || PG_URL === '')(
  'a SQL role sql_query refuses, at start',
  () => {
    const suffix = randomBytes(4).toString('hex');
    const schema = `reservoir_role_${suffix}`;
    const writer = `reservoir_writer_${suffix}`;
    const reader = `reservoir_reader_${suffix}`;
    const cleanup = new Cleanup();
    let admin: pg.Client;
    let dir: string;

    const roleUrl = (role: string): string => {
      const url = new URL(PG_URL!);
      url.username = role;
      url.password = 'pw';
      return url.href;
    };

    beforeAll(async () => {
      await ensureBuilt();
      admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      await admin.query(
        `CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.orders (id int PRIMARY KEY); CREATE TABLE ${schema}.notes (id int PRIMARY KEY)`,
      );
      for (const role of [writer, reader]) {
        await admin.query(
          `CREATE ROLE ${role} LOGIN PASSWORD 'pw' NOSUPERUSER; GRANT USAGE ON SCHEMA ${schema} TO ${role}; GRANT SELECT ON ALL TABLES IN SCHEMA ${schema} TO ${role}`,
        );
      }
      await admin.query(`GRANT INSERT, UPDATE ON ${schema}.orders TO ${writer}`);
      dir = makeTempDir('reservoir-sql-role-');
    }, 300_000); // ensureBuilt may rebuild dist/ first

    afterAll(async () => {
      await cleanup.run();
      for (const role of [writer, reader])
        await admin
          ?.query(
            `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '${role}'`,
          )
          .catch(() => undefined);
      await admin?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
      for (const role of [writer, reader])
        await admin?.query(`DROP ROLE IF EXISTS ${role}`).catch(() => undefined);
      await admin?.end();
      removeTree(dir);
    });

    function configFor(name: string, url: string): string {
      const path = join(dir, `${name}.yaml`);
      const sha256 = createHash('sha256').update(TOKEN).digest('hex');
      writeFileSync(
        path,
        [
          'sources:',
          '  - type: sql',
          `    name: ${name}`,
          `    url: "${url}"`,
          `    schema: ${schema}`,
          '    queryTool: true',
          'server:',
          '  http:',
          '    auth:',
          '      tokens:',
          `        - { name: ops, sha256: "${sha256}" }`,
          '',
        ].join('\n'),
      );
      return path;
    }

    const cases = [
      {
        what: 'a superuser',
        name: 'pgsuper',
        url: () => PG_URL!,
        why: /role postgres \(superuser\b/,
      },
      {
        what: 'a role with write grants',
        name: 'pgwriter',
        url: () => roleUrl(writer),
        why: new RegExp(`role ${writer} \\(write grants on ${schema}\\.orders\\)`),
      },
    ];

    for (const { what, name, url, why } of cases) {
      it(`reports ${what} at start, before any query (log, /readyz, check --connect), and still lists the source while sql_query refuses`, async () => {
        const config = configFor(name, url());
        const server = await spawnHttpServer([], ['--config', config], cleanup);
        const logged = await sourceErrorLine(server, `db://${name}/`);
        expect(logged, server.stderr()).toBeDefined();
        expect(String(logged!['msg'])).toMatch(why);
        expect(String(logged!['msg'])).toMatch(
          /connect as a role that may only read .*docs\/providers\/sql\.md/,
        );
        expect(server.stderr()).not.toContain(':pw@');
        const ready = await readyzWithToken(server, TOKEN);
        expect(ready.status).toBe(503);
        expect(ready.body.sources).toEqual([
          expect.objectContaining({
            source: `db://${name}/`,
            ready: false,
            reason: 'error',
            message: expect.stringMatching(why),
          }),
        ]);
        // Not an outage: lists keep the source (its schema and tables are Reservoir's own reads); only sql_query refuses.
        const client = newClient('2026');
        await client.connect(
          new StreamableHTTPClientTransport(new URL(server.url), {
            requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
          }),
        );
        const listed = await client.listResources();
        expect(listed.resources.map((r) => r.uri)).toContain(`db://${name}/tables/orders/rows`);
        expect(listed._meta?.['reservoir/skippedSources']).toBeUndefined();
        const refused = await client.callTool({
          name: `sql_query_${name}`,
          arguments: { sql: 'SELECT 1' },
        });
        expect(refused.isError).toBe(true);
        expect(JSON.stringify(refused.content)).toMatch(why);
        await client.close();
        await server.stop();

        const run = await checkConnect(config);
        expect(run.code, run.stderr).toBe(1);
        expect(run.stdout).toMatch(new RegExp(`FAIL db://${name}/ .*${why.source}`));
      }, 120_000);
    }

    it('lets a role that may only read start ready, with nothing logged at error', async () => {
      const config = configFor('pgreader', roleUrl(reader));
      const server = await spawnHttpServer([], ['--config', config], cleanup);
      const ready = await readyzWithToken(server, TOKEN);
      expect(ready.status).toBe(200);
      expect(ready.body.sources).toEqual([
        expect.objectContaining({ source: 'db://pgreader/', ready: true }),
      ]);
      const run = await checkConnect(config);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/^ok {3}db:\/\/pgreader\//m);
      await server.stop();
      expect(
        server
          .stderr()
          .split('\n')
          .filter((line) => line.includes('"level":50')),
      ).toEqual([]);
    }, 120_000);
  },
);
