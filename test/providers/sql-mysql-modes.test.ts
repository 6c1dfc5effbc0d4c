// MySQL-compatible modes where behaviour differs, on a MariaDB of this file's own (the shared server
// is never reconfigured) started with a global sql_mode of ANSI_QUOTES and NO_BACKSLASH_ESCAPES and
// lower_case_table_names = 1: every session is lexed as the guard lexes (both modes dropped), a
// statement whose meaning hangs on them is still refused or read the guard's way, and table names
// are the one spelling the server lists — any other case names no table, under access rules too.
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotFoundError, type ReservoirError } from '../../src/core/errors.js';
import { sqlProvider, type SqlProvider } from '../../src/providers/sql/index.js';
import { Cleanup } from '../helpers/clients.js';
import { ownMariadb, ownMariadbMissing } from '../helpers/mariadb-server.js';
import { ctx, rejection } from './helpers.js';
import { readJson, type RowsDoc } from './sql-helpers.js';

const missing = ownMariadbMissing();
if (missing !== undefined) console.log(`MySQL mode tests skipped: ${missing}`);

describe.skipIf(missing !== undefined)(
  'sql provider on a MariaDB with ANSI_QUOTES, NO_BACKSLASH_ESCAPES and lower_case_table_names = 1',
  () => {
    const cleanup = new Cleanup();
    let db: SqlProvider;
    let admin: mysql.Connection;

    beforeAll(async () => {
      const server = await ownMariadb(cleanup, [
        '--sql-mode=ANSI_QUOTES,NO_BACKSLASH_ESCAPES,STRICT_TRANS_TABLES',
        '--lower-case-table-names=1',
      ]);
      admin = await mysql.createConnection({ uri: server.url, multipleStatements: true });
      cleanup.add(() => admin.end());
      // Under the server's own modes: "…" names an identifier, and a backslash is a plain character.
      await admin.query(`
        CREATE TABLE "Secret" (id INT PRIMARY KEY, note VARCHAR(40));
        INSERT INTO Secret VALUES (1, 'back\\slash'), (2, 'it''s');
        CREATE USER 'reader'@'%';
        GRANT SELECT, SHOW VIEW ON test.* TO 'reader'@'%';
      `);
      const url = new URL(server.url);
      url.username = 'reader';
      db = sqlProvider({ url: url.href, name: 'm', queryTool: true, statementTimeoutMs: 2000 });
    }, 120_000);
    afterAll(async () => {
      await db?.close();
      await cleanup.run();
    }, 60_000);

    it('gives each session the modes the guard lexes by, whatever the server has', async () => {
      expect(await db.misconfigured()).toBeUndefined();
      const { rows } = await db.query('SELECT @@GLOBAL.sql_mode, @@SESSION.sql_mode');
      expect(String(rows[0]![0])).toMatch(/ANSI_QUOTES/);
      expect(String(rows[0]![0])).toMatch(/NO_BACKSLASH_ESCAPES/);
      expect(String(rows[0]![1])).not.toMatch(/ANSI_QUOTES|NO_BACKSLASH_ESCAPES/);
      // "…" is a string and \' an escaped quote, as the guard read them
      expect((await db.query(`SELECT "Secret", 'a\\'b', LENGTH('\\\\')`)).rows).toEqual([
        ['Secret', "a'b", 1],
      ]);
      // the stored backslash reads back as stored
      expect((await db.query('SELECT note FROM secret WHERE id = 1')).rows).toEqual([
        ['back\\slash'],
      ]);
    });

    it('refuses what would hide behind the modes: a quote the guard and a NO_BACKSLASH_ESCAPES server would end in different places', async () => {
      // Under NO_BACKSLASH_ESCAPES this string would end at \' and the SLEEP would run; lexed with
      // escapes (the session's mode), it is one string — and the guard, lexing the same way, sees no call.
      // (the # then starts a comment that hides the last quote).
      const out = await db.query(`SELECT 'x\\', SLEEP(5), '#'`);
      expect(out.rows).toEqual([["x', SLEEP(5), "]]);
      // Under ANSI_QUOTES "sleep"(…) would be a call of a quoted identifier; the guard reads a string
      // followed by a parenthesis and the server, in the session's mode, agrees it is not a call.
      const error = await rejection(db.query(`SELECT "sleep"(5)`));
      expect((error as ReservoirError).code).toBe('invalid_argument');
      expect((error as Error).message).toMatch(/syntax to use near '\(5\)'/);
    });

    it('names a table by the one spelling the server lists; another case names nothing', async () => {
      const listed = (await db.list(undefined, 100, ctx())).items.map((i) => i.uri);
      expect(listed).toContain('db://m/tables/secret/rows');
      expect(listed.filter((u) => /secret/i.test(u) && u.endsWith('/rows'))).toEqual([
        'db://m/tables/secret/rows',
      ]);
      const doc = await readJson<RowsDoc>(db, 'db://m/tables/secret/rows');
      expect(doc.rows.map((r) => r['id'])).toEqual([1, 2]);
      for (const spelling of ['Secret', 'SECRET', '`secret`', 'test.secret', '%60secret%60']) {
        const error = await rejection(db.read(`db://m/tables/${spelling}/rows`, ctx()));
        expect(error, spelling).toBeInstanceOf(NotFoundError);
      }
    });
  },
);
