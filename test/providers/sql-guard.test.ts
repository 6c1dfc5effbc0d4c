// Pins the SQL provider's small pure parts: the lexical pre-check of sql_query (defence in depth:
// the databases hold on their own, see sql-sqlite and sql-postgres tests), opaque keyset positions,
// JSON values, and the guarantee that importing the provider loads neither driver.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { decodeKey, encodeKey, toJsonValue } from '../../src/providers/sql/dialect.js';
import { checkStatement, wrappable } from '../../src/providers/sql/guard.js';
import { ensureBuilt, REPO_ROOT } from '../helpers/build.js';

describe('checkStatement', () => {
  it('lets plain reads through, with keywords inside literals, comments and quoted names', () => {
    for (const sql of [
      'SELECT 1',
      "  select * from t where name = 'DELETE FROM t; DROP TABLE x' -- update\n",
      'WITH x AS (SELECT 1) SELECT * FROM x;',
      'VALUES (1), (2)',
      'TABLE users',
      'SELECT "update" FROM t /* insert; drop */',
      'SELECT $$ ; delete $$, $tag$ drop $tag$',
      "SELECT E'it\\'s; drop', start, comment, \"end\" FROM t",
      'SELECT U&"d\\0061t\\+000061" FROM t',
      "SELECT U&'pg_sleep(1) \\0041' UESCAPE '\\', U&\"x!0041\" UESCAPE '!' FROM t",
      'SELECT menu&"x" FROM t',
    ]) {
      expect(checkStatement(sql), sql).toEqual({ ok: true });
    }
  });

  it('refuses stacked statements, writes, DDL, row locks and functions with side effects', () => {
    for (const sql of [
      'SELECT 1; DROP TABLE t',
      'SELECT 1; COMMIT; DROP TABLE t',
      'DELETE FROM t',
      'WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d',
      'SELECT * INTO t2 FROM t',
      'SELECT * FROM t FOR UPDATE',
      'SELECT * FROM t FOR NO KEY UPDATE',
      'EXPLAIN ANALYZE DELETE FROM t',
      'SELECT pg_sleep(100)',
      'SELECT "pg_sleep"(100)',
      'SELECT PG_TERMINATE_BACKEND(1)',
      "SELECT set_config('a', 'b', false)",
      "SELECT nextval('s')",
      "SELECT lo_import('/etc/passwd')",
      "SELECT * FROM dblink('x', 'y') AS t(a int)",
      "COPY (SELECT 1) TO PROGRAM 'id'",
      "SELECT pg_read_file('/etc/passwd')",
      "SELECT query_to_xml('delete from t', true, true, '')",
      "SELECT load_extension('x')",
      'PRAGMA query_only = 0',
      // Unicode-escaped identifiers are compared by what they spell
      'SELECT U&"pg\\005Fsleep"(100)',
      'SELECT u&"\\0070\\0067\\005f\\0073leep"(100)',
      'SELECT U&"pg\\+00005Fsleep"(100)',
      'SELECT U&"pg!005Fsleep" UESCAPE \'!\'(100)',
      'SELECT U&"pg!005Fsleep"   /* c */ uescape\n\'!\' (100)',
      "SELECT U&\"SET!005FCONFIG\" UESCAPE '!'('a', 'b', false)",
      'SELECT pg_catalog.U&"pg\\005Fterminate_backend"(1)',
      "SELECT * FROM U&\"dblin\\006B\"('x', 'y') AS t(a int)",
      'SELECT U&"lo\\005Fimport"(\'/etc/passwd\')',
      // and one the server would reject is refused as malformed, not passed on
      'SELECT U&"pg\\05Fsleep"(1)',
      'SELECT U&"pg_sleep" UESCAPE \'a\'(1)',
      "ATTACH 'x.db' AS x",
      "SELECT 'unterminated",
      '',
      '/* only a comment */',
    ]) {
      const verdict = checkStatement(sql);
      expect(verdict.ok, sql).toBe(false);
      expect(verdict.reason, sql).toBeTruthy();
    }
  });
});

