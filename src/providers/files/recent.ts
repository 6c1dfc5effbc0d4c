/**
 * Recently read small files, kept so that reading one again costs one `stat` instead of an open,
 * a descriptor check, a read and a close — and no decoding. An entry is used only while a fresh
 * stat of the requested path shows the very file that was read, unchanged: same device, inode,
 * size, modification and change times. Anything that alters the file or its links (a write, a
 * truncate, a rename over it, a new or removed hard link, a chmod) moves its change time, so
 * the next read misses and reads the file again.
 *
 * Timestamps are coarse: a file written twice within one clock tick can keep its times. So a file
 * is only kept once its times are well in the past (`settledMs`, as git treats "racily clean"
 * index entries): a later write is then certain to move them. A file written moments ago is read
 * afresh every time until it settles.
 *
 * Containment holds: an entry was verified when it was read (the real path of the opened
 * descriptor inside the root), and only files reached without any symlink are kept (the provider's
 * rule). A fresh stat that reaches the same unchanged inode reaches a file whose bytes were served
 * under this very path: linking it anywhere new, unlinking or renaming it moves its change time.
 * What a stat cannot see: if a directory above the file is moved away and replaced by a symlink to
 * a directory holding an older hard link of the same file, the unchanged bytes are still served
 * under the old path until the file changes — bytes this path served before, never others.
 */
import type { Stats } from 'node:fs';
import type { ResourceContents } from '../../core/types.js';
import { BoundedCache } from '../utils/bounded-cache.js';

interface Entry {
  contents: ResourceContents;
  dev: number;
  ino: number;
  mtimeMs: number;
  ctimeMs: number;
  /** The file's size, which is also what the entry counts against the bound. */
  bytes: number;
}

export interface RecentFilesOptions {
  /** Largest file kept, in bytes. @default 65536 */
  maxFileBytes?: number;
  /** Bytes kept in all. @default 8388608 (8 MiB) */
  maxTotalBytes?: number;
  /** How long ago a file must last have changed to be kept, in ms. @default 1000 */
  settledMs?: number;
}

export class RecentFiles {
  private readonly entries: BoundedCache<Entry>;
  private readonly maxFileBytes: number;
  private readonly settledMs: number;

  constructor(options: RecentFilesOptions = {}) {
    this.maxFileBytes = options.maxFileBytes ?? 64 * 1024;
    this.entries = new BoundedCache(options.maxTotalBytes ?? 8 * 1024 * 1024);
    this.settledMs = options.settledMs ?? 1000;
  }

  /** Whether the path was kept (a stat is worth making). */
  has(path: string): boolean {
    return this.entries.has(path);
  }

  /** The kept contents of `path` if `stats` (a fresh stat of the path) shows it unchanged; else forgets it. */
  get(path: string, stats: Stats | undefined): ResourceContents | undefined {
    const entry = this.entries.get(path);
    if (entry === undefined) return undefined;
    if (
      stats !== undefined &&
      stats.ino === entry.ino &&
      stats.dev === entry.dev &&
      stats.size === entry.bytes &&
      stats.mtimeMs === entry.mtimeMs &&
      stats.ctimeMs === entry.ctimeMs &&
      stats.isFile()
    ) {
      return entry.contents;
    }
    this.entries.delete(path);
    return undefined;
  }

  /** Keeps a file just read, if it is small and settled; `stats` are those of the opened descriptor. */
  keep(path: string, stats: Stats, contents: ResourceContents, now = Date.now()): void {
    if (stats.size > this.maxFileBytes || !stats.isFile()) return;
    if (now - Math.max(stats.mtimeMs, stats.ctimeMs) < this.settledMs) {
      this.entries.delete(path);
      return;
    }
    const { dev, ino, size, mtimeMs, ctimeMs } = stats;
    this.entries.set(path, { contents, dev, ino, mtimeMs, ctimeMs, bytes: size });
  }

  forget(path: string): void {
    this.entries.delete(path);
  }

  /** Files and bytes kept, for tests. */
  stats(): { files: number; bytes: number } {
    return { files: this.entries.size, bytes: this.entries.bytes };
  }
}
