/**
 * The SQLite index's writer, run on a thread of its own (store-worker.ts): the feeder's calls are
 * sent to it and answered in order, so the feeder reads and walks its sources while the previous
 * batch is tokenized and committed. Failures come back with their SQLite code, so a full disk is
 * still told from a passing failure (`isWriteFailure`).
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from '../core/log.js';
import { compiledWorkerUrl } from '../core/worker-url.js';
import type { DocRange, IndexWriter, Stored, StoredPage } from './backend.js';
import type { StoreCall, StoreLog, StoreReply } from './store-worker.js';
import { isWriteFailure } from './sqlite-errors.js';
import type { NewDoc, StoreStats } from './store.js';

/** The code of the failure of every call once the writer's thread failed or ended. */
const STOPPED = 'RESERVOIR_INDEX_WRITER_STOPPED';

interface Waiting {
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export class WorkerWriter implements IndexWriter {
  readonly stats: StoreStats = { blobsWritten: 0, docsWritten: 0 };
  private readonly worker: Worker;
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 1;
  private stopped: Error | undefined;
  private readonly exited: Promise<void>;

  constructor(file: string, logger: Logger) {
    this.worker = new Worker(compiledWorkerUrl(import.meta.url, 'search/store-worker.js'), {
      workerData: { file },
    });
    // Idle, the thread does not keep the process alive; a call in flight does.
    this.worker.unref();
    this.worker.on('message', (message: StoreReply | StoreLog) => {
      if ('log' in message) {
        logger[message.log.level]({ file }, message.log.message);
        return;
      }
      Object.assign(this.stats, message.stats);
      const waiting = this.waiting.get(message.id);
      this.waiting.delete(message.id);
      if (this.waiting.size === 0) this.worker.unref();
      if (waiting === undefined) return;
      if (message.failure === undefined) waiting.resolve(message.result);
      else waiting.reject(Object.assign(new Error(message.failure.message), message.failure));
    });
    this.worker.on('error', (error) => this.fail(error.message));
    this.exited = new Promise((resolve) => {
      this.worker.once('exit', () => {
        this.fail('its thread ended');
        resolve();
      });
    });
  }

  stored(uris: readonly string[]): Promise<(Stored | null)[]> {
    return this.call('stored', [uris]) as Promise<(Stored | null)[]>;
  }

  lastDocId(): Promise<number> {
    return this.call('lastDocId', []) as Promise<number>;
  }

  storedPage(
    range: DocRange,
    upTo: number,
    after: string | undefined,
    limit: number,
  ): Promise<StoredPage> {
    return this.call('storedPage', [range, upTo, after, limit]) as Promise<StoredPage>;
  }

  hasText(key: string): Promise<boolean> {
    return this.call('hasText', [key]) as Promise<boolean>;
  }

  async write(docs: readonly NewDoc[], removals: readonly string[]): Promise<void> {
    await this.call('write', [docs, removals]);
  }

  under(uri: string): Promise<string[]> {
    return this.call('under', [uri]) as Promise<string[]>;
  }

  async keepMounts(mounts: readonly string[]): Promise<void> {
    await this.call('keepMounts', [mounts]);
  }

  /** A write SQLite refused (disk full, I/O, read-only), or any call once the thread is gone. */
  isWriteFailure(error: unknown): boolean {
    return isWriteFailure(error) || (error as { code?: unknown } | null)?.code === STOPPED;
  }

  /** Closes the write connection after the calls already sent, and ends the thread. */
  async close(): Promise<void> {
    if (this.stopped === undefined) await this.call('close', []).catch(() => undefined);
    await this.worker.terminate();
    await this.exited;
  }

  private call(method: StoreCall['method'], args: unknown[]): Promise<unknown> {
    if (this.stopped !== undefined) return Promise.reject(this.stopped);
    const id = this.nextId;
    this.nextId += 1;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.ref();
      this.worker.postMessage({ id, method, args } satisfies StoreCall);
    });
  }

  /** The thread failed or ended: every call waiting, and every later one, fails. */
  private fail(why: string): void {
    this.stopped ??= Object.assign(new Error(`the search index writer stopped: ${why}`), {
      code: STOPPED,
    });
    for (const waiting of this.waiting.values()) waiting.reject(this.stopped);
    this.waiting.clear();
  }
}
