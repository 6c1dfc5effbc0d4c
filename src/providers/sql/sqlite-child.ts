/**
 * Statements of unknown cost on SQLite (named queries, `sql_query`, completion scans) run in a child
 * process. better-sqlite3 runs a statement synchronously and offers no interrupt (no
 * `sqlite3_interrupt`, no progress handler), so a runaway statement cannot be stopped in-process: the
 * only hard deadline is killing the process that runs it. The child opens the file with
 * `readonly: true` and `PRAGMA query_only = ON`, prepares exactly one statement (better-sqlite3
 * refuses a string holding more) and runs it only when it returns rows; on the deadline the parent
 * kills it (SIGKILL), and so does a cancel; the next call gets a spare process started while the
 * statement ran (or a fresh one).
 */
import type { ChildProcess } from 'node:child_process';
import { definedProps } from '../../core/defined.js';
import { spawnSqliteProcess } from '../../core/sqlite-process.js';
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
    const bounded = db.prepare(sqliteBounded(m.sql, columns, m.maxBytes));
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

/** A started query process. */
interface Proc {
  child: ChildProcess;
  ready: Promise<void>;
}

/** How long a statement runs before a spare process is started for the case it must be killed, ms. */
const SPARE_AFTER_MS = 50;
/** How long an unused spare process is kept, ms. */
const SPARE_IDLE_MS = 30_000;

/**
 * The query process of one database file; statements run one at a time. While a statement runs
 * longer than SPARE_AFTER_MS a spare process starts beside it, so that killing the statement (at its
 * deadline or on cancel) hands the next call a process that is already up.
 */
export class SqliteChild {
  private current: Proc | undefined;
  private spare: Proc | undefined;
  private spareIdle: NodeJS.Timeout | undefined;
  private nextId = 1;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly pending = new Map<number, (reply: Reply) => void>();

  constructor(private readonly path: string) {}

  /**
   * Runs `sql` with `params` in the child: at most `maxRows` rows and `maxBytes` bytes, killed at
   * `timeoutMs` or when `signal` aborts. A call aborted while it waits its turn never runs, and one
   * aborted while running kills the child at once: the next call gets the spare, never waiting.
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

  /** Stops the processes (a fresh one starts on the next call). */
  stop(): void {
    this.kill();
    const spare = this.spare;
    this.spare = undefined;
    if (spare !== undefined && spare.child.exitCode === null) spare.child.kill('SIGKILL');
    clearTimeout(this.spareIdle);
  }

  /** Kills the running process, failing what it was running. */
  private kill(): void {
    const proc = this.current;
    this.current = undefined;
    if (proc !== undefined && proc.child.exitCode === null) proc.child.kill('SIGKILL');
    for (const resolve of this.pending.values())
      resolve({ ok: false, code: 'SQLITE_CANTOPEN', message: 'the query process stopped' });
    this.pending.clear();
  }

