// The index's reader processes: statements answered in one round trip, the server's thread left free
// while one runs, a statement stopped at its deadline or on cancel by killing its process (and the
// next statement served by a fresh one), a second statement not held up by a slow first, a third
// waiting for a free reader only within its own deadline, and SQLite's failures passed on with
// their codes.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { loadSqliteDriver } from '../../src/core/sqlite-driver.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { IndexReader, ReaderTimeout } from '../../src/search/reader.js';
import { removeDir, tempDir } from '../providers/helpers.js';

const Database = loadSqliteDriver();

/** A statement that never finishes on its own. */
const ENDLESS = {
  sql: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c',
  params: [],
};
const soon = (ms: number): number => Date.now() + ms;

let dir: string;
let file: string;
let writer: BetterSqlite3.Database;
const readers: IndexReader[] = [];

function reader(size?: number): IndexReader {
  const made = new IndexReader(file, size);
  readers.push(made);
  return made;
}

/** The longest the server's own thread went without running a timer while `work` ran, ms. */
beforeAll(() => {
  dir = tempDir('reservoir-reader-');
  file = join(dir, 'index.sqlite');
  writer = new Database(file);
  writer.pragma('journal_mode = WAL');
  writer.exec('CREATE TABLE words (id INTEGER PRIMARY KEY, word TEXT)');
  const insert = writer.prepare('INSERT INTO words (word) VALUES (?)');
  for (const word of ['budget', 'retry', 'backoff']) insert.run(word);
});

afterEach(() => {
  for (const made of readers.splice(0)) made.close();
});

afterAll(() => {
  writer.close();
  removeDir(dir);
});

