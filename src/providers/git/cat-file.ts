/**
 * One long-lived `git cat-file --batch-command` process per repository, for every object read
 * (blobs, trees, commits) and every ref resolution. Requests are written at once and answered in
 * order, so concurrent reads pipeline through one pipe; the queue is bounded (`maxPending`). The
 * process starts on first use, is restarted on the next request after it dies (every request in
 * flight then fails with GitFailure), and exits after `idleMs` without requests. While requests are
 * pending its pipes hold the event loop open; while idle they do not.
 *
 * Only object names this module is given travel on the pipe, one per line; a name containing a line
 * break or NUL is refused before anything is written. Nothing here applies filters or textconv:
 * `cat-file` prints objects as stored.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { describeSpawnError, gitArgs, GitFailure } from './exec.js';

export interface ObjectInfo {
  id: string;
  type: string;
  size: number;
}

export interface CatFileOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Requests in flight at most; more fail at once with GitFailure. @default 4096 */
  maxPending?: number;
  /** Idle time after which the process exits, ms. @default 30000 */
  idleMs?: number;
  /** Longest wait for any progress while requests are pending; past it the process is killed. @default 30000 */
  stallMs?: number;
}

/** A `contents` answer over its byte bound: the object exists, but its bytes were skipped. */
export class ObjectTooLarge extends Error {
  constructor(readonly info: ObjectInfo) {
    super(`object ${info.id} is ${info.size} bytes`);
    this.name = 'ObjectTooLarge';
  }
}

interface Request {
  command: 'info' | 'contents';
  maxBytes: number;
  resolve(value: Answer): void;
  reject(error: Error): void;
}

type Answer = { info: ObjectInfo; data?: Buffer } | 'missing' | 'ambiguous';

type Child = ChildProcessByStdio<Writable, Readable, Readable>;

export class CatFile {
  private child: Child | undefined;
  private readonly queue: Request[] = [];
  private buffer: Buffer = Buffer.alloc(0);
  /** The body being received: its header and the bytes still due (content plus the trailing LF). */
  private body:
    { info: ObjectInfo; due: number; parts: Buffer[] | undefined; request: Request } | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private stallTimer: NodeJS.Timeout | undefined;
  private stderr = '';
  private readonly maxPending: number;
  private readonly idleMs: number;
  private closed = false;
  /** Processes started so far (tests and the bench read it). */
  starts = 0;

  constructor(private readonly options: CatFileOptions) {
    this.maxPending = options.maxPending ?? 4096;
    this.idleMs = options.idleMs ?? 30_000;
  }

  /** Type and size of `name`, or undefined when it names no object (or an ambiguous prefix). */
  async info(name: string): Promise<ObjectInfo | undefined> {
    const answer = await this.request('info', name, 0);
    return typeof answer === 'string' ? undefined : answer.info;
  }

  /** Like `info`, but tells a missing name from an ambiguous abbreviation. */
  async lookup(name: string): Promise<ObjectInfo | 'missing' | 'ambiguous'> {
    const answer = await this.request('info', name, 0);
    return typeof answer === 'string' ? answer : answer.info;
  }

  /** The object's bytes, or undefined when it names none; ObjectTooLarge past `maxBytes`. */
  async contents(
    name: string,
    maxBytes: number,
  ): Promise<{ info: ObjectInfo; data: Buffer } | undefined> {
    const answer = await this.request('contents', name, maxBytes);
    return typeof answer === 'string'
      ? undefined
      : { info: answer.info, data: answer.data ?? Buffer.alloc(0) };
  }

  /** Stops the process; pending requests fail. Later requests start a new one unless `final`. */
  stop(final = false): void {
    if (final) this.closed = true;
    const child = this.child;
    if (child === undefined) return;
    this.detach(child, new GitFailure('the git object reader was stopped'));
    child.kill('SIGKILL');
  }

