/**
 * A catalog of named items — prompts, tools — in a deterministic order (by name), paged by the
 * registry's cursors, reporting every change so `list_changed` can go out.
 */
import { ConfigError } from './errors.js';

export class Catalog<T extends { name: string }> {
  private readonly items = new Map<string, T>();
  private sorted: T[] | undefined;
  private readonly listeners = new Set<() => void>();

  /** `kind` names the list in cursors and errors, e.g. `prompts`. */
  constructor(readonly kind: string) {}

  get size(): number {
    return this.items.size;
  }

  /** Adds an item; a second item with the same name is a ConfigError. */
  add(item: T): this {
    if (this.items.has(item.name))
      throw new ConfigError(this.kind, `duplicate name '${item.name}'`, { name: item.name });
    this.items.set(item.name, item);
    this.changed();
    return this;
  }

  /** Removes an item by name; returns whether it was there. */
  remove(name: string): boolean {
    const removed = this.items.delete(name);
    if (removed) this.changed();
    return removed;
  }

  /** Replaces everything at once (a config reload): one change, however many items moved. */
  replaceAll(items: readonly T[]): void {
    const next = new Map<string, T>();
    for (const item of items) {
      if (next.has(item.name))
        throw new ConfigError(this.kind, `duplicate name '${item.name}'`, { name: item.name });
      next.set(item.name, item);
    }
    this.items.clear();
    for (const [name, item] of next) this.items.set(name, item);
    this.changed();
  }

  get(name: string): T | undefined {
    return this.items.get(name);
  }

  /** Every item, sorted by name (UTF-16 code units). */
  all(): readonly T[] {
    this.sorted ??= [...this.items.values()].sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
    return this.sorted;
  }

  /** Calls `listener` after every change; returns the function that stops it. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    this.sorted = undefined;
    for (const listener of [...this.listeners]) listener();
  }
}
