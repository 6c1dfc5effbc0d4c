// Issue 29, item 2: a MySQL / MariaDB user that sql_query refuses (root: ALL PRIVILEGES) is reported
// when the source starts — an error-level log line of `reservoir serve` naming the source, the user
// and the privilege, before any query; /readyz names the source not ready with the reason;
// `reservoir check --connect` fails it — while a user granted only SELECT passes all three.
// Skipped without RESERVOIR_TEST_MYSQL.
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Cleanup, newClient, spawnHttpServer } from '../helpers/clients.js';
import { checkConnect, readyzWithToken, sourceErrorLine } from '../helpers/check-connect.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';
import { MYSQL_URL, mysqlConfigured } from '../providers/sql-helpers.js';

const TOKEN = randomBytes(16).toString('hex');

describe.skipIf(!mysqlConfigured())('a MySQL user sql_query refuses, at start', () => {
  const suffix = randomBytes(4).toString('hex');
  const database = `reservoir_mysql_s_${suffix}`;
  const reader = `reservoir_rs_${suffix}`;
  const cleanup = new Cleanup();
  let admin: mysql.Connection;
  let dir: string;

  const urlFor = (user: string | undefined): string => {
    const url = new URL(MYSQL_URL!);
    url.pathname = `/${database}`;
    if (user !== undefined) {
      url.username = user;
      url.password = 'pw';
    }
    return url.href;
  };

  beforeAll(async () => {
    await ensureBuilt();
    admin = await mysql.createConnection({ uri: MYSQL_URL!, multipleStatements: true });
    await admin.query(
      `CREATE DATABASE \`${database}\`; CREATE TABLE \`${database}\`.orders (id INT PRIMARY KEY)`,
    );
    await admin.query(
      `CREATE USER '${reader}'@'%' IDENTIFIED BY 'pw'; GRANT SELECT ON \`${database}\`.* TO '${reader}'@'%'`,
    );
    dir = makeTempDir('reservoir-sql-mysql-start-');
  }, 300_000); // ensureBuilt may rebuild dist/ first

  afterAll(async () => {
    await cleanup.run();
    await admin
      ?.query(`DROP DATABASE IF EXISTS \`${database}\`; DROP USER IF EXISTS '${reader}'@'%'`)
      .catch(() => undefined);
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

  it('reports root (ALL PRIVILEGES) at start, before any query (log, /readyz, check --connect), and still lists the source while sql_query refuses', async () => {
    const why =
      /sql_query will not run as user root@\S+ \(it may write or act beyond reading: ALL PRIVILEGES ON \*\.\*/;
    const config = configFor('myroot', urlFor(undefined));
    const server = await spawnHttpServer([], ['--config', config], cleanup);
    const logged = await sourceErrorLine(server, 'db://myroot/');
    expect(logged, server.stderr()).toBeDefined();
    expect(String(logged!['msg'])).toMatch(why);
    expect(String(logged!['msg'])).toMatch(
      /connect as a user granted only SELECT .*docs\/providers\/sql\.md/,
    );
    const ready = await readyzWithToken(server, TOKEN);
    expect(ready.status).toBe(503);
    expect(ready.body.sources).toEqual([
      expect.objectContaining({
        source: 'db://myroot/',
        ready: false,
        reason: 'error',
        message: expect.stringMatching(why),
      }),
    ]);
    const client = newClient('2026');
    await client.connect(
      new StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
      }),
    );
    const listed = await client.listResources();
    expect(listed.resources.map((r) => r.uri)).toContain('db://myroot/tables/orders/rows');
    const refused = await client.callTool({
      name: 'sql_query_myroot',
      arguments: { sql: 'SELECT 1' },
    });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toMatch(/ALL PRIVILEGES/);
    await client.close();
    await server.stop();

    const run = await checkConnect(config);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toMatch(/FAIL db:\/\/myroot\/ .*sql_query will not run as user root@/);
  }, 120_000);

  it('lets a user granted only SELECT start ready, with nothing logged at error', async () => {
    const config = configFor('myreader', urlFor(reader));
    const server = await spawnHttpServer([], ['--config', config], cleanup);
    const ready = await readyzWithToken(server, TOKEN);
    expect(ready.status).toBe(200);
    expect(ready.body.sources).toEqual([
      expect.objectContaining({ source: 'db://myreader/', ready: true }),
    ]);
    const run = await checkConnect(config);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^ok {3}db:\/\/myreader\//m);
    await server.stop();
    expect(
      server
        .stderr()
        .split('\n')
        .filter((line) => line.includes('"level":50')),
    ).toEqual([]);
    expect(server.stderr()).not.toContain(':pw@');
  }, 120_000);
});