describe('IndexReader', () => {
  it('answers a cached statement with what the writer last committed, per parameters', async () => {
    const one = reader(1);
    const count = {
      sql: 'SELECT count(*) FROM words WHERE id > ?',
      params: [0],
      pluck: true,
      cache: true,
    };
    const [before] = await one.run([count], { deadline: soon(10_000) });
    // A table the cached statement does not read: the commit alone must drop what was kept.
    writer.exec('CREATE TABLE IF NOT EXISTS other (x)');
    const [same] = await one.run([count], { deadline: soon(10_000) });
    expect(same).toEqual(before);
    writer.prepare('INSERT INTO words (word) VALUES (?)').run('jitter');
    const [after] = await one.run([count], { deadline: soon(10_000) });
    expect(after).toEqual([(before![0] as number) + 1]);
    const [other] = await one.run([{ ...count, params: [1] }], { deadline: soon(10_000) });
    expect(other).toEqual([before![0] as number]);
    writer.prepare('DELETE FROM words WHERE word = ?').run('jitter');
  });

  it('answers several statements in one round trip, in order, as objects or plucked values', async () => {
    const [rows, ids] = await reader().run(
      [
        { sql: 'SELECT id, word FROM words WHERE word > ? ORDER BY id', params: ['b'] },
        { sql: 'SELECT id FROM words ORDER BY id DESC', params: [], pluck: true },
      ],
      { deadline: soon(10_000) },
    );
    expect(rows).toEqual([
      { id: 1, word: 'budget' },
      { id: 2, word: 'retry' },
      { id: 3, word: 'backoff' },
    ]);
    expect(ids).toEqual([3, 2, 1]);
  });

  it('sees what the writer committed since, and never writes', async () => {
    const made = reader();
    writer.prepare('INSERT INTO words (word) VALUES (?)').run('jitter');
    const [[count]] = (await made.run(
      [{ sql: 'SELECT count(*) FROM words', params: [], pluck: true }],
      { deadline: soon(10_000) },
    )) as [number[]];
    expect(count).toBe(4);
    await expect(
      made.run([{ sql: "INSERT INTO words (word) VALUES ('x') RETURNING id", params: [] }], {
        deadline: soon(10_000),
      }),
    ).rejects.toMatchObject({ code: expect.stringMatching(/^SQLITE_READONLY/) });
    writer.prepare("DELETE FROM words WHERE word = 'jitter'").run();
  });

  it('stops a statement at its deadline by killing its process, leaves the thread free meanwhile, and answers the next with a fresh process', async () => {
    const made = reader();
    await made.run([{ sql: 'SELECT 1', params: [] }], { deadline: soon(10_000) }); // started, so the deadline is the statement's alone
    const started = Date.now();
    const endless = made.run([ENDLESS], { deadline: soon(1_500) });
    // The thread is free while the statement runs: a file read started after it finishes first. Run on
    // this thread, the statement would hold every I/O callback until its deadline had stopped it.
    const first = await Promise.race([
      readFile(file).then(() => 'the file read'),
      endless.then(
        () => 'the statement',
        () => 'the statement',
      ),
    ]);
    expect(first).toBe('the file read');
    await expect(endless).rejects.toBeInstanceOf(ReaderTimeout);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_490); // stopped by its deadline, not before
    expect(made.running).toBe(0);
    const [[one]] = (await made.run([{ sql: 'SELECT 1', params: [], pluck: true }], {
      deadline: soon(10_000),
    })) as [number[]];
    expect(one).toBe(1);
  });

  it('stops a cancelled statement at once, failing with the signal reason', async () => {
    const made = reader();
    await made.run([{ sql: 'SELECT 1', params: [] }], { deadline: soon(10_000) });
    const abort = new AbortController();
    const endless = made.run([ENDLESS], { deadline: soon(60_000), signal: abort.signal });
    await new Promise((resolve) => setImmediate(resolve)); // one turn: the statement has been sent to its (started) reader
    abort.abort(new Error('the caller cancelled'));
    await expect(endless).rejects.toThrow('the caller cancelled');
    expect(made.running).toBe(0);
    await expect(
      made.run([ENDLESS], { deadline: soon(60_000), signal: abort.signal }),
    ).rejects.toThrow('the caller cancelled');
  });

  it('answers a second statement while a slow first one runs, and holds a third only until its own deadline', async () => {
    const made = reader(2);
    // The endless statements end when the test stops them, not on a clock: a reader process
    // starting on a loaded machine may take seconds, which a deadline would have to outlast.
    const stop = new AbortController();
    const settled = { first: false };
    const first = made.run([ENDLESS], { deadline: soon(120_000), signal: stop.signal });
    first.catch(() => {}).finally(() => (settled.first = true));
    const [[two]] = (await made.run([{ sql: 'SELECT 2', params: [], pluck: true }], {
      deadline: soon(60_000),
    })) as [number[]];
    expect(two).toBe(2);
    expect(settled.first).toBe(false); // answered while the first still ran
    const second = made.run([ENDLESS], { deadline: soon(120_000), signal: stop.signal });
    await expect(
      made.run([{ sql: 'SELECT 3', params: [] }], { deadline: soon(300) }),
    ).rejects.toBeInstanceOf(ReaderTimeout);
    expect(made.running).toBe(2);
    // Both are heard before either rejects (a rejection with no handler yet would be unhandled).
    const stopped = Promise.all([
      expect(first).rejects.toThrow('the test is done'),
      expect(second).rejects.toThrow('the test is done'),
    ]);
    stop.abort(new Error('the test is done'));
    await stopped;
  });

  it('gives a waiting statement a reader as soon as one is free', async () => {
    const made = reader(1);
    const slow = made.run([ENDLESS], { deadline: soon(300) });
    const waiting = made.run([{ sql: 'SELECT 4', params: [], pluck: true }], {
      deadline: soon(10_000),
    });
    await expect(slow).rejects.toBeInstanceOf(ReaderTimeout);
    expect(await waiting).toEqual([[4]]);
  });

  it("passes SQLite's failures on with their codes, and a file it cannot open as SQLITE_CANTOPEN", async () => {
    await expect(
      reader().run([{ sql: 'SELECT word FROM nowhere', params: [] }], { deadline: soon(10_000) }),
    ).rejects.toMatchObject({
      code: 'SQLITE_ERROR',
      message: expect.stringContaining('no such table: nowhere'),
    });
    const missing = new IndexReader(join(dir, 'missing.sqlite'));
    readers.push(missing);
    await expect(
      missing.run([{ sql: 'SELECT 1', params: [] }], { deadline: soon(10_000) }),
    ).rejects.toMatchObject({ code: 'SQLITE_CANTOPEN' });
    expect(missing.running).toBe(0);
  });

  it('refuses statements once closed, and stops those running', async () => {
    const made = reader();
    await made.run([{ sql: 'SELECT 1', params: [] }], { deadline: soon(10_000) });
    const endless = made.run([ENDLESS], { deadline: soon(60_000) });
    await new Promise((resolve) => setImmediate(resolve)); // one turn: the statement has been sent to its (started) reader
    made.close();
    await expect(endless).rejects.toMatchObject({ code: 'SQLITE_ABORT' });
    await expect(
      made.run([{ sql: 'SELECT 1', params: [] }], { deadline: soon(10_000) }),
    ).rejects.toThrow('the search index is closed');
    expect(made.running).toBe(0);
  });
});
