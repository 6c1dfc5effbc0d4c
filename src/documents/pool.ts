/**
 * The document worker pool: conversions run on worker threads, never on the server's — up to
 * `size` at once, one per worker, each worker reused across jobs. Each job has a time limit; each
 * worker has a heap limit (`resourceLimits`) and its output is capped by the renderers. A breach —
 * out of time, out of memory, a crash — terminates that worker alone and answers its job with a
 * clear error; the other workers' jobs go on, the next job starts a fresh worker, and the server
 * keeps serving. A worker left without work for `idleMs` retires (a later job starts another).
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { UnavailableError } from '../core/errors.js';
import { compiledWorkerUrl } from '../core/worker-url.js';
import { breachError, failureError } from './pool-errors.js';
import type {
  DocumentKind,
  DocumentParts,
  RenderFailure,
  Rendition,
  RenderLimits,
} from './types.js';

interface Pending {
  id: number;
  uri: string;
  bytes: Uint8Array;
  kind: DocumentKind;
  parts: DocumentParts;
  resolve(rendition: Rendition): void;
  reject(error: unknown): void;
}

/** One worker and the job it runs (none while idle). */
interface Slot {
  worker: Worker;
  job: Pending | undefined;
  /** The running job's time limit. */
  timer: NodeJS.Timeout | undefined;
  /** When an idle worker retires. */
  idle: NodeJS.Timeout | undefined;
}

/** Most workers a pool runs by default, whatever the machine (each may hold its heap limit). */
export const MAX_DEFAULT_WORKERS = 4;

/** The default pool size: one worker per core the process may use, at most MAX_DEFAULT_WORKERS. */
export function defaultPoolSize(): number {
  return Math.max(1, Math.min(MAX_DEFAULT_WORKERS, availableParallelism()));
}

export interface DocumentPoolOptions {
  /** Most workers converting at once. @default defaultPoolSize() */
  size?: number | undefined;
  /** How long a worker may wait without a job before it retires, ms. @default 30000 */
  idleMs?: number | undefined;
}

export class DocumentPool {
  /** Most workers converting at once. */
  readonly size: number;
  private readonly idleMs: number;
  private readonly slots = new Set<Slot>();
  private readonly queue: Pending[] = [];
  private nextId = 1;
  /** How many workers were started (one more after each breach, and after each retirement). */
  started = 0;
  /** Most workers alive at once so far. */
  peak = 0;

  constructor(
    private readonly limits: RenderLimits,
    options: DocumentPoolOptions = {},
  ) {
    this.size = options.size ?? defaultPoolSize();
    this.idleMs = options.idleMs ?? 30_000;
    if (!Number.isSafeInteger(this.size) || this.size < 1)
      throw new RangeError(`workers must be a whole number of at least 1, got ${this.size}`);
    if (!Number.isFinite(this.idleMs) || this.idleMs < 0)
      throw new RangeError(`idleMs must be a number of milliseconds ≥ 0, got ${this.idleMs}`);
  }

  /** Workers alive now (running a job or idle). */
  get alive(): number {
    return this.slots.size;
  }

