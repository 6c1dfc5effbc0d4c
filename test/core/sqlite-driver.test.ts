// The better-sqlite3 build each Node line loads (src/core/sqlite-driver.ts): 13 from Node 22 on
// (12 aborts on 24 when a statement is garbage-collected), 12 below (13 crashes there), and the one
// this runtime picked opens an FTS5 index, in-process and in a child process started with its path.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  loadSqliteDriver,
  SQLITE_DRIVER_12,
  SQLITE_DRIVER_13,
  sqliteDriverPackage,
  sqliteDriverPath,
} from '../../src/core/sqlite-driver.js';
import { spawnSqliteProcess } from '../../src/core/sqlite-process.js';
import { removeDir, tempDir } from '../providers/helpers.js';

const MAJOR = Number(process.versions.node.split('.')[0]);
const dir = tempDir();
afterAll(() => removeDir(dir));

/** The version in the package.json above a resolved entry point. */
function versionAt(entry: string): string {
  let at = dirname(entry);
  for (;;) {
    try {
      return (JSON.parse(readFileSync(join(at, 'package.json'), 'utf8')) as { version: string })
        .version;
    } catch {
      at = dirname(at);
    }
  }
}

describe('sqliteDriverPackage', () => {
  const all = (): boolean => true;
  const none = (): boolean => false;

  it('picks better-sqlite3 12 below Node 22, installed 13 or not', () => {
    expect(sqliteDriverPackage('20.20.2', all)).toBe(SQLITE_DRIVER_12);
    expect(sqliteDriverPackage('18.0.0', all)).toBe(SQLITE_DRIVER_12);
  });

  it('picks 13 from Node 22 on when it is installed', () => {
    expect(sqliteDriverPackage('22.23.3', all)).toBe(SQLITE_DRIVER_13);
    expect(sqliteDriverPackage('24.21.0', all)).toBe(SQLITE_DRIVER_13);
  });

  it('falls back to 12 on Node 22 without 13, but never on 24, where 12 aborts', () => {
    expect(sqliteDriverPackage('22.23.3', none)).toBe(SQLITE_DRIVER_12);
    expect(sqliteDriverPackage('24.21.0', none)).toBe(SQLITE_DRIVER_13);
  });
});

describe(`this runtime's driver (Node ${process.versions.node})`, () => {
  it(`is better-sqlite3 ${MAJOR >= 22 ? '13' : '12'}`, () => {
    expect(versionAt(sqliteDriverPath()).split('.')[0]).toBe(MAJOR >= 22 ? '13' : '12');
  });

  it('opens a file with FTS5, prepares statements and closes, in this process', () => {
    const Database = loadSqliteDriver();
    const db = new Database(join(dir, 'fts.db'));
    db.exec(
      "CREATE VIRTUAL TABLE t USING fts5(body); INSERT INTO t (body) VALUES ('the quick brown fox'), ('a lazy dog')",
    );
    for (let i = 0; i < 200; i += 1)
      db.prepare(`SELECT rowid FROM t WHERE t MATCH ? LIMIT ${i + 1}`).all('fox');
    expect(db.prepare('SELECT rowid AS id FROM t WHERE t MATCH ?').all('lazy')).toEqual([
      { id: 2 },
    ]);
    db.close();
  });

  it('is what a child process started with its path loads', async () => {
    const program = String.raw`
const Database = require(process.argv[1]);
const db = new Database(process.argv[2], { readonly: true, fileMustExist: true });
process.send(db.prepare("SELECT count(*) AS n FROM t WHERE t MATCH 'fox'").get(), () => process.exit(0));
`;
    const { child, stderr } = spawnSqliteProcess(program, join(dir, 'fts.db'));
    const [answer, code] = await Promise.all([
      new Promise((resolve) => child.once('message', resolve)),
      new Promise((resolve) => child.once('exit', (status) => resolve(status))),
    ]);
    expect(stderr()).toBe('');
    expect(answer).toEqual({ n: 1 });
    expect(code).toBe(0);
  });
});
