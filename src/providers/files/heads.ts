/**
 * Listing hints from file contents: each listed file's first HEAD_BYTES sniffed and described
 * (utils/head.ts), cached by the file's signature (path, inode, size, modification and change
 * times), so an unchanged file is read once. A list page never waits long for them: it reads the
 * heads it lacks for at most `budgetMs`, hands the rest to a background drain that reads in
 * short slices between other work, and the next page (or the next listing) carries them.
 *
 * Heads are read through `openInside`, like any read: a file swapped for a link out of the root
 * after the walk is not read. What the content says is given only to callers who may read it.
 */
import { closeSync, readSync, type Stats } from 'node:fs';
import { basename } from 'node:path';
import type { ResourceInfo } from '../../core/types.js';
import { BoundedCache } from '../utils/bounded-cache.js';
import { applyHead, describeHead, type HeadInfo } from '../utils/head.js';
import { HEAD_BYTES } from '../utils/sniff.js';
import { openListed, type ListedStats } from './open-listed.js';
import { Slice } from './slice.js';

/** How long one list page may spend reading heads, ms. */
export const DEFAULT_HEAD_BUDGET_MS = 25;
/** Bytes of cached head information, as the heap holds them (~300 bytes a file: ~28,000 files). */
const CACHE_BYTES = 8 * 1024 * 1024;
/**
 * What one cached head costs beyond its strings: the entry object and the LRU's bookkeeping (a
 * heap snapshot after listing 1M files put the cache at ~4× what counting the strings alone said).
 */
const ENTRY_OVERHEAD = 200;
/**
 * Files waiting for a background read, at most (a few pages' worth); beyond, the next listing asks
 * again. A fast full listing outruns the drain, and a longer queue is only heads nobody asks for.
 */
const QUEUE_LIMIT = 2_000;
/** One background slice reads for at most this long before yielding, ms. */
const SLICE_MS = 5;
/** The drain waits until no list page has been asked for this long, ms. */
const QUIET_MS = 500;
/** Heads one list page reads itself, at most; the rest are queued for the drain. */
export const SYNC_READS = 64;

const EMPTY = Buffer.alloc(0);

/** What a file's head said, and the signature of the file it was read from. */
interface Cached extends HeadInfo, Signature {
  bytes: number;
}

/** What must not have moved since a head was read for it to hold: inode, size, times. */
type Signature = Pick<Stats, 'ino' | 'size' | 'mtimeMs' | 'ctimeMs'>;

/** A file to read the head of, as listed: the read skips it if its inode or size moved. */
type Job = ListedStats & Signature;

/** A listed file to describe: its listing entry, path and stats as listed. */
export interface Described {
  item: ResourceInfo;
  abs: string;
  stats: Stats;
}

export interface HeadOptions {
  budgetMs?: number | undefined;
}

export class FileHeads {
  private readonly cache = new BoundedCache<Cached>(CACHE_BYTES);
  private readonly queue = new Map<string, Job>();
  /**
   * The drain's next turn: a timer while paging goes on, an immediate between slices. Two fields,
   * each cleared by its own function: before Node 24, `clearImmediate` given a timer corrupts the
   * process's count of pending immediates, and a lone `setImmediate` then never runs
   * (nodejs/node#57063).
   */
  private waiting: NodeJS.Timeout | undefined;
  private draining: NodeJS.Immediate | undefined;
  /** When the last list page was annotated (performance.now()). */
  private lastPage = 0;
  private readonly budgetMs: number;
  private closed = false;

  constructor(
    private readonly root: string,
    options: HeadOptions = {},
  ) {
    this.budgetMs = options.budgetMs ?? DEFAULT_HEAD_BUDGET_MS;
  }

