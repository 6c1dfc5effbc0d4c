/**
 * Documents the model can read: PDF, Word, Excel, CSV, PowerPoint, HTML, EPUB (and images, by OCR)
 * as Markdown with part markers. The libraries load only inside the conversion worker, on the
 * first document read; deciding whether something is a document costs nothing.
 *
 * @example
 * const renderer = new DocumentRenderer({ stateDir: '/var/cache/reservoir' });
 * const { markdown, outline } = await renderer.render(bytes, 'application/pdf', 'file:///a.pdf', { pages: { start: 2, end: 3 } });
 */
import { join } from 'node:path';
import { UnsupportedError } from '../core/errors.js';
import { contentHash, RenditionCache, renditionKey } from './cache.js';
import { documentKind } from './kinds.js';
import { DocumentPool } from './pool.js';
import {
  DEFAULT_RENDER_LIMITS,
  type DocumentParts,
  type Rendition,
  type RenderLimits,
} from './types.js';

export { documentKind } from './kinds.js';
export type {
  DocumentKind,
  DocumentOutline,
  DocumentParts,
  PartMarker,
  Rendition,
  RenderLimits,
} from './types.js';
export { DEFAULT_RENDER_LIMITS } from './types.js';

export interface DocumentRendererOptions {
  /** The state directory; renditions are cached under `renditions/` in it. Without it, memory only. */
  stateDir?: string | undefined;
  /** Most bytes the disk cache keeps. @default 256 MiB */
  maxCacheBytes?: number | undefined;
  /** Conversion bounds (time, memory, output, inflation, pages, OCR). */
  limits?: Partial<RenderLimits> | undefined;
  /**
   * Largest original read for its rendition, whatever the source's own read cap: the rendition,
   * not the original, is what is sent. @default DEFAULT_MAX_DOCUMENT_BYTES (64 MiB)
   */
  maxDocumentBytes?: number | undefined;
  /**
   * Most conversions at once, each in its own worker (each with the heap limit of `limits`).
   * @default one per core the process may use, at most 4 (pool.ts defaultPoolSize)
   */
  workers?: number | undefined;
  /** How long a worker may sit without a conversion before it retires, ms. @default 30000 */
  workerIdleMs?: number | undefined;
}

/** The default document cap: documents up to this size render from any source. */
export const DEFAULT_MAX_DOCUMENT_BYTES = 64 * 1024 * 1024;

/** Converts documents in a pool of bounded workers, behind a content-hash cache. */
export class DocumentRenderer {
  readonly limits: RenderLimits;
  /** Largest original read for its rendition (see DocumentRendererOptions.maxDocumentBytes). */
  readonly maxDocumentBytes: number;
  private readonly pool: DocumentPool;
  private readonly cache: RenditionCache;
  /** Conversions under way by cache key, so concurrent reads of one document convert it once. */
  private readonly inFlight = new Map<string, Promise<Rendition>>();

  constructor(options: DocumentRendererOptions = {}) {
    this.limits = { ...DEFAULT_RENDER_LIMITS, ...options.limits };
    this.maxDocumentBytes = options.maxDocumentBytes ?? DEFAULT_MAX_DOCUMENT_BYTES;
    if (!Number.isSafeInteger(this.maxDocumentBytes) || this.maxDocumentBytes < 1)
      throw new RangeError(
        `maxDocumentBytes must be a positive whole number of bytes, got ${this.maxDocumentBytes}`,
      );
    this.pool = new DocumentPool(this.limits, {
      size: options.workers,
      idleMs: options.workerIdleMs,
    });
    this.cache = new RenditionCache({
      dir: options.stateDir === undefined ? undefined : join(options.stateDir, 'renditions'),
      maxDiskBytes: options.maxCacheBytes,
    });
  }

  /** Whether a resource of this type and URI is rendered as a document. */
  handles(mimeType: string | undefined, uri: string): boolean {
    return documentKind(mimeType, uri) !== undefined;
  }

  /**
   * The Markdown rendition of `bytes` (served as `mimeType` under `uri`), or of the part `parts`
   * names. Rejects with a ReservoirError: InvalidArgumentError (a part out of range, naming the valid
   * range), InvalidDocumentError, UnsupportedError, TooLargeError; `unsupported` too for a type that
   * is not a document.
   */
  render(
    bytes: Uint8Array,
    mimeType: string | undefined,
    uri: string,
    parts: DocumentParts = {},
    signal?: AbortSignal,
  ): Promise<Rendition> {
    return this.renderHashed(contentHash(bytes), () => bytes, mimeType, uri, parts, signal);
  }

  /**
   * As render, for bytes whose content hash (cache.ts contentHash or contentsHash) the caller
   * knows: `bytes` is called only when the rendition is not cached, so a hit copies nothing.
   */
  async renderHashed(
    hash: string,
    bytes: () => Uint8Array,
    mimeType: string | undefined,
    uri: string,
    parts: DocumentParts = {},
    signal?: AbortSignal,
  ): Promise<Rendition> {
    const kind = documentKind(mimeType, uri);
    if (kind === undefined) {
      throw new UnsupportedError(
        uri,
        `${mimeType ?? 'this type'} is not a document type Reservoir converts`,
      );
    }
    const key = renditionKey(hash, kind, parts);
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached;
    let pending = this.inFlight.get(key);
    if (pending === undefined) {
      pending = this.pool.render(uri, bytes(), kind, parts, signal).then((rendition) => {
        this.cache.set(key, rendition);
        return rendition;
      });
      this.inFlight.set(key, pending);
      const forget = (): void => void this.inFlight.delete(key);
      pending.then(forget, forget);
    }
    return pending;
  }

  /** How many conversion workers were started (one more after each breach), for tests and metrics. */
  get workersStarted(): number {
    return this.pool.started;
  }

  /** The conversion workers: the most at once (`size`), alive now, the most alive so far. */
  get workers(): { size: number; alive: number; peak: number } {
    return { size: this.pool.size, alive: this.pool.alive, peak: this.pool.peak };
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}

let shared: DocumentRenderer | undefined;

/**
 * The Markdown rendition of one document, with a process-wide renderer (memory cache only). For a
 * server, make a DocumentRenderer with the state directory instead.
 *
 * @example
 * const { markdown } = await renderDocument(readFileSync('report.pdf'), 'application/pdf');
 */
export function renderDocument(
  bytes: Uint8Array,
  mimeType: string,
  parts: DocumentParts = {},
  uri = 'document',
): Promise<Rendition> {
  shared ??= new DocumentRenderer();
  return shared.render(bytes, mimeType, uri, parts);
}
