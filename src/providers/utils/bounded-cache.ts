/**
 * A cache bounded in bytes: each entry states its own size, and the least recently used go first
 * when a new one would overflow the bound. An entry larger than the whole bound is not kept.
 *
 * Backed by `lru-cache` (maxSize + sizeCalculation): on the bench's mix of gets and evicting sets it
 * costs ~0.15× the Map-reordering version this replaced (docs/design.md, "Libraries").
 */
import { LRUCache } from 'lru-cache';

export class BoundedCache<V extends { readonly bytes: number }> {
  private readonly entries: LRUCache<string, V>;

  constructor(readonly maxBytes: number) {
    // lru-cache counts sizes as positive integers; a zero-byte entry still takes one.
    this.entries = new LRUCache<string, V>({
      maxSize: Math.max(1, maxBytes),
      sizeCalculation: (entry) => Math.max(1, Math.ceil(entry.bytes)),
    });
  }

  /** Bytes held. */
  get bytes(): number {
    return this.entries.calculatedSize;
  }

  get size(): number {
    return this.entries.size;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** The entry, now the most recently used. */
  get(key: string): V | undefined {
    return this.entries.get(key);
  }

  set(key: string, entry: V): void {
    if (entry.bytes > this.maxBytes) {
      this.entries.delete(key);
      return;
    }
    this.entries.set(key, entry);
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
