/**
 * The default recursive tree watcher of a files root: one `fs.watch` (one inotify watch) per
 * directory, and nothing per file. `@parcel/watcher` — the watcher this replaces — keeps a record
 * of every file below the root (~220 bytes of native memory a file: 212 MB for a 1,000,000-file
 * tree) and stats them all before its subscription is ready; this one holds a handle per directory
 * (about a kilobyte each) and only reads the directories, asynchronously, to find the ones below.
 *
 * An event names a directory's child. A 'rename' (created, deleted, moved in or out) is told apart
 * by an lstat of the path: there now → `create` (a new directory is watched at once, with every
 * directory below it), gone → `delete` (a watched directory's handles below it are closed). A
 * 'change' (written, attributes) is an `update`. Events are batched for BATCH_MS and coalesced per
 * path, so a create and the writes that follow it are one `create`, and a file created and deleted
 * within a batch is nothing. A file moved over another is reported as a `create`: without a record
 * per file there is no telling it had a predecessor.
 *
 * `ignore` takes what the watcher is told to leave alone: `**\/NAME` (any directory of that name)
 * or an absolute path; neither is entered, and nothing is reported for them.
 */
import { lstatSync, watch as fsWatch, type FSWatcher } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { basename, join, sep } from 'node:path';
import type { TreeEvent, TreeWatcherBackend } from './tree-backend.js';

/** How long events are gathered before they are reported, ms. */
export const BATCH_MS = 10;
/** Directories read at once while a tree is scanned for the directories to watch. */
const SCAN_CONCURRENCY = 4;
/** Deeper directories are not watched (as walk.ts does not list them). */
const MAX_DEPTH = 256;

export interface DirectoryWatchOptions {
  ignore: string[];
  /** A directory that could not be watched after the subscription was made (the OS watch limit, say). */
  onError?: ((error: unknown) => void) | undefined;
}

/** The backend: `subscribe` resolves once every directory below the root is watched. */
export const directoryBackend: TreeWatcherBackend = {
  async subscribe(root, onEvents, options) {
    const tree = new DirectoryTree(root, onEvents, options);
    await tree.start();
    return { unsubscribe: async () => tree.stop() };
  },
};

interface Scan {
  dir: string;
  depth: number;
}

class DirectoryTree {
  /** Watched directory (absolute path) → its handle. */
  private readonly watchers = new Map<string, FSWatcher>();
  private readonly pending = new Map<string, TreeEvent['type']>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private started = false;
  private readonly names: Set<string>;
  private readonly paths: string[];

  constructor(
    private readonly root: string,
    private readonly onEvents: (events: TreeEvent[]) => void,
    private readonly options: DirectoryWatchOptions,
  ) {
    this.names = new Set(
      options.ignore.filter((rule) => rule.startsWith('**/')).map((rule) => rule.slice(3)),
    );
    this.paths = options.ignore.filter((rule) => !rule.startsWith('**/'));
  }

  /** Watches the root and every directory below it; throws when the root cannot be watched. */
  async start(): Promise<void> {
    await this.watchTree(this.root, 0);
    this.started = true;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.pending.clear();
    for (const watcher of this.watchers.values()) watcher.close();
    this.watchers.clear();
  }

  private ignored(abs: string): boolean {
    if (this.names.has(basename(abs))) return true;
    return this.paths.some((path) => abs === path || abs.startsWith(path + sep));
  }

  /**
   * Watches `top` and the directories below it. Each directory is watched before it is read, so
   * whatever appears in it after the read is reported by its watcher. Until the subscription is
   * made, a failure to watch is thrown (the caller falls back to polling); after, it is reported.
   */
  private async watchTree(top: string, topDepth: number): Promise<void> {
    const queue: Scan[] = [{ dir: top, depth: topDepth }];
    while (queue.length > 0 && !this.stopped) {
      const found = await Promise.all(queue.splice(0, SCAN_CONCURRENCY).map((d) => this.scan(d)));
      for (const below of found) queue.push(...below);
    }
  }

