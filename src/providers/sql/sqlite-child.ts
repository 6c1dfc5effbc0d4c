/**
 * Statements of unknown cost on SQLite (named queries, `sql_query`, completion scans) run in a child
 * process. better-sqlite3 runs a statement synchronously and offers no interrupt (no
 * `sqlite3_interrupt`, no progress handler), so a runaway statement cannot be stopped in-process: the
 * only hard deadline is killing the process that runs it. The child opens the file with
 * `readonly: true` and `PRAGMA query_only = ON`, prepares exactly one statement (better-sqlite3
 * refuses a string holding more) and runs it only when it returns rows; on the deadline the parent
 * kills it (SIGKILL) and starts a fresh one on the next call.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { sqliteBounded, type OverBudget } from './budget.js';
import { abortError, SqlFailure, type QueryLimits, type QueryOutput } from './dialect.js';
import { wrappable } from './guard.js';

/** The child's program: CommonJS run by `node -e`, loading better-sqlite3 from the parent's path. */
const CHILD_PROGRAM = String.raw`
${sqliteBounded.toString()}
const Database = require(process.argv[1]);
const db = new Database(process.argv[2], { readonly: true, fileMustExist: true });
db.pragma('query_only = ON');
db.defaultSafeIntegers(true);
process.on('disconnect', () => process.exit(0));
process.on('message', (m) => {
  try {
    const stmt = db.prepare(m.sql);
    if (!stmt.reader) {
      process.send({ id: m.id, ok: false, kind: 'refused', message: 'only statements that return rows may run' });
      return;
    }
    const columns = stmt.columns().map((c) => c.name);
    // Every row is measured by SQLite before its values are read, and blank when it alone is over the
    // byte budget (see budget.ts): no value over the budget is ever materialised here.
    const bounded = db.prepare(sqliteBounded(m.sql, columns.length, m.maxBytes));
    bounded.raw(true);
    const rows = [];
    let truncated = false;
    let over;
    let used = 0;
    // ?NNN placeholders are named ones to better-sqlite3: bind them by number.
    let rowsOf;
    try {
      rowsOf = bounded.iterate(...m.params);
    } catch (e) {
      if (!/parameter/i.test(String(e && e.message))) throw e;
      rowsOf = bounded.iterate(Object.fromEntries(m.params.map((v, i) => [String(i + 1), v])));
    }
    for (const row of rowsOf) {
      if (rows.length >= m.maxRows) { truncated = true; break; }
      const bytes = Number(row[row.length - 1]);
      if (used + bytes > m.maxBytes) { over = { row: rows.length, rowBytes: bytes, usedBytes: used, budget: m.maxBytes }; break; }
      used += bytes;
      row.length -= 1;
      rows.push(row);
    }
    process.send({ id: m.id, ok: true, columns, rows, truncated, over });
  } catch (e) {
    process.send({ id: m.id, ok: false, code: e && e.code, message: String(e && e.message) });
  }
});
process.send({ ready: true });
`;

interface Reply {
  id?: number;
  ready?: boolean;
  ok?: boolean;
  kind?: 'refused';
  code?: string;
  message?: string;
  columns?: string[];
  rows?: unknown[][];
  truncated?: boolean;
  over?: OverBudget;
}

/** One child process for one database file; statements run one at a time. */
export class SqliteChild {
  private child: ChildProcess | undefined;
  private ready: Promise<void> | undefined;
  private nextId = 1;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly pending = new Map<number, (reply: Reply) => void>();

  constructor(private readonly path: string) {}

