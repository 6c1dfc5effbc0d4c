// MySQL / MariaDB read-only for real: the lexical guard's MySQL rules (executable comments, `#`
// and `-- ` comments, backslash escapes, `"` strings, `:=`, LOAD DATA, INTO OUTFILE / DUMPFILE, FOR
// UPDATE, LOCK IN SHARE MODE, HANDLER, DO SLEEP, CALL, lock and file functions), then an attack table
// run against MariaDB (RESERVOIR_TEST_MYSQL; skipped with a message when unset): each statement is
// refused through sql_query as a read-only user, and again with the lexical check bypassed as root
// with allowPrivilegedRole — where only the read-only transaction and the session stand — and the
// database is unchanged after every one.
import { existsSync } from 'node:fs';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReservoirError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/log.js';
import { checkStatement } from '../../src/providers/sql/guard.js';
import { sqlProvider, type SqlProvider } from '../../src/providers/sql/index.js';
import { mysqlDialect } from '../../src/providers/sql/mysql.js';
import { rejection } from './helpers.js';
import { MYSQL_URL, mysqlConfigured } from './sql-helpers.js';

const suffix = `${process.pid}_${Date.now().toString(36)}`;
const DB = `reservoir_mysql_g_${suffix}`;
const USER = `reservoir_rg_${suffix}`.slice(0, 32);
const PWNED = `/tmp/reservoir-mysql-pwned-${suffix}`;

describe('the lexical guard on MySQL syntax', () => {
  const refused: [string, string, RegExp][] = [
    ['an executable comment', 'SELECT 1 /*! , (DELETE FROM users) */', /executable comments/],
    [
      'a MariaDB executable comment',
      'SELECT 1 /*M!100000 ; DROP TABLE users */',
      /executable comments/,
    ],
    [
      'a statement after a # comment line',
      'SELECT 1 # note\n; DELETE FROM users',
      /only one statement/,
    ],
    ['INTO OUTFILE', "SELECT * FROM users INTO OUTFILE '/tmp/x'", /INTO/],
    ['INTO DUMPFILE', "SELECT 1 INTO DUMPFILE '/tmp/x'", /INTO/],
    ['SELECT … INTO @var', 'SELECT id INTO @v FROM users LIMIT 1', /INTO/],
    ['LOAD DATA', "LOAD DATA INFILE '/etc/passwd' INTO TABLE users", /only SELECT/],
    ['FOR UPDATE', 'SELECT * FROM users FOR UPDATE', /UPDATE|row locks/],
    ['LOCK IN SHARE MODE', 'SELECT * FROM users LOCK IN SHARE MODE', /LOCK/],
    ['HANDLER', 'HANDLER users OPEN', /only SELECT/],
    ['DO SLEEP', 'DO SLEEP(5)', /only SELECT/],
    ['SLEEP in a select', 'SELECT SLEEP(5)', /sleep/],
    ['BENCHMARK', "SELECT BENCHMARK(1000000000, MD5('a'))", /benchmark/],
    ['GET_LOCK', "SELECT GET_LOCK('x', 0)", /get_lock/],
    ['LOAD_FILE', "SELECT LOAD_FILE('/etc/passwd')", /load_file/],
    ['NEXTVAL', 'SELECT NEXTVAL(s)', /nextval/],
    ['a user variable assignment', 'SELECT @x := 1', /assigning user variables/],
    ['CALL', 'CALL writer()', /only SELECT/],
    ['SET', "SET sql_mode = 'NO_BACKSLASH_ESCAPES'", /only SELECT/],
    ['a backtick-quoted SLEEP', 'SELECT `sleep`(5)', /sleep/],
    ['an unterminated backslash-escaped string', "SELECT 'a\\'", /unterminated/],
  ];
  for (const [what, sql, reason] of refused) {
    it(`refuses ${what}`, () => {
      const verdict = checkStatement(sql, 'mysql');
      expect(verdict.ok, sql).toBe(false);
      expect(verdict.reason).toMatch(reason);
    });
  }

  it('lexes strings with backslash escapes and either quote, and -- as a comment only before a blank', () => {
    // one string each: what looks like a second statement is inside it
    expect(checkStatement("SELECT 'a\\' ; DELETE FROM users -- '", 'mysql').ok).toBe(true);
    expect(checkStatement('SELECT "it\'s ; DROP TABLE users"', 'mysql').ok).toBe(true);
    // `--1` is arithmetic, not a comment: the DELETE after it is seen
    expect(checkStatement('SELECT 1 --1\n; DELETE FROM users', 'mysql').ok).toBe(false);
    expect(checkStatement('SELECT 1 -- note\n', 'mysql').ok).toBe(true);
    expect(
      checkStatement('SELECT `odd``name` FROM `t` /* plain comment */ WHERE x = @y', 'mysql').ok,
    ).toBe(true);
    expect(
      checkStatement(
        "SELECT CAST(x AS CHAR CHARACTER SET utf8mb4), is_free_lock('a') FROM t",
        'mysql',
      ).ok,
    ).toBe(true);
  });
});

