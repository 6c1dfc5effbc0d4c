// Issue 29: a MySQL / MariaDB source that cannot connect is named with the server's own reason by
// `reservoir check --connect` (FAIL line, exit 1) and `reservoir list` (left out, exit 1): a wrong
// password, a user that does not exist, a refused connection, an unknown database — each as
// `unavailable` (as PostgreSQL's failed logins are), and no password printed. A healthy files
// source beside it still lists. Skipped without RESERVOIR_TEST_MYSQL.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_PATH, ensureBuilt } from '../helpers/build.js';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { MYSQL_URL, mysqlConfigured } from '../providers/sql-helpers.js';

/** A port nothing listens on: bound, then closed. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI_PATH, ...args], { timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({
        code: error === null ? 0 : typeof error.code === 'number' ? error.code : null,
        stdout,
        stderr,
      }),
    );
  });
}

describe.skipIf(!mysqlConfigured())('MySQL connection failures in check --connect and list', () => {
  const suffix = randomBytes(4).toString('hex');
  const user = `mysql2_cf_${suffix}`;
  const database = `mysql2_cf_${suffix}`;
  let admin: mysql.Connection;
  let dir: string;
  const cases: { name: string; url: () => Promise<string>; reason: RegExp }[] = [
    {
      name: 'badpass',
      url: async () => urlWith({ user, password: 'not-the-password-hunter2' }),
      reason: /Access denied for user/,
    },
    {
      name: 'nouser',
      url: async () => urlWith({ user: `${user}_x`, password: 'hunter2' }),
      reason: /Access denied for user/,
    },
    {
      name: 'refused',
      url: async () => urlWith({ port: await closedPort() }),
      reason: /ECONNREFUSED/,
    },
    {
      name: 'nodb',
      url: async () => urlWith({ database: `${database}_missing` }),
      reason: /Unknown database '.*_missing'/,
    },
  ];

  function urlWith(change: {
    user?: string;
    password?: string;
    port?: number;
    database?: string;
  }): string {
    const url = new URL(MYSQL_URL!);
    if (change.user !== undefined) url.username = change.user;
    if (change.password !== undefined) url.password = change.password;
    if (change.port !== undefined) url.port = String(change.port);
    url.pathname = `/${change.database ?? database}`;
    return url.href;
  }

  beforeAll(async () => {
    await ensureBuilt();
    admin = await mysql.createConnection({ uri: MYSQL_URL!, multipleStatements: true });
    await admin.query(
      `CREATE DATABASE \`${database}\`; CREATE USER '${user}'@'%' IDENTIFIED BY 'pw'; GRANT SELECT ON \`${database}\`.* TO '${user}'@'%'`,
    );
    dir = makeTempDir('reservoir-sql-mysql-cf-');
    writeTree(dir, { 'docs/a.md': '# a\n' });
  }, 300_000); // ensureBuilt may rebuild dist/ first

  afterAll(async () => {
    await admin
      ?.query(`DROP DATABASE IF EXISTS \`${database}\`; DROP USER IF EXISTS '${user}'@'%'`)
      .catch(() => undefined);
    await admin?.end();
    removeTree(dir);
  });

  for (const c of cases) {
    it(`${c.name}: check --connect fails the source with its reason, list leaves it out with it`, async () => {
      const config = join(dir, `${c.name}.yaml`);
      writeFileSync(
        config,
        [
          'sources:',
          '  - type: files',
          '    root: docs',
          '  - type: sql',
          '    name: my',
          `    url: "${await c.url()}"`,
          '',
        ].join('\n'),
      );
      const checked = await cli(['check', '--connect', '--config', config]);
      expect(checked.code, checked.stderr).toBe(1);
      const fail = checked.stdout.split('\n').find((line) => line.startsWith('FAIL'));
      expect(fail, checked.stdout).toMatch(/^FAIL db:\/\/my\/ +.* \(after \d+ ms\)$/);
      expect(fail).toMatch(c.reason);
      expect(checked.stdout).toMatch(/^ok {3}file:\/\/\/.*\/docs\/ +\d+ ms$/m);
      const listed = await cli(['list', '--config', config]);
      expect(listed.code).toBe(1);
      expect(listed.stdout).toMatch(/\/docs\/a\.md/);
      const left = listed.stderr.split('\n').filter(Boolean);
      expect(left, listed.stderr).toHaveLength(1);
      expect(left[0]).toMatch(
        /^reservoir list: left out db:\/\/my\/: .+ \(unavailable\); its resources are missing$/,
      );
      expect(left[0]).toMatch(c.reason);
      for (const output of [checked.stdout, checked.stderr, listed.stdout, listed.stderr])
        expect(output).not.toContain('hunter2');
    }, 120_000);
  }
});