  private async runNow(sql: string, params: unknown[], limits: QueryLimits): Promise<QueryOutput> {
    const wrap = wrappable(sql, 'sqlite');
    if ('reason' in wrap) throw new SqlFailure('refused', wrap.reason);
    await this.start(); // a child's start-up is not the statement's time
    const { signal } = limits;
    if (signal?.aborted === true) throw abortError(signal);
    const started = Date.now();
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const warm = setTimeout(() => this.warmSpare(), SPARE_AFTER_MS);
    const deadline = new Promise<Reply>((resolve) => {
      timer = setTimeout(() => resolve({ ok: false, code: 'TIMEOUT' }), limits.timeoutMs);
      onAbort = () => resolve({ ok: false, code: 'ABORTED' });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    const reply = await Promise.race([this.send(wrap.body, params, limits), deadline]).finally(
      () => {
        clearTimeout(timer);
        clearTimeout(warm);
        if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort);
      },
    );
    if (reply.code === 'ABORTED' && signal !== undefined) {
      this.kill();
      throw abortError(signal);
    }
    if (reply.code === 'TIMEOUT') {
      this.kill();
      throw new SqlFailure(
        'timeout',
        `the statement ran past the ${limits.timeoutMs} ms timeout (stopped after ${Date.now() - started} ms)`,
      );
    }
    if (reply.ok === true) {
      return {
        columns: reply.columns ?? [],
        rows: reply.rows ?? [],
        truncated: reply.truncated === true,
        ...definedProps({ over: reply.over }),
      };
    }
    if (reply.kind === 'refused') throw new SqlFailure('refused', reply.message ?? 'refused');
    throw classify(reply.code, reply.message ?? 'the statement failed');
  }

  /** The running process: the current one, else the spare, else a new one. */
  private start(): Promise<void> {
    if (this.current !== undefined && this.current.child.exitCode === null)
      return this.current.ready;
    this.current = this.spare ?? this.spawn();
    this.spare = undefined;
    clearTimeout(this.spareIdle);
    return this.current.ready;
  }

  private warmSpare(): void {
    if (this.spare !== undefined) return;
    const spare = this.spawn();
    this.spare = spare;
    spare.ready.catch(() => undefined);
    clearTimeout(this.spareIdle);
    this.spareIdle = setTimeout(() => {
      if (this.spare !== spare) return;
      this.spare = undefined;
      spare.child.kill('SIGKILL');
    }, SPARE_IDLE_MS);
    this.spareIdle.unref();
  }

  private spawn(): Proc {
    const { child, stderr } = spawnSqliteProcess(CHILD_PROGRAM, this.path);
    const proc: Proc = { child, ready: Promise.resolve() };
    proc.ready = new Promise<void>((resolve, reject) => {
      child.on('message', (message: Reply) => {
        if (message.ready === true) return resolve();
        const done = message.id === undefined ? undefined : this.pending.get(message.id);
        if (done !== undefined && message.id !== undefined) {
          this.pending.delete(message.id);
          done(message);
        }
      });
      child.on('exit', () => {
        const reason = /SqliteError: (.*)/.exec(stderr())?.[1] ?? 'the query process exited';
        reject(new SqlFailure('unavailable', reason));
        if (this.spare === proc) this.spare = undefined;
        if (this.current !== proc) return;
        this.current = undefined;
        for (const resolvePending of this.pending.values())
          resolvePending({ ok: false, code: 'SQLITE_CANTOPEN', message: reason });
        this.pending.clear();
      });
      child.on('error', (error) =>
        reject(
          new SqlFailure('unavailable', `cannot start the query process: ${error.message}`, {
            cause: error,
          }),
        ),
      );
    });
    return proc;
  }

  private send(sql: string, params: unknown[], limits: QueryLimits): Promise<Reply> {
    const id = this.nextId++;
    return new Promise<Reply>((resolve) => {
      this.pending.set(id, resolve);
      this.current?.child.send({
        id,
        sql,
        params,
        maxRows: limits.maxRows,
        maxBytes: limits.maxBytes,
      });
    });
  }
}

/** Classifies a better-sqlite3 error code. */
export function classify(code: string | undefined, message: string, cause?: unknown): SqlFailure {
  const options = cause === undefined ? {} : { cause };
  if (/more than one statement/i.test(message)) return new SqlFailure('refused', message, options);
  if (code === undefined) return new SqlFailure('invalid', message, options);
  if (code === 'SQLITE_READONLY' || code.startsWith('SQLITE_READONLY_') || code === 'SQLITE_AUTH')
    return new SqlFailure('refused', message, options);
  if (/^SQLITE_(BUSY|LOCKED|NOTADB|CANTOPEN|CORRUPT|IOERR|FULL|NOMEM|PROTOCOL)/.test(code))
    return new SqlFailure('unavailable', message, options);
  return new SqlFailure('invalid', message, options);
}