describe.skipIf(!mysqlConfigured())('the attack table against MariaDB', () => {
  let admin: mysql.Connection;
  let roUrl: string;
  let rootUrl: string;
  let db: SqlProvider;

  beforeAll(async () => {
    admin = await mysql.createConnection({ uri: MYSQL_URL!, multipleStatements: true });
    await admin.query(`CREATE DATABASE \`${DB}\`; USE \`${DB}\``);
    await admin.query(`
      CREATE TABLE users (id INT PRIMARY KEY, name VARCHAR(20));
      INSERT INTO users VALUES (1, 'a'), (2, 'b');
      CREATE SEQUENCE s;
      CREATE PROCEDURE writer() INSERT INTO users VALUES (99, 'pwned');
      CREATE FUNCTION wfn() RETURNS INT MODIFIES SQL DATA BEGIN INSERT INTO users VALUES (98, 'pwned'); RETURN 1; END;
      CREATE USER '${USER}'@'%'; GRANT SELECT ON \`${DB}\`.* TO '${USER}'@'%';
    `);
    const url = new URL(MYSQL_URL!);
    url.pathname = `/${DB}`;
    rootUrl = url.href;
    url.username = USER;
    roUrl = url.href;
    db = sqlProvider({ url: roUrl, name: 'attack', statementTimeoutMs: 500 });
  });

  afterAll(async () => {
    await db?.close();
    await admin?.query(`DROP DATABASE IF EXISTS \`${DB}\`; DROP USER IF EXISTS '${USER}'@'%'`);
    await admin?.end();
  });

  const snapshot = async (): Promise<string> => {
    const [rows] = await admin.query(
      `SELECT (SELECT GROUP_CONCAT(id, name ORDER BY id) FROM \`${DB}\`.users) AS u, (SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = '${DB}') AS t, (SELECT next_not_cached_value FROM \`${DB}\`.s) AS s, IS_FREE_LOCK('reservoir_x') AS l`,
    );
    return JSON.stringify([rows, existsSync(PWNED)]);
  };

  const ATTACKS: [string, string][] = [
    ['stacked statements', `SELECT 1; DROP TABLE \`${DB}\`.users`],
    ['insert', `INSERT INTO users VALUES (50, 'x')`],
    ['replace', `REPLACE INTO users VALUES (1, 'x')`],
    ['update', `UPDATE users SET name = 'x'`],
    ['delete', 'DELETE FROM users'],
    ['drop', 'DROP TABLE users'],
    ['create', 'CREATE TABLE x (y INT)'],
    ['alter', 'ALTER TABLE users ADD COLUMN z INT'],
    ['truncate', 'TRUNCATE users'],
    ['create … select', 'CREATE TABLE copy SELECT * FROM users'],
    ['into outfile', `SELECT * FROM users INTO OUTFILE '${PWNED}'`],
    ['into dumpfile', `SELECT 'x' INTO DUMPFILE '${PWNED}'`],
    ['load data', `LOAD DATA INFILE '/etc/hostname' INTO TABLE users`],
    ['for update', 'SELECT * FROM users FOR UPDATE'],
    ['lock in share mode', 'SELECT * FROM users LOCK IN SHARE MODE'],
    ['handler', 'HANDLER users OPEN'],
    ['do sleep', 'DO SLEEP(5)'],
    ['sleep over the time limit', 'SELECT SLEEP(5)'],
    ['get_lock', "SELECT GET_LOCK('reservoir_x', 0)"],
    ['nextval', 'SELECT NEXTVAL(s)'],
    ['call a writing procedure', 'CALL writer()'],
    ['a writing stored function', 'SELECT wfn()'],
    ['a user variable', 'SELECT @x := 1'],
    ['an executable comment', 'SELECT 1 /*!, wfn() */'],
    ['set the session mode', "SET SESSION sql_mode = 'NO_BACKSLASH_ESCAPES'"],
    ['commit then write', 'COMMIT'],
  ];

  for (const [what, sql] of ATTACKS) {
    it(`refuses ${what} through sql_query and leaves the database unchanged`, async () => {
      const before = await snapshot();
      const error = await rejection(db.query(sql));
      expect(error, sql).toBeInstanceOf(ReservoirError);
      expect(['invalid_argument', 'timeout']).toContain((error as ReservoirError).code);
      expect(await snapshot()).toBe(before);
    });
  }

  /** Runs every attack below the lexical check; returns each one's outcome ('ran' or the failure kind). */
  const bypass = async (
    url: string,
    attacks: [string, string][],
  ): Promise<Record<string, string>> => {
    const dialect = mysqlDialect({
      url,
      statementTimeoutMs: 500,
      allowPrivilegedRole: true,
      logger: silentLogger,
    });
    const outcomes: Record<string, string> = {};
    try {
      for (const [what, sql] of attacks) {
        try {
          await dialect.readOnlyQuery(sql, [], { maxRows: 10, timeoutMs: 500, maxBytes: 1 << 20 });
          outcomes[what] = 'ran';
        } catch (error) {
          outcomes[what] = (error as { kind?: string }).kind ?? 'error';
        }
      }
      // nothing a statement set outlives its call: the session is reset and prepared again
      const after = await dialect.readOnlyQuery(
        'SELECT @@SESSION.sql_mode, @@SESSION.tx_read_only, @x, IS_FREE_LOCK(?)',
        ['reservoir_x'],
        { maxRows: 1, timeoutMs: 500, maxBytes: 1 << 20 },
      );
      expect(String(after.rows[0]![0])).not.toMatch(/NO_BACKSLASH_ESCAPES/);
      expect(after.rows[0]!.slice(1)).toEqual([1, null, 1]);
    } finally {
      await dialect.close();
    }
    return outcomes;
  };

  /**
   * What may run below the lexical check: reads; a lock, a variable, an open handler and a session
   * setting that die with the connection's reset; a COMMIT of the empty read-only transaction (one
   * statement per call: nothing follows it); DO SLEEP, cut at the time limit.
   */
  const HARMLESS = [
    'lock in share mode',
    'get_lock',
    'a user variable',
    'handler',
    'set the session mode',
    'commit then write',
    'do sleep',
  ];

  it('is held by the database for a user granted only SELECT when the lexical check is bypassed', async () => {
    const before = await snapshot();
    const outcomes = await bypass(roUrl, ATTACKS);
    const ran = Object.entries(outcomes)
      .filter(([, o]) => o === 'ran')
      .map(([w]) => w);
    for (const w of ran) expect(HARMLESS, `${w} ran`).toContain(w);
    expect(outcomes['sleep over the time limit']).toBe('timeout');
    expect(outcomes['into outfile']).not.toBe('ran');
    expect(await snapshot()).toBe(before);
  });

  it('holds every data write even as root in the read-only transaction (files are why root is refused)', async () => {
    // INTO OUTFILE / DUMPFILE need the FILE privilege and are not stopped by a read-only
    // transaction: that is what the grant check refuses a user holding FILE (or ALL) for.
    const before = await snapshot();
    const outcomes = await bypass(
      rootUrl,
      ATTACKS.filter(([w]) => !w.startsWith('into ')),
    );
    const ran = Object.entries(outcomes)
      .filter(([, o]) => o === 'ran')
      .map(([w]) => w);
    for (const w of ran) expect(HARMLESS, `${w} ran`).toContain(w);
    expect(await snapshot()).toBe(before);
  });
});