describe('checkStatement and wrappable follow each database’s own lexical rules', () => {
  it('does not let SQLite-only or PostgreSQL-only quoting hide text the other database runs', () => {
    // To PostgreSQL "[" is a subscript: the quote inside opens a string, and what the SQLite rules
    // would take for a string is live code.
    const pgEscape =
      "SELECT a[']'] FROM t WHERE 'x' <> '' ) AS q, LATERAL (SELECT pg_sleep(10) -- '";
    expect(checkStatement(pgEscape, 'postgres').ok).toBe(false);
    expect('reason' in wrappable(pgEscape, 'postgres')).toBe(true);
    // To SQLite, $a$ is no dollar quote and block comments do not nest.
    for (const sqliteEscape of [
      "SELECT $a$, load_extension('x'), $a$",
      "SELECT 1 /* /* */, load_extension('x') /* */",
    ]) {
      expect(checkStatement(sqliteEscape, 'sqlite').ok, sqliteEscape).toBe(false);
    }
    expect('reason' in wrappable('SELECT 1 /* /* */ ) AS q, (SELECT 2 /* */', 'sqlite')).toBe(true);
    // while each database's own quoting still hides what it should
    expect(checkStatement('SELECT [delete] FROM t', 'sqlite')).toEqual({ ok: true });
    expect(checkStatement("SELECT $$ delete $$, E'\\' delete' FROM t", 'postgres')).toEqual({
      ok: true,
    });
    expect(wrappable('SELECT 1 /* ) */ ;  -- after', 'sqlite')).toEqual({
      body: 'SELECT 1 /* ) */ ',
    });
  });
});

describe('keyset positions', () => {
  it('round-trip strings, numbers, booleans, bigints and bytes, and refuse anything else', () => {
    const values = ['a', 1.5, true, 2n ** 70n, Buffer.from([0, 255])];
    const decoded = decodeKey(encodeKey(values), 5)!;
    expect(decoded.slice(0, 4)).toEqual(['a', 1.5, true, 2n ** 70n]);
    expect(Buffer.from(decoded[4] as Buffer)).toEqual(Buffer.from([0, 255]));
    expect(decodeKey(encodeKey(values), 4)).toBeUndefined();
    for (const junk of [
      '',
      '!!',
      'x'.repeat(9000),
      Buffer.from('{"a":1}').toString('base64url'),
      Buffer.from('[null]').toString('base64url'),
      Buffer.from('[{"i":"x"}]').toString('base64url'),
    ]) {
      expect(decodeKey(junk, 1), junk.slice(0, 20)).toBeUndefined();
    }
  });

  it('turns values into JSON without losing precision', () => {
    expect(toJsonValue(2n ** 60n)).toBe('1152921504606846976');
    expect(toJsonValue(7n)).toBe(7);
    expect(toJsonValue(Buffer.from('hi'))).toEqual({ $base64: 'aGk=' });
    expect(toJsonValue(Number.NaN)).toBe('NaN');
    expect(toJsonValue(undefined)).toBeNull();
  });
});

describe('lazy drivers', () => {
  it('loads neither better-sqlite3 nor pg when the provider module is imported and a provider built', async () => {
    await ensureBuilt();
    const script = `
      const { sqlProvider } = await import(${JSON.stringify(pathToFileURL(join(REPO_ROOT, 'dist/providers/sql/index.js')).href)});
      sqlProvider({ path: 'x.db' }); sqlProvider({ url: 'postgres://h/db' });
      const { createRequire } = await import('node:module');
      const loaded = Object.keys(createRequire(import.meta.url).cache).filter((k) => /better-sqlite3|node_modules.pg/.test(k));
      console.log(JSON.stringify(loaded));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    expect(JSON.parse(out.trim())).toEqual([]);
  });
});
