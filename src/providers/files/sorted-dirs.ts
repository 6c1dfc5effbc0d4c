/**
 * A directory's entries sorted by name, and a bounded cache of the sorted snapshots of large ones.
 *
 * Paging a directory resumes by binary search in its sorted entries, so a page costs O(page) only
 * when the sort is not redone for every page: a directory of at least MIN_CACHED entries keeps its
 * sorted snapshot in an LRU (at most MAX_CACHED_ENTRIES names in all, the least recently used
 * directory evicted first), keyed by device and inode. A snapshot is used only while the
 * directory's modification and change times (nanoseconds) are those it was read at, checked by a
 * stat on every use — a name added, removed or renamed moves both. Timestamps come from a coarse
 * clock, so two changes within one tick can leave them equal: a snapshot of a directory modified
 * less than RACY_MS before it was read is served once and not kept (the next use reads afresh).
 * A walk that reaches the end of a directory drops its snapshot (forgetSortedDir): snapshots are
 * for the directories a page stopped inside.
 */
import { lstatSync, readdirSync, statSync, type Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { isMissing } from './containment.js';

export interface SortedEntry {
  name: string;
  kind: 'file' | 'directory' | 'symlink' | 'other';
}

/** Directories with fewer entries are read afresh each time: a read costs less than a look-up. */
export const MIN_CACHED = 512;
/** Names kept in all snapshots together (~100 bytes each). */
export const MAX_CACHED_ENTRIES = 250_000;
/** A directory modified less than this long before it was read may have changed unseen within the same timestamp tick. */
const RACY_MS = 1000;

interface Snapshot {
  times: string;
  entries: SortedEntry[];
}

const snapshots = new Map<string, Snapshot>();
let cachedEntries = 0;

/** The cache's size now: directories and names held. */
export function sortedDirCacheStats(): { directories: number; entries: number } {
  return { directories: snapshots.size, entries: cachedEntries };
}

/** A directory's entries sorted by name (UTF-16 code unit order, the order keys compare in); [] when missing or unreadable. */
export function readSortedDir(abs: string): SortedEntry[] {
  const at = lookup(abs);
  if (at === undefined) return [];
  if (at.cached !== undefined) return at.cached;
  let dirents: Dirent[];
  try {
    dirents = readdirSync(abs, { withFileTypes: true });
  } catch (error) {
    if (unreadable(error)) return [];
    throw error;
  }
  return keep(at, sortEntries(dirents, abs));
}

/** As readSortedDir, reading an uncached directory off the event loop. */
export async function readSortedDirAsync(abs: string): Promise<SortedEntry[]> {
  const at = lookup(abs);
  if (at === undefined) return [];
  if (at.cached !== undefined) return at.cached;
  let dirents: Dirent[];
  try {
    dirents = await readdir(abs, { withFileTypes: true });
  } catch (error) {
    if (unreadable(error)) return [];
    throw error;
  }
  return keep(at, sortEntries(dirents, abs));
}

/**
 * Drops the snapshot of a directory a walk has gone through to its end: that walk will not resume
 * in it, and a listing of a large nested tree then holds one directory's snapshot, not hundreds.
 */
export function forgetSortedDir(abs: string): void {
  let stats;
  try {
    stats = statSync(abs, { bigint: true, throwIfNoEntry: false });
  } catch {
    return;
  }
  if (stats === undefined) return;
  const key = `${stats.dev}:${stats.ino}`;
  const snapshot = snapshots.get(key);
  if (snapshot === undefined) return;
  snapshots.delete(key);
  cachedEntries -= snapshot.entries.length;
}

/** The first index whose name is not below `name` (entries sorted by name). */
export function lowerBound(entries: readonly SortedEntry[], name: string): number {
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (entries[mid]!.name < name) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Whether sorted `entries` hold one named `name`. */
export function hasEntry(entries: readonly SortedEntry[], name: string): boolean {
  return entries[lowerBound(entries, name)]?.name === name;
}

interface Lookup {
  key: string;
  times: string;
  /** Whether the directory changed too recently for a snapshot of it to be trusted later. */
  racy: boolean;
  cached?: SortedEntry[];
}

function lookup(abs: string): Lookup | undefined {
  let stats;
  try {
    stats = statSync(abs, { bigint: true, throwIfNoEntry: false });
  } catch (error) {
    if (unreadable(error)) return undefined;
    throw error;
  }
  if (stats === undefined || !stats.isDirectory()) return undefined;
  const key = `${stats.dev}:${stats.ino}`;
  const times = `${stats.mtimeNs}:${stats.ctimeNs}`;
  const newest = stats.mtimeMs > stats.ctimeMs ? stats.mtimeMs : stats.ctimeMs;
  const racy = Date.now() - Number(newest) < RACY_MS;
  const snapshot = snapshots.get(key);
  if (snapshot !== undefined) {
    snapshots.delete(key); // re-inserted below when still good: the Map's order is the LRU order
    cachedEntries -= snapshot.entries.length;
    if (snapshot.times === times) {
      snapshots.set(key, snapshot);
      cachedEntries += snapshot.entries.length;
      return { key, times, racy, cached: snapshot.entries };
    }
  }
  return { key, times, racy };
}

function keep(at: Lookup, entries: SortedEntry[]): SortedEntry[] {
  if (at.racy || entries.length < MIN_CACHED || entries.length > MAX_CACHED_ENTRIES) return entries;
  snapshots.set(at.key, { times: at.times, entries });
  cachedEntries += entries.length;
  for (const [key, snapshot] of snapshots) {
    if (cachedEntries <= MAX_CACHED_ENTRIES) break;
    snapshots.delete(key);
    cachedEntries -= snapshot.entries.length;
  }
  return entries;
}

function sortEntries(dirents: Dirent[], abs: string): SortedEntry[] {
  const kinds = new Map<string, SortedEntry['kind']>();
  const names: string[] = [];
  for (const d of dirents) {
    kinds.set(d.name, kindOf(d, abs));
    names.push(d.name);
  }
  // The default sort compares UTF-16 code units, as keys do, at half the cost of a comparator.
  names.sort();
  return names.map((name) => ({ name, kind: kinds.get(name)! }));
}

function unreadable(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return isMissing(error) || code === 'EACCES' || code === 'ENOTDIR';
}

function kindOf(d: Dirent, dir: string): SortedEntry['kind'] {
  if (d.isFile()) return 'file';
  if (d.isDirectory()) return 'directory';
  if (d.isSymbolicLink()) return 'symlink';
  if (d.isFIFO() || d.isSocket() || d.isCharacterDevice() || d.isBlockDevice()) return 'other';
  // DT_UNKNOWN on some filesystems: ask.
  try {
    const s = lstatSync(join(dir, d.name));
    return s.isFile()
      ? 'file'
      : s.isDirectory()
        ? 'directory'
        : s.isSymbolicLink()
          ? 'symlink'
          : 'other';
  } catch {
    return 'other';
  }
}
