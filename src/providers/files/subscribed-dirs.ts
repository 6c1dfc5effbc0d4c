/**
 * The `fs.watch` handles behind subscribed resources: one per directory holding a subscribed file
 * (or per subscribed directory), counted, so a write is heard within a few milliseconds — sooner
 * than the tree watcher's batches. A handle whose directory went away is dropped; `reopen` restores
 * it when the directory comes back. While the root is polled, the counts are kept without handles.
 */
import { watch as fsWatch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';

export class SubscribedDirs {
  private readonly dirs = new Map<string, { watcher: FSWatcher | undefined; count: number }>();

  /**
   * @param onChild hears an event in a watched directory: the directory, and the child it names.
   * @param onRefused hears the OS refusing a handle (out of inotify watches or descriptors).
   */
  constructor(
    private readonly onChild: (dir: string, child: string | undefined) => void,
    private readonly onRefused: (error: unknown) => void,
  ) {}

  get size(): number {
    return this.dirs.size;
  }

  has(dir: string): boolean {
    return this.dirs.has(dir);
  }

  /** One more subscription in `dir`; its handle is opened unless `open` is false (polling). */
  retain(dir: string, open: boolean): void {
    const existing = this.dirs.get(dir);
    if (existing !== undefined) {
      existing.count += 1;
      return;
    }
    this.dirs.set(dir, { watcher: open ? this.open(dir) : undefined, count: 1 });
  }

  release(dir: string): void {
    const entry = this.dirs.get(dir);
    if (entry === undefined) return;
    entry.count -= 1;
    if (entry.count > 0) return;
    entry.watcher?.close();
    this.dirs.delete(dir);
  }

  /** Opens `dir`'s handle again (the directory was made anew). */
  reopen(dir: string): void {
    const entry = this.dirs.get(dir);
    if (entry === undefined) return;
    entry.watcher?.close();
    entry.watcher = this.open(dir);
  }

  /** Closes every handle, keeping the counts (the root fell back to polling). */
  suspend(): void {
    for (const entry of this.dirs.values()) {
      entry.watcher?.close();
      entry.watcher = undefined;
    }
  }

  close(): void {
    this.suspend();
    this.dirs.clear();
  }

  private open(dir: string): FSWatcher | undefined {
    try {
      const watcher = fsWatch(dir, { persistent: false }, (_event, name) =>
        this.onChild(dir, name === null ? undefined : join(dir, name.toString())),
      );
      watcher.on('error', () => {
        // The directory went away; the tree watcher reports that, and reopen restores the handle.
        watcher.close();
        const entry = this.dirs.get(dir);
        if (entry?.watcher === watcher) entry.watcher = undefined;
      });
      return watcher;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOSPC' || code === 'EMFILE') this.onRefused(error);
      return undefined;
    }
  }
}
