/**
 * Queries of the search index run in reader processes, never on the server's own thread. FTS5 ranks
 * every match of a query before the first row comes back, and better-sqlite3 runs a statement
 * synchronously with no interrupt: a query matching most of a large tree (`f*` over 100,000 files,
 * or an OR of several such prefixes) ranks for seconds, and on the server's thread that froze every
 * read and every other search of every caller. Here the server only waits; a statement still running
 * at its deadline, or whose call was cancelled, is stopped by killing the process that runs it
 * (SIGKILL: nothing to interrupt, nothing left burning CPU), and the next statement gets a fresh one.
 *
 * Up to `size` processes (default 2), started when first needed, so one slow statement does not hold
 * up the searches of others; beyond the first, a process idle for a while is stopped. Each opens
 * the index file read-only (WAL: it reads the last committed state while the writer goes on) and
 * keeps its statements prepared.
 */
import type { ChildProcess } from 'node:child_process';
import { spawnSqliteProcess } from '../core/sqlite-process.js';

/** The reader's program: CommonJS run by `node -e`, loading better-sqlite3 from the server's path. */
const READER_PROGRAM = String.raw`
const Database = require(process.argv[1]);
const db = new Database(process.argv[2], { readonly: true, fileMustExist: true, timeout: 10000 });
db.pragma('query_only = ON');
const statements = new Map();
const cached = new Map();
let cachedVersion;
process.on('disconnect', () => process.exit(0));
process.on('message', (m) => {
  try {
    // The statements of one message run in one read transaction: they see the same state.
    const results = db.transaction(() => m.statements.map((s) => {
      let key;
      if (s.cache === true) {
        // Kept while no other connection has committed (data_version moves when one does).
        const version = db.pragma('data_version', { simple: true });
        if (version !== cachedVersion || cached.size >= 256) {
          cached.clear();
          cachedVersion = version;
        }
        key = JSON.stringify([s.sql, s.params, s.pluck === true]);
        const hit = cached.get(key);
        if (hit !== undefined) return hit;
      }
      let statement = statements.get(s.sql);
      if (statement === undefined) {
        if (statements.size >= 64) statements.clear();
        statement = db.prepare(s.sql);
        statements.set(s.sql, statement);
      }
      const rows = statement.pluck(s.pluck === true).all(...s.params);
      if (key !== undefined) cached.set(key, rows);
      return rows;
    }))();
    process.send({ id: m.id, results });
  } catch (e) {
    process.send({ id: m.id, failed: { code: e && e.code, message: String(e && e.message) } });
  }
});
process.send({ ready: true });
`;

/** How long a reader beyond the first is kept while idle, ms. */
const IDLE_MS = 30_000;

/** A statement stopped at its deadline. */
export class ReaderTimeout extends Error {
  constructor(readonly ms: number) {
    super(`the index query ran past its ${ms} ms budget and was stopped`);
    this.name = 'ReaderTimeout';
  }
}

/**
 * One statement to run: its rows come back as objects, or with `pluck` as the first column's values.
 * With `cache`, a reader keeps its rows for the same statement and parameters until the index
 * changes (for results that depend on what is indexed and not on the words asked for).
 */
export interface Statement {
  sql: string;
  params: readonly unknown[];
  pluck?: boolean;
  cache?: boolean;
}

export interface ReadOptions {
  /** When the statement is stopped (`Date.now()` ms), failing with ReaderTimeout. */
  deadline: number;
  /** Stops the statement (or its wait for a reader) when aborted. */
  signal?: AbortSignal;
}

interface Reply {
  id?: number;
  ready?: boolean;
  results?: unknown[][];
  failed?: { code?: string; message: string };
}

interface Reader {
  child: ChildProcess;
  ready: Promise<void>;
  /** The reply of the statement it runs. */
  answer: ((reply: Reply) => void) | undefined;
  idle: NodeJS.Timeout | undefined;
}

export class IndexReader {
  private readonly readers = new Set<Reader>();
  private readonly free: Reader[] = [];
  private readonly waiting: ((reader: Reader | undefined) => void)[] = [];
  private nextId = 1;
  private stopped = false;

  constructor(
    private readonly file: string,
    private readonly size = 2,
  ) {}