  /** The running process's id, if one is running. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  get pending(): number {
    return this.queue.length;
  }

  private request(command: Request['command'], name: string, maxBytes: number): Promise<Answer> {
    if (this.closed) return Promise.reject(new GitFailure('the repository provider is closed'));
    if (name.length === 0 || /[\n\r\0]/.test(name))
      return Promise.reject(new Error(`invalid object name for cat-file: ${JSON.stringify(name)}`));
    if (this.queue.length >= this.maxPending) {
      return Promise.reject(
        new GitFailure(
          `too many git object reads in flight (${this.maxPending}); try again shortly`,
        ),
      );
    }
    const child = this.child ?? this.start();
    return new Promise((resolve, reject) => {
      this.queue.push({ command, maxBytes, resolve, reject });
      if (this.queue.length === 1) this.hold(child, true);
      child.stdin.write(`${command} ${name}\n`);
    });
  }

  private start(): Child {
    this.starts += 1;
    const child = spawn('git', gitArgs(['cat-file', '--batch-command']), {
      cwd: this.options.cwd,
      env: this.options.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      windowsHide: true,
    });
    this.child = child;
    this.buffer = Buffer.alloc(0);
    this.body = undefined;
    this.stderr = '';
    child.stdout.on('data', (chunk: Buffer) => this.receive(chunk));
    child.stderr.on('data', (chunk: Buffer) => {
      if (this.stderr.length < 4096) this.stderr += chunk.toString('utf8');
    });
    child.stdin.on('error', () => undefined); // EPIPE when it died: reported by 'close'
    child.once('error', (error) =>
      this.detach(child, new GitFailure(describeSpawnError(error), { cause: error })),
    );
    child.once('close', (code, signal) => {
      const why = this.stderr.trim().split('\n')[0] ?? '';
      this.detach(
        child,
        new GitFailure(
          why !== '' ? why : `the git object reader exited (${signal ?? `code ${String(code)}`})`,
        ),
      );
    });
    this.hold(child, false);
    return child;
  }

  /** Forgets `child` (if current) and fails everything it owed. */
  private detach(child: Child, error: Error): void {
    if (this.child !== child) return;
    this.child = undefined;
    this.body = undefined;
    this.buffer = Buffer.alloc(0);
    if (this.idleTimer !== undefined) clearTimeout(this.idleTimer);
    if (this.stallTimer !== undefined) clearTimeout(this.stallTimer);
    this.idleTimer = undefined;
    this.stallTimer = undefined;
    for (const request of this.queue.splice(0)) request.reject(error);
    child.stdin.destroy();
    child.stdout.destroy();
    child.stderr.destroy();
  }

  /** Refs the pipes while requests are pending (a caller awaits them), unrefs them when idle. */
  private hold(child: Child, busy: boolean): void {
    const streams = [child.stdout, child.stderr, child.stdin] as unknown as {
      ref?(): void;
      unref?(): void;
    }[];
    if (busy) {
      if (this.idleTimer !== undefined) clearTimeout(this.idleTimer);
      this.idleTimer = undefined;
      const stallMs = this.options.stallMs ?? 30_000;
      this.stallTimer = setTimeout(() => {
        if (this.child !== child) return;
        this.detach(
          child,
          new GitFailure(`the git object reader made no progress for ${stallMs} ms`),
        );
        child.kill('SIGKILL');
      }, stallMs);
      child.ref();
      for (const s of streams) s.ref?.();
    } else {
      if (this.stallTimer !== undefined) clearTimeout(this.stallTimer);
      this.stallTimer = undefined;
      child.unref();
      for (const s of streams) s.unref?.();
      if (this.idleTimer !== undefined) clearTimeout(this.idleTimer);
      this.idleTimer = setTimeout(() => {
        if (this.child === child && this.queue.length === 0) child.stdin.end();
      }, this.idleMs);
      this.idleTimer.unref();
    }
  }

  private receive(chunk: Buffer): void {
    this.stallTimer?.refresh();
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    for (;;) {
      if (this.body !== undefined) {
        const body = this.body;
        const take = Math.min(body.due, this.buffer.length);
        if (take === 0) return;
        if (body.parts !== undefined) body.parts.push(this.buffer.subarray(0, take));
        this.buffer = this.buffer.subarray(take);
        body.due -= take;
        if (body.due > 0) return;
        this.body = undefined;
        this.settle();
        if (body.parts === undefined) body.request.reject(new ObjectTooLarge(body.info));
        else {
          const data = Buffer.concat(body.parts);
          body.request.resolve({ info: body.info, data: data.subarray(0, body.info.size) });
        }
        continue;
      }
      const newline = this.buffer.indexOf(0x0a);
      if (newline < 0) return;
      const line = this.buffer.subarray(0, newline).toString('utf8');
      this.buffer = this.buffer.subarray(newline + 1);
      const request = this.queue[0];
      if (request === undefined) continue; // nothing asked: ignore
      const parts = line.split(' ');
      const status = parts[parts.length - 1];
      if (parts.length < 3 || status === 'missing' || status === 'ambiguous') {
        this.settle();
        request.resolve(status === 'ambiguous' ? 'ambiguous' : 'missing');
        continue;
      }
      const info: ObjectInfo = { id: parts[0]!, type: parts[1]!, size: Number(parts[2]) };
      if (request.command === 'info') {
        this.settle();
        request.resolve({ info });
        continue;
      }
      this.body = {
        info,
        due: info.size + 1,
        parts: info.size <= request.maxBytes ? [] : undefined,
        request,
      };
    }
  }

  /** The head request is answered: drop it; go idle when nothing else is due. */
  private settle(): void {
    this.queue.shift();
    if (this.queue.length === 0 && this.child !== undefined) this.hold(this.child, false);
  }
}