  /** Watches one directory and reads it: the directories below it, to watch next. */
  private async scan({ dir, depth }: Scan): Promise<Scan[]> {
    if (!this.watchDir(dir)) return [];
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return []; // gone or unreadable: its parent reports what became of it
    }
    if (depth >= MAX_DEPTH) return [];
    const below: Scan[] = [];
    for (const entry of entries) {
      if (!entry.isDirectory()) continue;
      const path = join(dir, entry.name);
      if (!this.ignored(path)) below.push({ dir: path, depth: depth + 1 });
    }
    return below;
  }

  /** Opens a directory's watcher; false when it could not be (gone, not a directory, or refused). */
  private watchDir(dir: string): boolean {
    if (this.stopped) return false;
    if (this.watchers.has(dir)) return true;
    let watcher: FSWatcher;
    try {
      watcher = fsWatch(dir, { persistent: false }, (type, name) =>
        this.onEvent(dir, type, name === null ? undefined : name.toString()),
      );
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const gone = code === 'ENOENT' || code === 'ENOTDIR' || code === 'EACCES';
      if (gone && dir !== this.root) return false;
      if (!this.started) throw error;
      this.options.onError?.(error);
      return false;
    }
    watcher.on('error', () => this.unwatchDir(dir));
    this.watchers.set(dir, watcher);
    return true;
  }

  /** Closes the watchers of `dir` and of every directory below it. */
  private unwatchDir(dir: string): void {
    const prefix = dir + sep;
    for (const [path, watcher] of this.watchers)
      if (path === dir || path.startsWith(prefix)) {
        watcher.close();
        this.watchers.delete(path);
      }
  }

  private onEvent(dir: string, type: string, name: string | undefined): void {
    if (this.stopped || this.watchers.get(dir) === undefined) return;
    // No name: the directory itself changed (or the queue overflowed); its parent reports it.
    if (name === undefined) return;
    const path = join(dir, name);
    if (this.ignored(path)) return;
    // An event of the directory itself (its attributes, its removal) comes named after it, as if a
    // child of that name: its parent reports the directory, so a name that is not there is dropped.
    const self = name === basename(dir);
    if (type === 'change') {
      if (!self || kindOf(path) !== undefined) this.record(path, 'update');
      return;
    }
    const kind = kindOf(path);
    if (kind === undefined) {
      if (self && kindOf(dir) === undefined) {
        this.unwatchDir(dir);
        return;
      }
      if (this.watchers.has(path)) this.unwatchDir(path);
      this.record(path, 'delete');
      return;
    }
    const isDir = kind === 'directory';
    this.record(path, 'create');
    if (isDir && !this.watchers.has(path)) {
      const depth = path.slice(this.root.length).split(sep).length - 1;
      void this.watchTree(path, depth).catch((error: unknown) => this.options.onError?.(error));
    }
  }

  /** Adds one event to the batch, coalesced with what the batch already says of the path. */
  private record(path: string, type: TreeEvent['type']): void {
    const before = this.pending.get(path);
    if (before === 'create' && type === 'delete') this.pending.delete(path);
    else if (before === 'create' && type === 'update') return;
    else if (before === 'delete' && type === 'update') return;
    else this.pending.set(path, type);
    this.timer ??= setTimeout(() => this.flush(), BATCH_MS);
  }

  private flush(): void {
    this.timer = undefined;
    if (this.pending.size === 0 || this.stopped) return;
    const events = [...this.pending].map(([path, type]) => ({ type, path }));
    this.pending.clear();
    this.onEvents(events);
  }
}

/** Whether `path` is there now, and as what; undefined when it is not (or cannot be looked at). */
function kindOf(path: string): 'directory' | 'other' | undefined {
  try {
    const stats = lstatSync(path, { throwIfNoEntry: false });
    return stats === undefined ? undefined : stats.isDirectory() ? 'directory' : 'other';
  } catch {
    return undefined;
  }
}