  /**
   * The rows of each statement, run in order by one reader process in one read transaction (one
   * round trip however many); a failure carries SQLite's `code`.
   */
  async run(statements: readonly Statement[], options: ReadOptions): Promise<unknown[][]> {
    const { signal, deadline } = options;
    signal?.throwIfAborted();
    const reader = await this.acquire(options);
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    try {
      await reader.ready;
      signal?.throwIfAborted();
      const budget = deadline - Date.now();
      if (budget <= 0) throw new ReaderTimeout(0);
      const reply = await new Promise<Reply | 'timeout' | 'aborted'>((resolve) => {
        reader.answer = resolve;
        timer = setTimeout(() => resolve('timeout'), Math.max(0, budget));
        onAbort = () => resolve('aborted');
        signal?.addEventListener('abort', onAbort, { once: true });
        reader.child.send({ id: this.nextId++, statements });
      });
      reader.answer = undefined;
      if (reply === 'timeout' || reply === 'aborted') {
        this.kill(reader);
        if (reply === 'aborted') signal!.throwIfAborted();
        throw new ReaderTimeout(Math.max(0, Math.round(budget)));
      }
      if (reply.failed !== undefined)
        throw Object.assign(new Error(reply.failed.message), { code: reply.failed.code });
      return reply.results ?? [];
    } catch (error) {
      // A reader that failed to start (or died) is not handed out again.
      if (reader.child.exitCode !== null || reader.child.signalCode !== null) this.kill(reader);
      throw error;
    } finally {
      clearTimeout(timer);
      if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort);
      this.release(reader);
    }
  }

  /** Stops every reader; statements running fail, and a later call starts afresh. */
  stop(): void {
    for (const reader of [...this.readers]) this.kill(reader);
    for (const wake of this.waiting.splice(0)) wake(undefined);
  }

  /** Stops every reader for good (the index is closed). */
  close(): void {
    this.stopped = true;
    this.stop();
  }

  /** How many reader processes run (for tests and stats). */
  get running(): number {
    return this.readers.size;
  }

  /** A free reader, a new one while fewer than `size` run, or the next one freed. */
  private acquire(options: ReadOptions): Promise<Reader> {
    if (this.stopped) return Promise.reject(new Error('the search index is closed'));
    const free = this.free.pop();
    if (free !== undefined) {
      clearTimeout(free.idle);
      return Promise.resolve(free);
    }
    if (this.readers.size < this.size) return Promise.resolve(this.spawn());
    return new Promise<Reader>((resolve, reject) => {
      const { signal, deadline } = options;
      const give = (reader: Reader | undefined): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (reader === undefined) reject(new Error('the search index readers were stopped'));
        else resolve(reader);
      };
      const leave = (error: Error): void => {
        const at = this.waiting.indexOf(give);
        if (at >= 0) this.waiting.splice(at, 1);
        signal?.removeEventListener('abort', onAbort);
        reject(error);
      };
      const onAbort = (): void =>
        leave(signal!.reason instanceof Error ? signal!.reason : new Error('aborted'));
      const timer = setTimeout(
        () => leave(new ReaderTimeout(Math.max(0, Math.round(deadline - Date.now())))),
        Math.max(0, deadline - Date.now()),
      );
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(give);
    });
  }

  /** Hands a reader to the next waiting statement, or keeps it (the first for good, others a while). */
  private release(reader: Reader): void {
    if (!this.readers.has(reader)) {
      // Killed: a waiting statement may start a reader of its own in its place.
      if (this.waiting.length > 0 && !this.stopped && this.readers.size < this.size)
        this.waiting.shift()!(this.spawn());
      return;
    }
    const next = this.waiting.shift();
    if (next !== undefined) return next(reader);
    this.free.push(reader);
    if (this.readers.size > 1) {
      reader.idle = setTimeout(() => {
        const at = this.free.indexOf(reader);
        if (at < 0 || this.readers.size <= 1) return;
        this.free.splice(at, 1);
        this.kill(reader);
      }, IDLE_MS);
      reader.idle.unref();
    }
  }

  private kill(reader: Reader): void {
    clearTimeout(reader.idle);
    this.readers.delete(reader);
    const at = this.free.indexOf(reader);
    if (at >= 0) this.free.splice(at, 1);
    if (reader.child.exitCode === null && reader.child.signalCode === null)
      reader.child.kill('SIGKILL');
    reader.answer?.({ failed: { code: 'SQLITE_ABORT', message: 'the index reader was stopped' } });
  }

  private spawn(): Reader {
    const { child, stderr } = spawnSqliteProcess(READER_PROGRAM, this.file);
    const reader: Reader = { child, ready: Promise.resolve(), answer: undefined, idle: undefined };
    reader.ready = new Promise<void>((resolve, reject) => {
      child.on('message', (message: Reply) => {
        if (message.ready === true) return resolve();
        reader.answer?.(message);
      });
      child.on('exit', () => {
        const reason = /SqliteError: (.*)/.exec(stderr())?.[1] ?? 'the index reader exited';
        const code = /code: '([A-Z_]+)'/.exec(stderr())?.[1] ?? 'SQLITE_CANTOPEN';
        reject(Object.assign(new Error(reason), { code }));
        reader.answer?.({ failed: { code, message: reason } });
        if (this.readers.has(reader)) this.kill(reader);
      });
      child.on('error', (error) =>
        reject(
          Object.assign(new Error(`cannot start the index reader: ${error.message}`), {
            code: 'SQLITE_CANTOPEN',
            cause: error,
          }),
        ),
      );
    });
    reader.ready.catch(() => undefined);
    this.readers.add(reader);
    return reader;
  }
}
