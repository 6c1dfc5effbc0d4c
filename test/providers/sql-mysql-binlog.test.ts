// Change events from the MariaDB binary log (mysql-binlog.ts), on a server this file starts with
// --log-bin (the shared one keeps log_bin off and is never reconfigured), and the fallback to the
// CHECKSUM TABLE poll — with its reason logged once — where the log is off or the user may not read it.
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Logger } from '../../src/core/log.js';
import { sqlProvider, type SqlProvider } from '../../src/providers/sql/index.js';
import { Cleanup } from '../helpers/clients.js';
import { ownMariadb, ownMariadbMissing, type OwnMariadb } from '../helpers/mariadb-server.js';
import { ctx } from './helpers.js';
import { MYSQL_URL, mysqlConfigured, waitUntil } from './sql-helpers.js';

const missing = ownMariadbMissing();
if (missing !== undefined) console.log(`binary-log tests skipped: ${missing}`);

interface Line {
  level: string;
  fields: Record<string, unknown>;
  message: string;
}

function recordingLogger(lines: Line[]): Logger {
  const at =
    (level: string) =>
    (first: Record<string, unknown> | string, message?: string): void => {
      if (typeof first === 'string') lines.push({ level, fields: {}, message: first });
      else lines.push({ level, fields: first, message: message ?? '' });
    };
  return { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') };
}

function userUrl(base: string, user: string): string {
  const url = new URL(base);
  url.username = user;
  url.password = '';
  return url.href;
}

describe.skipIf(missing !== undefined)('sql provider on MariaDB with a binary log', () => {
  const cleanup = new Cleanup();
  let server: OwnMariadb;
  let admin: mysql.Connection;

  beforeAll(async () => {
    server = await ownMariadb(cleanup, [
      '--log-bin=binlog',
      '--binlog-format=ROW',
      '--server-id=1',
    ]);
    admin = await mysql.createConnection({ uri: server.url, multipleStatements: true });
    cleanup.add(() => admin.end());
    await admin.query(`
      CREATE TABLE users (id INT PRIMARY KEY, name VARCHAR(40));
      CREATE TABLE orders (id INT PRIMARY KEY, total INT);
      INSERT INTO users VALUES (1, 'ann'), (2, 'bob');
      INSERT INTO orders VALUES (1, 10);
      CREATE USER 'logreader'@'%';
      GRANT SELECT, SHOW VIEW ON test.* TO 'logreader'@'%';
      GRANT BINLOG MONITOR ON *.* TO 'logreader'@'%';
      CREATE USER 'plain'@'%';
      GRANT SELECT, SHOW VIEW ON test.* TO 'plain'@'%';
    `);
  }, 120_000);
  afterAll(() => cleanup.run(), 60_000);

  const provider = (user: string, lines: Line[], pollIntervalMs: number): SqlProvider =>
    sqlProvider({
      url: userUrl(server.url, user),
      name: 'logged',
      queryTool: true,
      pollIntervalMs,
      statementTimeoutMs: 2000,
      logger: recordingLogger(lines),
    });

  it('reports a row change the table checksum cannot see (changed and changed back in one transaction), for its table only', async () => {
    const lines: Line[] = [];
    // a long interval: the change and its undoing commit together, between two reads of the log
    const db = provider('logreader', lines, 1000);
    const updates: string[] = [];
    const stopUsers = await db.watch('db://logged/tables/users/rows', () => updates.push('users'));
    const stopOrders = await db.watch('db://logged/tables/orders/rows', () =>
      updates.push('orders'),
    );
    expect(lines.map((l) => l.message)).toContain('sql: change events come from the binary log');
    await admin.query(
      `START TRANSACTION; UPDATE users SET name = 'changed' WHERE id = 1; UPDATE users SET name = 'ann' WHERE id = 1; COMMIT`,
    );
    await waitUntil(() => updates.includes('users'), 'users updated from the binary log');
    expect(updates).not.toContain('orders');
    stopUsers();
    stopOrders();
    await db.close();
  });

  it('sends list_changed when a table comes and goes, and tells every watch of DDL', async () => {
    const lines: Line[] = [];
    const db = provider('logreader', lines, 100);
    let listChanges = 0;
    let orderUpdates = 0;
    const stopList = await db.onListChanged(() => (listChanges += 1));
    const stopOrders = await db.watch(
      'db://logged/tables/orders/schema',
      () => (orderUpdates += 1),
    );
    await admin.query(`CREATE TABLE appeared (id INT PRIMARY KEY)`);
    await waitUntil(() => listChanges === 1, 'list_changed for a new table');
    expect((await db.list(undefined, 100, ctx())).items.map((i) => i.uri)).toContain(
      'db://logged/tables/appeared/rows',
    );
    await admin.query(`ALTER TABLE orders ADD COLUMN note VARCHAR(10)`);
    await waitUntil(() => orderUpdates > 0, 'orders updated after its ALTER');
    await admin.query(`DROP TABLE appeared`);
    await waitUntil(() => listChanges === 2, 'list_changed for a dropped table');
    stopList();
    stopOrders();
    await waitUntil(() => !db.watchStats().polling, 'polling stopped');
    await db.close();
  });

  it('lets sql_query run as a user granted BINLOG MONITOR besides SELECT (it reads, never writes)', async () => {
    const db = provider('logreader', [], 100);
    expect(await db.misconfigured()).toBeUndefined();
    expect((await db.query('SELECT name FROM users WHERE id = 2')).rows).toEqual([['bob']]);
    await db.close();
  });

  it('falls back to the checksum poll, saying why once, for a user who may not read the log', async () => {
    const lines: Line[] = [];
    const db = provider('plain', lines, 100);
    const updates: string[] = [];
    const stop = await db.watch('db://logged/tables/users/rows', () => updates.push('users'));
    const stopAgain = await db.watch('db://logged/tables/orders/rows', () => undefined);
    const fallbacks = lines.filter((l) => /not read from the database log/.test(l.message));
    expect(fallbacks).toHaveLength(1);
    expect(String(fallbacks[0]!.fields['reason'])).toMatch(/BINLOG MONITOR/);
    await admin.query(`UPDATE users SET name = 'bobby' WHERE id = 2`);
    await waitUntil(() => updates.includes('users'), 'users updated by the checksum poll');
    stop();
    stopAgain();
    await db.close();
  });
});

describe.skipIf(!mysqlConfigured())('sql provider on a MariaDB without a binary log', () => {
  it('polls checksums and logs that the server keeps no binary log', async () => {
    const lines: Line[] = [];
    const db = sqlProvider({
      url: MYSQL_URL!,
      name: 'nolog',
      pollIntervalMs: 100,
      logger: recordingLogger(lines),
    });
    const stop = await db.onListChanged(() => undefined);
    const fallback = lines.find((l) => /not read from the database log/.test(l.message));
    expect(fallback?.fields['reason']).toBe('the server keeps no binary log (log_bin is OFF)');
    expect(db.watchStats().polling).toBe(true);
    stop();
    await db.close();
  });
});
