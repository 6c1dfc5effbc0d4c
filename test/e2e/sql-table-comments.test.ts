// A table's comment leads its resource's description (PostgreSQL `COMMENT ON TABLE`, MySQL /
// MariaDB `COMMENT=`), through the real SDK client in both eras; a table without one is described
// as before.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { eventuallyAccepted } from '../helpers/eventually.js';
import { Cleanup, connectStdio, ERAS, listAllPages } from '../helpers/clients.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';
import { MYSQL_URL, mysqlConfigured, PG_URL } from '../providers/sql-helpers.js';

const suffix = randomBytes(4).toString('hex');
const COMMENT = 'Orders placed by customers, one row per order';

async function descriptions(
  era: (typeof ERAS)[number],
  config: string,
  cleanup: Cleanup,
): Promise<Map<string, string | undefined>> {
  const { client } = await connectStdio(era, [], ['--config', config], cleanup);
  // The first connection to the database can outlast a list's wait on a loaded machine, and that
  // list rightly skips the source: wait for a list that holds both tables.
  const resources = await eventuallyAccepted(
    async () => (await listAllPages(client)).flatMap((page) => page.resources),
    (listed) => ['orders', 'plain'].every((name) => listed.some((r) => r.name === name)),
    'a list holding both tables',
    { deadlineMs: 30_000, stepMs: 50 },
  );
  return new Map(resources.map((r) => [r.name, r.description]));
}

describe.skipIf(PG_URL === undefined || PG_URL === '')('PostgreSQL table comments', () => {
  const schema = `reservoir_comments_${suffix}`;
  const cleanup = new Cleanup();
  let admin: pg.Client;
  let dir: string;
  let config: string;

  beforeAll(async () => {
    await ensureBuilt();
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.query(`CREATE TABLE ${schema}.orders (id int PRIMARY KEY)`);
    await admin.query(`CREATE TABLE ${schema}.plain (id int PRIMARY KEY)`);
    await admin.query(`COMMENT ON TABLE ${schema}.orders IS '${COMMENT}'`);
    dir = makeTempDir('reservoir-pg-comments-');
    config = join(dir, 'reservoir.yaml');
    writeFileSync(
      config,
      [
        'sources:',
        '  - type: sql',
        `    url: "${PG_URL!}"`,
        '    name: shop',
        `    schema: ${schema}`,
        '    allowPrivilegedRole: true',
        '',
      ].join('\n'),
    );
  }, 300_000);

  afterAll(async () => {
    await cleanup.run();
    await admin?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    await admin?.end();
    removeTree(dir);
  });

  it.each(ERAS)('describes a commented table by its comment first (%s era)', async (era) => {
    const byName = await descriptions(era, config, cleanup);
    expect(byName.get('orders')).toMatch(new RegExp(`^${COMMENT}\\n\\nRows of table orders: `));
    expect(byName.get('plain')).toMatch(/^Rows of table plain: /);
  });
});

describe.skipIf(!mysqlConfigured())('MySQL / MariaDB table comments', () => {
  const database = `reservoir_comments_${suffix}`;
  const cleanup = new Cleanup();
  let admin: mysql.Connection;
  let dir: string;
  let config: string;

  beforeAll(async () => {
    await ensureBuilt();
    admin = await mysql.createConnection({ uri: MYSQL_URL!, multipleStatements: true });
    await admin.query(
      `CREATE DATABASE \`${database}\`;
       CREATE TABLE \`${database}\`.orders (id INT PRIMARY KEY) COMMENT='${COMMENT}';
       CREATE TABLE \`${database}\`.plain (id INT PRIMARY KEY)`,
    );
    const url = new URL(MYSQL_URL!);
    url.pathname = `/${database}`;
    dir = makeTempDir('reservoir-mysql-comments-');
    config = join(dir, 'reservoir.yaml');
    writeFileSync(
      config,
      [
        'sources:',
        '  - type: sql',
        `    url: "${url.href}"`,
        '    name: shop',
        '    allowPrivilegedRole: true',
        '',
      ].join('\n'),
    );
  }, 300_000);

  afterAll(async () => {
    await cleanup.run();
    await admin?.query(`DROP DATABASE IF EXISTS \`${database}\``).catch(() => undefined);
    await admin?.end();
    removeTree(dir);
  });

  it.each(ERAS)('describes a commented table by its comment first (%s era)', async (era) => {
    const byName = await descriptions(era, config, cleanup);
    expect(byName.get('orders')).toMatch(new RegExp(`^${COMMENT}\\n\\nRows of table orders: `));
    expect(byName.get('plain')).toMatch(/^Rows of table plain: /);
  });
});
