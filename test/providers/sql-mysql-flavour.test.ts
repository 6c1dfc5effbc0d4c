// Where MySQL and MariaDB differ (src/providers/sql/mysql-flavour.ts). Only MariaDB runs here, so
// the MySQL branch is tested on MySQL 8.0's answers as its manual gives them (a version string of
// its form and the documented default @@sql_mode), not recorded here from a live MySQL; with
// RESERVOIR_TEST_MYSQL set, the statement each branch builds is also sent to the live MariaDB: its own is taken, MySQL's is refused for the unknown variable.
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mysqlFlavour, sessionStatement } from '../../src/providers/sql/mysql-flavour.js';
import { MYSQL_URL, mysqlConfigured } from './sql-helpers.js';

/** MySQL 8.0: a version string of its form and its documented default sql_mode (not recorded from a live server). */
const MYSQL_8 = {
  version: '8.0.36',
  mode: 'ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION',
};
/** Recorded from this project's MariaDB: `SELECT @@version, @@SESSION.sql_mode`. */
const MARIADB_10_11 = {
  version: '10.11.19-MariaDB-0+deb12u1',
  mode: 'STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION',
};

describe("MySQL vs MariaDB, on the servers' answers (MariaDB recorded, MySQL 8.0 from its manual)", () => {
  it('tells the servers apart by @@version (MariaDB also behind the 5.5.5- replication prefix)', () => {
    expect(mysqlFlavour(MYSQL_8.version)).toEqual({
      mariadb: false,
      timeLimitVariable: 'max_execution_time',
      timeLimitErrno: 3024,
      readOnlyVariable: 'transaction_read_only',
    });
    expect(mysqlFlavour('8.4.0-commercial').mariadb).toBe(false);
    expect(mysqlFlavour(MARIADB_10_11.version)).toEqual({
      mariadb: true,
      timeLimitVariable: 'max_statement_time',
      timeLimitErrno: 1969,
      readOnlyVariable: 'tx_read_only',
    });
    expect(mysqlFlavour('5.5.5-10.11.6-MariaDB').mariadb).toBe(true);
  });

  it('MySQL: the time limit is max_execution_time in whole milliseconds, at least 1', () => {
    const session = sessionStatement(MYSQL_8.version, MYSQL_8.mode, 5000);
    expect(session.sql).toMatch(/max_execution_time = \?$/);
    expect(session.sql).not.toMatch(/max_statement_time/);
    expect(session.values).toEqual([MYSQL_8.mode, 5000]);
    expect(sessionStatement(MYSQL_8.version, MYSQL_8.mode, 0.4).values[1]).toBe(1);
    expect(sessionStatement(MYSQL_8.version, MYSQL_8.mode, 1234.6).values[1]).toBe(1235);
  });

  it('MariaDB: the time limit is max_statement_time in seconds', () => {
    const session = sessionStatement(MARIADB_10_11.version, MARIADB_10_11.mode, 1500);
    expect(session.sql).toMatch(/max_statement_time = \?$/);
    expect(session.values).toEqual([MARIADB_10_11.mode, 1.5]);
  });

  it('drops the modes the guard cannot lex, whichever server', () => {
    for (const server of [MYSQL_8, MARIADB_10_11]) {
      const mode = `ANSI,${server.mode},ANSI_QUOTES,no_backslash_escapes,ORACLE`;
      expect(sessionStatement(server.version, mode, 5000).values[0]).toBe(server.mode);
    }
  });
});

describe.skipIf(!mysqlConfigured())('MySQL vs MariaDB, on the live server', () => {
  let connection: mysql.Connection;
  let version = '';
  let mode = '';

  beforeAll(async () => {
    connection = await mysql.createConnection({ uri: MYSQL_URL! });
    const [rows] = await connection.query<mysql.RowDataPacket[]>(
      'SELECT @@version AS version, @@SESSION.sql_mode AS mode',
    );
    version = String(rows[0]!['version']);
    mode = String(rows[0]!['mode']);
  });
  afterAll(async () => {
    await connection?.end();
  });

  it("the server's own branch is taken, and the other server's variable is refused", async () => {
    const own = sessionStatement(version, mode, 2500);
    await connection.execute(own.sql, own.values);
    const [rows] = await connection.query<mysql.RowDataPacket[]>(
      `SELECT @@SESSION.${own.flavour.timeLimitVariable} AS v, @@SESSION.time_zone AS tz`,
    );
    expect(Number(rows[0]!['v'])).toBe(own.flavour.mariadb ? 2.5 : 2500);
    expect(rows[0]!['tz']).toBe('+00:00');
    const other = sessionStatement(
      own.flavour.mariadb ? MYSQL_8.version : MARIADB_10_11.version,
      mode,
      2500,
    );
    await expect(connection.execute(other.sql, other.values)).rejects.toMatchObject({
      errno: 1193,
    }); // ER_UNKNOWN_SYSTEM_VARIABLE
  });

  it('JSON: MariaDB lists a JSON column as longtext, MySQL as json', async () => {
    const db = `mysql2_flavour_${process.pid}`;
    await connection.query(`CREATE DATABASE IF NOT EXISTS \`${db}\``);
    try {
      await connection.query(`CREATE TABLE \`${db}\`.j (j JSON)`);
      const [rows] = await connection.query<mysql.RowDataPacket[]>(
        'SELECT COLUMN_TYPE AS t FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?',
        [db, 'j'],
      );
      expect(String(rows[0]!['t'])).toBe(mysqlFlavour(version).mariadb ? 'longtext' : 'json');
    } finally {
      await connection.query(`DROP DATABASE \`${db}\``);
    }
  });
});
