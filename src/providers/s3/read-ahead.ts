/**
 * Reading a listing ahead: while a client pages through a bucket, the next ListObjectsV2 page is
 * asked for as soon as a page is answered, so the store's round trip runs while the client reads
 * the page it has — a listing then costs one round trip of whichever is slower a page, not both.
 *
 * Only for a client that is paging through: a page is read ahead once a page after the first was
 * asked for (a client that wants the first page alone costs the store no extra request), and a page
 * read ahead is used once, for the same resume key and page size, within `ttlMs` (then dropped, its
 * request aborted if still running). At most `maxPending` pages wait at once (several clients
 * paging), the oldest dropped first. A page read ahead that failed is simply asked again; a page
 * served from here is at most `ttlMs` older than one asked at that moment — as a listing of a
 * changing bucket is anyway, page by page.
 */
import type { ListObjectsV2CommandOutput } from '@aws-sdk/client-s3';
import type { ListPage, ListParams } from './listing.js';

/** How long a page read ahead waits to be asked for, ms. */
export const READ_AHEAD_TTL_MS = 5000;
/** Pages read ahead that may wait at once. */
export const READ_AHEAD_PENDING = 4;

interface Pending {
  page: Promise<ListObjectsV2CommandOutput>;
  abort: AbortController;
  timer: NodeJS.Timeout;
}

export class ListReadAhead {
  private readonly pending = new Map<string, Pending>();

  constructor(
    private readonly listPage: ListPage,
    private readonly ttlMs = READ_AHEAD_TTL_MS,
    private readonly maxPending = READ_AHEAD_PENDING,
  ) {}

  /**
   * A page resumed after `asked` was answered, ending in `last` and truncated (S3 gave `token` to
   * go on): when the client is past its first page, the page after `last` is read now, for a later
   * `take` with that key and `params.maxKeys`.
   */
  answered(
    asked: string | undefined,
    last: string,
    token: string | undefined,
    params: Omit<ListParams, 'after' | 'token'>,
    uri: string,
  ): void {
    if (asked === undefined) return;
    const key = keyOf(last, params.maxKeys);
    this.drop(key);
    while (this.pending.size >= this.maxPending) this.drop(this.pending.keys().next().value!);
    const abort = new AbortController();
    const page = this.listPage({ ...params, after: last, token }, uri, abort.signal);
    // a page nobody takes fails unheard
    page.catch(() => undefined);
    const timer = setTimeout(() => this.drop(key), this.ttlMs).unref();
    this.pending.set(key, { page, abort, timer });
  }

  /**
   * The page read ahead for `after` and `maxKeys`, once its request answered; undefined when none
   * was read ahead or its request failed (the caller asks the store itself). Rejects when `signal`
   * aborts first.
   */
  async take(
    after: string,
    maxKeys: number,
    signal?: AbortSignal,
  ): Promise<ListObjectsV2CommandOutput | undefined> {
    const key = keyOf(after, maxKeys);
    const pending = this.pending.get(key);
    if (pending === undefined) return undefined;
    this.pending.delete(key);
    clearTimeout(pending.timer);
    signal?.throwIfAborted();
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => {
        pending.abort.abort();
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    aborted.catch(() => undefined);
    try {
      return await Promise.race([pending.page, aborted]);
    } catch (error) {
      if (signal?.aborted === true) throw error;
      return undefined;
    } finally {
      if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Pages waiting now (for tests). */
  get size(): number {
    return this.pending.size;
  }

  /** Drops every page waiting, aborting their requests. */
  close(): void {
    for (const key of [...this.pending.keys()]) this.drop(key);
  }

  private drop(key: string): void {
    const pending = this.pending.get(key);
    if (pending === undefined) return;
    this.pending.delete(key);
    clearTimeout(pending.timer);
    pending.abort.abort();
  }
}

function keyOf(after: string, maxKeys: number): string {
  return `${maxKeys}\0${after}`;
}
