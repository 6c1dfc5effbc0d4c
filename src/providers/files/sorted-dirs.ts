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
 * A walk that reaches the end of a directory retires it (retireSortedDir): snapshots are for the
 * directories a page stopped inside, and the one directory finished last.
 */
import { lstatSync, readdirSync, statSync, type Dirent } from 'node:fs';
import { opendir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { isMissing } from './containment.js';
import type { Slice } from './slice.js';

export interface SortedEntry {
  name: string;
  kind: 'file' | 'directory' | 'symlink' | 'other';
}

/** Directories with fewer entries are read afresh each time: a read costs less than a look-up. */
export const MIN_CACHED = 512;
/** Names kept in all snapshots together (~100 bytes each). */
export const MAX_CACHED_ENTRIES = 250_000;
/** Names sorted in one piece; a larger directory is sorted in runs of this many, merged between turns. */
const SORT_RUN = 8192;
/**
 * A directory this large (its own size, bytes: ~3 MiB for 100,000 names on ext4) is read in batches
 * between turns; a smaller one in one `readdir`.
 */
const LARGE_DIRECTORY_BYTES = 256 * 1024;
/** Entries one `opendir` batch reads. */
const OPENDIR_BATCH = 1024;
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

/**
 * As readSortedDir, reading an uncached directory off the event loop; sorting a large one gives the
 * event loop a turn whenever `slice` is spent (slice.ts), so other requests do not wait behind it.
 */
export async function readSortedDirAsync(abs: string, slice?: Slice): Promise<SortedEntry[]> {
  const at = lookup(abs);
  if (at === undefined) return [];
  if (at.cached !== undefined) return at.cached;
  let dirents: Dirent[];
  try {
    dirents =
      slice !== undefined && at.bytes >= LARGE_DIRECTORY_BYTES
        ? await readInTurns(abs, slice)
        : await readdir(abs, { withFileTypes: true });
  } catch (error) {
    if (unreadable(error)) return [];
    throw error;
  }
  if (slice === undefined || dirents.length < SORT_RUN) return keep(at, sortEntries(dirents, abs));
  const { names, others } = namesOf(dirents, abs);
  const runs: string[][] = [];
  for (let start = 0; start < names.length; start += SORT_RUN) {
    if (slice.spent) await slice.next();
    runs.push(names.slice(start, start + SORT_RUN).sort());
  }
  while (runs.length > 1) {
    const merged: string[][] = [];
    for (let i = 0; i < runs.length; i += 2)
      merged.push(i + 1 < runs.length ? await merge(runs[i]!, runs[i + 1]!, slice) : runs[i]!);
    runs.splice(0, runs.length, ...merged);
  }
  const sorted = runs[0]!;
  const entries: SortedEntry[] = new Array<SortedEntry>(sorted.length);
  for (let i = 0; i < sorted.length; i += 1) {
    if (i % SORT_RUN === SORT_RUN - 1 && slice.spent) await slice.next();
    entries[i] = entryOf(sorted[i]!, others);
  }
  // The directory may have changed while the event loop had turns: kept only if it has not.
  return lookup(abs)?.times === at.times ? keep(at, entries) : entries;
}

/** The largest finished directory whose snapshot is kept (see retireSortedDir). */
export const MAX_RETIRED_ENTRIES = 16_384;

/** The directory a walk went through to its end most recently, its snapshot still kept (its key). */
let retired: string | undefined;

/**
 * A walk has gone through directory `abs` to its end: it will not resume inside it. Its snapshot is
 * kept until the next directory is retired — the one a page ended on is what the next page, or a
 * client asking for the first page again, reads first — and the one retired before is dropped, so a
 * listing of a large nested tree holds one finished directory's snapshot, not hundreds.
 */
export function retireSortedDir(abs: string): void {
  let stats;
  try {
    stats = statSync(abs, { bigint: true, throwIfNoEntry: false });
  } catch {
    stats = undefined;
  }
  const key = stats === undefined ? undefined : `${stats.dev}:${stats.ino}`;
  if (retired !== undefined && retired !== key) drop(retired);
  retired = key;
  // A directory too large to be worth keeping after the walk is dropped at once: its names would
  // stay on the heap after the listing, for a re-read that costs little next to paging it again.
  const snapshot = key === undefined ? undefined : snapshots.get(key);
  if (snapshot !== undefined && snapshot.entries.length > MAX_RETIRED_ENTRIES) {
    drop(key!);
    retired = undefined;
  }
}

function drop(key: string): void {
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
  /** The directory's own size in bytes: it grows with its entries on the usual filesystems. */
  bytes: number;
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
      return { key, times, racy, bytes: Number(stats.size), cached: snapshot.entries };
    }
  }
  return { key, times, racy, bytes: Number(stats.size) };
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
  const { names, others } = namesOf(dirents, abs);
  // The default sort compares UTF-16 code units, as keys do, at half the cost of a comparator.
  names.sort();
  const entries: SortedEntry[] = new Array<SortedEntry>(names.length);
  for (let i = 0; i < names.length; i += 1) entries[i] = entryOf(names[i]!, others);
  return entries;
}

/**
 * The names of `dirents`, and the kinds of those that are not regular files: most entries are
 * files, and a map of every name (100k in a flat directory) cost more than the sort itself.
 */
function namesOf(
  dirents: Dirent[],
  abs: string,
): { names: string[]; others: Map<string, SortedEntry['kind']> } {
  const names: string[] = new Array<string>(dirents.length);
  const others = new Map<string, SortedEntry['kind']>();
  for (let i = 0; i < dirents.length; i += 1) {
    const d = dirents[i]!;
    names[i] = d.name;
    if (!d.isFile()) {
      const kind = kindOf(d, abs);
      if (kind !== 'file') others.set(d.name, kind);
    }
  }
  return { names, others };
}

function entryOf(name: string, others: Map<string, SortedEntry['kind']>): SortedEntry {
  return { name, kind: others.size === 0 ? 'file' : (others.get(name) ?? 'file') };
}

/**
 * A large directory's entries, read through `opendir` in batches off the event loop, with a turn
 * whenever `slice` is spent: `readdir` hands back all its entries at once, and making 100,000
 * `Dirent`s in one piece held the thread for tens of milliseconds.
 */
async function readInTurns(abs: string, slice: Slice): Promise<Dirent[]> {
  const dir = await opendir(abs, { bufferSize: OPENDIR_BATCH });
  const dirents: Dirent[] = [];
  try {
    for (let d = await dir.read(); d !== null; d = await dir.read()) {
      dirents.push(d);
      if (dirents.length % 256 === 0 && slice.spent) await slice.next();
    }
  } finally {
    await dir.close();
  }
  return dirents;
}

/** Two sorted runs merged into one (UTF-16 code unit order), with a turn whenever `slice` is spent. */
async function merge(a: string[], b: string[], slice: Slice): Promise<string[]> {
  const out: string[] = new Array<string>(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) {
    if (k % SORT_RUN === SORT_RUN - 1 && slice.spent) await slice.next();
    out[k++] = a[i]! <= b[j]! ? a[i++]! : b[j++]!;
  }
  while (i < a.length) out[k++] = a[i++]!;
  while (j < b.length) out[k++] = b[j++]!;
  return out;
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