  /**
   * Runs `sql` with `params` in the child: at most `maxRows` rows and `maxBytes` bytes, killed at
   * `timeoutMs` or when `signal` aborts. A call aborted while it waits its turn never runs, and one
   * aborted while running kills the child at once: the next call gets a fresh one, never waiting.
   */
  run(sql: string, params: unknown[], limits: QueryLimits): Promise<QueryOutput> {
    const { signal } = limits;
    const turn = this.queue.then(() => {
      if (signal?.aborted === true) throw abortError(signal);
      return this.runNow(sql, params, limits);
    });
    this.queue = turn.catch(() => undefined);
    if (signal === undefined) return turn;
    // The caller hears of an abort at once, even while earlier calls still hold the queue.
    return new Promise<QueryOutput>((resolve, reject) => {
      const onAbort = (): void => reject(abortError(signal));
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      turn.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  /** Stops the child (a fresh one starts on the next call). */
  stop(): void {
    const child = this.child;
    this.child = undefined;
    this.ready = undefined;
    if (child !== undefined && child.exitCode === null) child.kill('SIGKILL');
    for (const resolve of this.pending.values()) resolve({ ok: false, code: 'SQLITE_CANTOPEN', message: 'the query process stopped' });
    this.pending.clear();
  }

  /** Kills a child busy with an abandoned statement and starts its successor now, off the next call's path. */
  private replace(): void {
    this.stop();
    this.start().catch(() => undefined);
  }

  private async runNow(sql: string, params: unknown[], limits: QueryLimits): Promise<QueryOutput> {
    const wrap = wrappable(sql);
    if ('reason' in wrap) throw new SqlFailure('refused', wrap.reason);
    await this.start(); // a child's start-up is not the statement's time
    const { signal } = limits;
    if (signal?.aborted === true) throw abortError(signal);
    const started = Date.now();
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const deadline = new Promise<Reply>((resolve) => {
      timer = setTimeout(() => resolve({ ok: false, code: 'TIMEOUT' }), limits.timeoutMs);
      onAbort = () => resolve({ ok: false, code: 'ABORTED' });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    const reply = await Promise.race([this.send(wrap.body, params, limits), deadline]).finally(() => {
      clearTimeout(timer);
      if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort);
    });
    if (reply.code === 'ABORTED' && signal !== undefined) {
      this.replace();
      throw abortError(signal);
    }
    if (reply.code === 'TIMEOUT') {
      this.replace();
      throw new SqlFailure('timeout', `the statement ran past the ${limits.timeoutMs} ms timeout (stopped after ${Date.now() - started} ms)`);
    }
    if (reply.ok === true) {
      return { columns: reply.columns ?? [], rows: reply.rows ?? [], truncated: reply.truncated === true, ...(reply.over === undefined ? {} : { over: reply.over }) };
    }
    if (reply.kind === 'refused') throw new SqlFailure('refused', reply.message ?? 'refused');
    throw classify(reply.code, reply.message ?? 'the statement failed');
  }

  private start(): Promise<void> {
    if (this.ready !== undefined && this.child?.exitCode === null) return this.ready;
    const modulePath = createRequire(import.meta.url).resolve('better-sqlite3');
    const child = spawn(process.execPath, ['-e', CHILD_PROGRAM, modulePath, this.path], {
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      serialization: 'advanced',
    });
    this.child = child;
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-2000)));
    this.ready = new Promise<void>((resolve, reject) => {
      child.on('message', (message: Reply) => {
        if (message.ready === true) return resolve();
        const done = message.id === undefined ? undefined : this.pending.get(message.id);
        if (done !== undefined && message.id !== undefined) {
          this.pending.delete(message.id);
          done(message);
        }
      });
      child.on('exit', () => {
        if (this.child === child) {
          this.child = undefined;
          this.ready = undefined;
        }
        const reason = /SqliteError: (.*)/.exec(stderr)?.[1] ?? 'the query process exited';
        reject(new SqlFailure('unavailable', reason));
        for (const resolvePending of this.pending.values()) resolvePending({ ok: false, code: 'SQLITE_CANTOPEN', message: reason });
        this.pending.clear();
      });
      child.on('error', (error) => reject(new SqlFailure('unavailable', `cannot start the query process: ${error.message}`, { cause: error })));
    });
    child.unref();
    child.channel?.unref();
    return this.ready;
  }

  private send(sql: string, params: unknown[], limits: QueryLimits): Promise<Reply> {
    const id = this.nextId++;
    return new Promise<Reply>((resolve) => {
      this.pending.set(id, resolve);
      this.child?.send({ id, sql, params, maxRows: limits.maxRows, maxBytes: limits.maxBytes });
    });
  }
}

/** Classifies a better-sqlite3 error code. */
export function classify(code: string | undefined, message: string, cause?: unknown): SqlFailure {
  const options = cause === undefined ? {} : { cause };
  if (/more than one statement/i.test(message)) return new SqlFailure('refused', message, options);
  if (code === undefined) return new SqlFailure('invalid', message, options);
  if (code === 'SQLITE_READONLY' || code.startsWith('SQLITE_READONLY_') || code === 'SQLITE_AUTH') return new SqlFailure('refused', message, options);
  if (/^SQLITE_(BUSY|LOCKED|NOTADB|CANTOPEN|CORRUPT|IOERR|FULL|NOMEM|PROTOCOL)/.test(code)) return new SqlFailure('unavailable', message, options);
  return new SqlFailure('invalid', message, options);
}