  /**
   * Gives each item (listed from `abs` with `stats`) what its head says: a sniffed `mimeType`, a
   * `description`, a low priority when generated. Reads for at most the budget, checked after each
   * eight reads — so a page that began late (its process descheduled, a turn given away) still
   * reads its first eight — and queues the rest. Gives the event loop a turn whenever the page's
   * `slice` is spent.
   */
  async annotate(listed: readonly Described[], slice = new Slice()): Promise<void> {
    this.lastPage = performance.now();
    const deadline = this.lastPage + this.budgetMs;
    let reads = 0;
    for (const { item, abs, stats } of listed) {
      if (slice.spent) await slice.next();
      // An empty file has no head: what its name says is all there is, at no read and no cache entry.
      if (stats.size === 0) {
        applyHead(item, describeHead(basename(abs), EMPTY, true));
        continue;
      }
      // Keyed by path, checked against the signature: no key string to build for every file.
      let head = this.cache.get(abs);
      if (head !== undefined && !sameFile(head, stats)) head = undefined;
      if (head === undefined) {
        if (reads >= SYNC_READS || (reads > 0 && reads % 8 === 0 && performance.now() > deadline)) {
          this.enqueue(abs, stats);
          continue;
        }
        reads += 1;
        head = this.read(abs, stats);
      }
      if (head !== undefined) applyHead(item, head);
    }
  }

  /** Stops the background drain and forgets what is queued. */
  close(): void {
    this.closed = true;
    this.queue.clear();
    if (this.waiting !== undefined) clearTimeout(this.waiting);
    if (this.draining !== undefined) clearImmediate(this.draining);
    this.waiting = undefined;
    this.draining = undefined;
  }

  /** Files queued for a background read (for tests and metrics). */
  get queued(): number {
    return this.queue.size;
  }

  private enqueue(abs: string, stats: Stats): void {
    if (this.closed || this.queue.size >= QUEUE_LIMIT) return;
    const { dev, ino, size, mtimeMs, ctimeMs } = stats;
    this.queue.set(abs, { dev, ino, size, mtimeMs, ctimeMs });
    if (this.waiting === undefined && this.draining === undefined) this.wait(QUIET_MS);
  }

  private wait(ms: number): void {
    this.waiting = setTimeout(() => {
      this.waiting = undefined;
      this.drain();
    }, ms);
    this.waiting.unref();
  }

  private schedule(): void {
    this.draining = setImmediate(() => {
      this.draining = undefined;
      this.drain();
    });
    this.draining.unref();
  }

  private drain(): void {
    if (this.closed) return;
    // A client still paging: wait until it stops, so its pages do not queue behind reads.
    const sincePage = performance.now() - this.lastPage;
    if (sincePage < QUIET_MS) {
      this.wait(QUIET_MS - sincePage);
      return;
    }
    const until = performance.now() + SLICE_MS;
    for (const [abs, job] of this.queue) {
      this.queue.delete(abs);
      const cached = this.cache.get(abs);
      if (cached === undefined || !sameFile(cached, job)) this.read(abs, job);
      if (performance.now() > until) break;
    }
    if (this.queue.size > 0) this.schedule();
  }

  /** Reads and caches the head of the file listed at `abs`, unless it changed since its stat. */
  private read(abs: string, stats: ListedStats & Signature): Cached | undefined {
    let fd;
    try {
      fd = openListed(this.root, abs, stats);
    } catch {
      return undefined; // unreadable now: listed without hints
    }
    if (fd === undefined) return undefined;
    try {
      const length = Math.min(HEAD_BYTES, stats.size);
      const buffer = Buffer.allocUnsafe(length);
      let offset = 0;
      while (offset < length) {
        const n = readSync(fd, buffer, offset, length - offset, offset);
        if (n === 0) break;
        offset += n;
      }
      const info = describeHead(basename(abs), buffer.subarray(0, offset), offset === stats.size);
      const { ino, size, mtimeMs, ctimeMs } = stats;
      const strings = abs.length + (info.description?.length ?? 0);
      const cached: Cached = {
        ...info,
        ino,
        size,
        mtimeMs,
        ctimeMs,
        bytes: 2 * strings + ENTRY_OVERHEAD,
      };
      this.cache.set(abs, cached);
      return cached;
    } catch {
      return undefined;
    } finally {
      closeSync(fd);
    }
  }
}

function sameFile(a: Signature, b: Signature): boolean {
  return a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;
}
