/**
 * Listing hints from git blobs: a sniffed type and a description (utils/head.ts) from the first
 * HEAD_BYTES of each listed file, cached by blob id and name (a blob never changes). Read through the
 * repository's object reader, only for blobs up to HEAD_BLOB_LIMIT (the reader hands over whole
 * objects); a larger file keeps its type by name. A page waits for them at most its budget; reads
 * still queued then complete into the cache for the next page.
 */
import type { ResourceInfo } from '../../core/types.js';
import { BoundedCache } from '../utils/bounded-cache.js';
import { applyHead, describeHead, type HeadInfo } from '../utils/head.js';
import { HEAD_BYTES } from '../utils/sniff.js';
import type { Repository } from './repo.js';
import { waitAtMost } from '../utils/wait-at-most.js';

/** Largest blob read for its head. */
export const HEAD_BLOB_LIMIT = 256 * 1024;
const CACHE_BYTES = 8 * 1024 * 1024;

interface Cached extends HeadInfo {
  bytes: number;
}

export interface BlobListed {
  item: ResourceInfo;
  id: string;
  name: string;
  size: number;
}

export class BlobHeads {
  private readonly cache = new BoundedCache<Cached>(CACHE_BYTES);
  private readonly reading = new Map<string, Promise<void>>();

  constructor(private readonly repo: Repository) {}

  /** Describes the items of a page; waits for reads at most `budgetMs`. */
  async annotate(listed: readonly BlobListed[], budgetMs: number): Promise<void> {
    const reads: Promise<void>[] = [];
    for (const entry of listed) {
      if (entry.size > HEAD_BLOB_LIMIT) continue;
      const key = `${entry.id}\0${entry.name}`;
      if (this.cache.has(key)) continue;
      let read = this.reading.get(key);
      if (read === undefined) {
        read = this.read(key, entry).finally(() => this.reading.delete(key));
        this.reading.set(key, read);
      }
      reads.push(read);
    }
    if (reads.length > 0) await waitAtMost(Promise.all(reads), budgetMs);
    for (const entry of listed) {
      const head = this.cache.get(`${entry.id}\0${entry.name}`);
      if (head !== undefined) applyHead(entry.item, head);
    }
  }

  private async read(key: string, entry: BlobListed): Promise<void> {
    try {
      const bytes = await this.repo.blob(entry.id, HEAD_BLOB_LIMIT);
      const head = bytes.subarray(0, HEAD_BYTES);
      const info = describeHead(entry.name, head, head.length === bytes.length);
      this.cache.set(key, { ...info, bytes: key.length + (info.description?.length ?? 0) + 64 });
    } catch {
      // unreadable now (a repository going away): listed without hints
    }
  }
}
