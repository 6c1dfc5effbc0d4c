/**
 * The document worker pool: conversions run on a worker thread, never on the server's, one at a
 * time, reused across reads. Each job has a time limit; the worker has a heap limit
 * (`resourceLimits`) and its output is capped by the renderers. A breach — out of time, out of
 * memory, a crash — terminates the worker and answers that job with a clear error; the next job
 * starts a fresh worker, and the server keeps serving.
 */
import { Worker } from 'node:worker_threads';
import {
  InvalidArgumentError,
  InvalidDocumentError,
  TooLargeError,
  UnsupportedError,
} from '../core/errors.js';
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

/** Where the worker's compiled entry is: beside this module in dist/, or in dist/ when run from src/ (tests). */
function workerUrl(): URL {
  const here = import.meta.url;
  return here.endsWith('.ts')
    ? new URL('../../dist/documents/worker.js', here)
    : new URL('../documents/worker.js', here);
}

export class DocumentPool {
  private worker: Worker | undefined;
  private readonly queue: Pending[] = [];
  private running: Pending | undefined;
  private timer: NodeJS.Timeout | undefined;
  private nextId = 1;
  /** How many workers were started (one more after each breach). */
  started = 0;

  constructor(private readonly limits: RenderLimits) {}

  /** Converts `bytes` (the resource `uri`, of `kind`) in the worker. Rejects with a ReservoirError. */
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

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    if (worker !== undefined) await worker.terminate();
  }

  private pump(): void {
    if (this.running !== undefined) return;
    const job = this.queue.shift();
    if (job === undefined) {
      this.worker?.unref();
      return;
    }
    this.running = job;
    const worker = this.ensureWorker();
    worker.ref();
    this.timer = setTimeout(() => {
      this.breach(
        new TooLargeError(
          job.uri,
          this.limits.timeoutMs,
          this.limits.timeoutMs,
          'conversion time (ms)',
        ),
      );
    }, this.limits.timeoutMs);
    // A copy is transferred: the caller keeps its bytes (a cache or a second content item may need them).
    const copy = new Uint8Array(job.bytes);
    worker.postMessage(
      { id: job.id, bytes: copy, kind: job.kind, parts: job.parts, limits: this.limits },
      [copy.buffer],
    );
  }

  private ensureWorker(): Worker {
    if (this.worker !== undefined) return this.worker;
    const worker = new Worker(workerUrl(), {
      resourceLimits: {
        maxOldGenerationSizeMb: this.limits.maxHeapMb,
        maxYoungGenerationSizeMb: Math.min(64, Math.max(8, Math.floor(this.limits.maxHeapMb / 8))),
      },
      stdout: true,
      stderr: true,
    });
    this.started += 1;
    worker.on(
      'message',
      (message: { id: number; rendition?: Rendition; failure?: RenderFailure }) => {
        const job = this.running;
        if (job === undefined || message.id !== job.id) return;
        this.finish();
        if (message.rendition !== undefined) job.resolve(message.rendition);
        else job.reject(toError(job.uri, message.failure!));
        this.pump();
      },
    );
    worker.on('error', (error: Error & { code?: string }) => {
      const job = this.running;
      const uri = job?.uri ?? '';
      this.breach(
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new TooLargeError(
              uri,
              this.limits.maxHeapMb * 1024 * 1024,
              this.limits.maxHeapMb * 1024 * 1024,
              'conversion memory',
            )
          : new InvalidDocumentError(uri, `the converter failed: ${error.message}`),
      );
    });
    worker.on('exit', () => {
      if (this.worker === worker) {
        this.worker = undefined;
        if (this.running !== undefined)
          this.breach(
            new InvalidDocumentError(this.running.uri, 'the converter stopped unexpectedly'),
          );
      }
    });
    this.worker = worker;
    return worker;
  }

  /** Ends the running job with `error`, discards the worker (a fresh one serves the next job). */
  private breach(error: Error): void {
    const job = this.running;
    const worker = this.worker;
    this.worker = undefined;
    this.finish();
    void worker?.terminate();
    job?.reject(error);
    this.pump();
  }

  private finish(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.running = undefined;
  }
}

function toError(uri: string, failure: RenderFailure): Error {
  const data = failure.data ?? {};
  switch (failure.kind) {
    case 'unsupported':
      return new UnsupportedError(uri, failure.message, data);
    case 'too_large': {
      const error = new TooLargeError(
        uri,
        Number(data['size'] ?? 0),
        Number(data['limit'] ?? 0),
        String(data['measure'] ?? 'document'),
      );
      // The renderer's sentence says what was too large and what to do instead.
      error.message = `Resource too large to convert: ${uri}: ${failure.message}`;
      Object.assign(error.data, data, { reason: failure.message });
      return error;
    }
    case 'invalid_argument':
      return new InvalidArgumentError(String(data['argument'] ?? 'uri'), failure.message, {
        uri,
        ...data,
      });
    default:
      return new InvalidDocumentError(uri, failure.message, data);
  }
}