  /** Converts `bytes` (the resource `uri`, of `kind`) in a worker. Rejects with a ReservoirError. */
  render(
    uri: string,
    bytes: Uint8Array,
    kind: DocumentKind,
    parts: DocumentParts,
    signal?: AbortSignal,
  ): Promise<Rendition> {
    return new Promise<Rendition>((resolve, reject) => {
      // A job still queued when the caller gives up is dropped; the listener goes when the job
      // ends (one signal may serve many renders: the search index's, say).
      const abandon = (): void => {
        const at = this.queue.indexOf(job);
        if (at >= 0) {
          this.queue.splice(at, 1);
          reject(signal!.reason);
        }
      };
      const settle = (): void => signal?.removeEventListener('abort', abandon);
      const job: Pending = {
        id: this.nextId++,
        uri,
        bytes,
        kind,
        parts,
        resolve: (rendition) => {
          settle();
          resolve(rendition);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      };
      signal?.addEventListener('abort', abandon, { once: true });
      this.queue.push(job);
      this.pump();
    });
  }

  /** Stops every worker; jobs running or queued are answered `unavailable`. */
  async close(): Promise<void> {
    const slots = [...this.slots];
    this.slots.clear();
    const queued = this.queue.splice(0);
    for (const slot of slots) {
      clearTimeout(slot.timer);
      clearTimeout(slot.idle);
    }
    const closed = (job: Pending): void =>
      job.reject(new UnavailableError(job.uri, 'the document converter was closed'));
    for (const slot of slots) if (slot.job !== undefined) closed(slot.job);
    queued.forEach(closed);
    await Promise.all(slots.map((slot) => slot.worker.terminate()));
  }

  /** Hands queued jobs to idle workers, starting workers up to the pool's size. */
  private pump(): void {
    while (this.queue.length > 0) {
      let slot: Slot | undefined;
      for (const candidate of this.slots)
        if (candidate.job === undefined) {
          slot = candidate;
          break;
        }
      if (slot === undefined) {
        if (this.slots.size >= this.size) return;
        slot = this.spawn();
      }
      this.run(slot, this.queue.shift()!);
    }
  }

  private run(slot: Slot, job: Pending): void {
    clearTimeout(slot.idle);
    slot.idle = undefined;
    slot.job = job;
    slot.worker.ref();
    slot.timer = setTimeout(
      () => this.breach(slot, breachError('time', job.uri, this.limits)),
      this.limits.timeoutMs,
    );
    // A copy is transferred: the caller keeps its bytes (a cache or a second content item may need them).
    const copy = new Uint8Array(job.bytes);
    slot.worker.postMessage(
      { id: job.id, bytes: copy, kind: job.kind, parts: job.parts, limits: this.limits },
      [copy.buffer],
    );
  }

  private spawn(): Slot {
    const worker = new Worker(compiledWorkerUrl(import.meta.url, 'documents/worker.js'), {
      resourceLimits: {
        maxOldGenerationSizeMb: this.limits.maxHeapMb,
        maxYoungGenerationSizeMb: Math.min(64, Math.max(8, Math.floor(this.limits.maxHeapMb / 8))),
      },
      stdout: true,
      stderr: true,
    });
    const slot: Slot = { worker, job: undefined, timer: undefined, idle: undefined };
    this.slots.add(slot);
    this.started += 1;
    this.peak = Math.max(this.peak, this.slots.size);
    worker.on(
      'message',
      (message: { id: number; rendition?: Rendition; failure?: RenderFailure }) => {
        const job = slot.job;
        if (job === undefined || message.id !== job.id || !this.slots.has(slot)) return;
        // A reply with neither is the worker's fault: its job fails and the worker goes, as on a crash.
        if (message.rendition === undefined && message.failure === undefined) {
          this.breach(slot, breachError('reply', job.uri, this.limits));
          return;
        }
        this.release(slot);
        if (message.rendition !== undefined) job.resolve(message.rendition);
        else job.reject(failureError(job.uri, message.failure!));
        this.pump();
      },
    );
    worker.on('error', (error: Error & { code?: string }) => {
      const uri = slot.job?.uri ?? '';
      this.breach(
        slot,
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? breachError('memory', uri, this.limits)
          : breachError('crash', uri, this.limits, error.message),
      );
    });
    worker.on('exit', () =>
      this.breach(slot, breachError('exit', slot.job?.uri ?? '', this.limits)),
    );
    return slot;
  }

  /** The slot's job is over: the worker waits for the next one, and retires if none comes. */
  private release(slot: Slot): void {
    clearTimeout(slot.timer);
    slot.timer = undefined;
    slot.job = undefined;
    slot.worker.unref();
    slot.idle = setTimeout(() => this.retire(slot), this.idleMs);
    slot.idle.unref();
  }

  private retire(slot: Slot): void {
    if (slot.job !== undefined || !this.slots.delete(slot)) return;
    void slot.worker.terminate();
  }

  /** Ends the slot's job with `error` and discards its worker (a fresh one serves later jobs). */
  private breach(slot: Slot, error: Error): void {
    if (!this.slots.delete(slot)) return;
    clearTimeout(slot.timer);
    clearTimeout(slot.idle);
    const job = slot.job;
    slot.job = undefined;
    void slot.worker.terminate();
    job?.reject(error);
    this.pump();
  }
}
