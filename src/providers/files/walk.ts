/**
 * Keyset listing of a directory tree. The order is a depth-first walk with each directory's entries
 * sorted by name, so a file's key — its path relative to the root, '/'-joined — orders segment by
 * segment. A page resumes strictly after a key by descending along the key's own path, skipping
 * whole subtrees by binary search: the cost of a page is the size of the page plus the directories
 * on the way, never the number of files before it — a large directory's sorted entries are kept
 * between pages (sorted-dirs.ts), so this holds for one flat directory of 100,000 files too. Files added or removed between pages never make
 * an unchanged file repeat or go missing.
 *
 * Symbolic links to regular files inside the root are listed; links to directories are not followed
 * (no loops, no duplicates); links leading outside the root are left out. Links are resolved without
 * opening anything (`resolve.ts`); a symlink entry carries its target's real path so the provider
 * can judge it (access rules, hidden files, hard links).
 */
import { lstatSync, type Stats } from 'node:fs';
import { sep } from 'node:path';
import { isMissing, relativeKey } from './containment.js';
import { statInside } from './resolve.js';
import type { IgnoreRules, RuleChain } from './ignore.js';
import { Slice } from './slice.js';
import {
  hasEntry,
  lowerBound,
  MIN_CACHED,
  readSortedDirAsync,
  retireSortedDir,
  type SortedEntry,
} from './sorted-dirs.js';

export { readSortedDir, type SortedEntry } from './sorted-dirs.js';

/** Deeper directories are not walked: a guard against pathological trees. */
export const MAX_DEPTH = 256;
/** Longest key accepted from a cursor. */
const MAX_KEY_LENGTH = 32_768;

export interface WalkEntry {
  /** Path relative to the root, '/'-joined: the entry's key. */
  rel: string;
  name: string;
  abs: string;
  /** Stats of the file (a symlink's target's). */
  stats: Stats;
  /** For a symlink: the real path of the file it leads to. */
  real?: string;
}

export interface WalkPage {
  entries: WalkEntry[];
  /** Resume key; present when the walk stopped before the end. */
  last?: string;
}

export interface WalkOptions {
  /** A directory this names (by its real path) is not entered. */
  skipDirectory?: ((abs: string) => boolean) | undefined;
  /**
   * Walk only the subtree of this directory (its key): what a whole-tree walk would list under it,
   * in the same order and with the same keys. `after` then lies inside it.
   */
  under?: string | undefined;
  /** The page's turns on the event loop (slice.ts), shared with what the page does after the walk. */
  slice?: Slice | undefined;
}

export function isValidKey(key: string): boolean {
  if (key.length === 0 || key.length > MAX_KEY_LENGTH || key.includes('\0')) return false;
  return key.split('/').every((s) => s !== '' && s !== '.' && s !== '..');
}

/**
 * Walks at most `limit` listable files after `after`, examining at most `budget` entries (so a
 * directory full of ignored files cannot make one call unbounded; the page then ends early with a
 * resume key). Directories are read (and large ones' sorted snapshots kept, see sorted-dirs.ts)
 * off the event loop, and the walk gives the event loop a turn every SLICE_MS (slice.ts).
 */
export async function walkPage(
  root: string,
  rules: IgnoreRules,
  after: string | undefined,
  limit: number,
  budget: number,
  options: WalkOptions = {},
): Promise<WalkPage> {
  const { skipDirectory } = options;
  const entries: WalkEntry[] = [];
  let examined = 0;
  let lastKey: string | undefined;
  let stopped = false;
  const slice = options.slice ?? new Slice();
  const only = options.under?.split('/');
  if (after !== undefined && options.under !== undefined && !after.startsWith(`${options.under}/`))
    return { entries };

  const visit = async (
    dirAbs: string,
    dirRel: string,
    chain: RuleChain,
    resume: string[] | undefined,
    depth: number,
  ): Promise<void> => {
    const all = await readSortedDirAsync(dirAbs, slice);
    const inner = rules.enter(chain, dirRel, hasEntry(all, '.gitignore'));
    // Walking a subtree: the directories on the way to it are entered, nothing beside them.
    const leading = only !== undefined && depth < only.length ? only[depth]! : undefined;
    let children: readonly SortedEntry[] = all;
    if (leading !== undefined) {
      const at = lowerBound(all, leading);
      children = all[at]?.name === leading && all[at]!.kind === 'directory' ? [all[at]!] : [];
    }
    let i = resume === undefined ? 0 : lowerBound(children, resume[0]!);
    for (; i < children.length; i += 1) {
      if (entries.length >= limit || examined >= budget) {
        stopped = true;
        return;
      }
      if (slice.spent) await slice.next();
      const child = children[i]!;
      const rel = dirRel === '' ? child.name : `${dirRel}/${child.name}`;
      const abs = dirAbs === sep ? `${sep}${child.name}` : `${dirAbs}${sep}${child.name}`;
      const resuming = resume !== undefined && child.name === resume[0];
      examined += 1;
      if (child.kind === 'directory') {
        // A key naming a directory means its whole subtree was walked. (Were it a file that has
        // since become a directory, everything in it is new, and new files may be missed.)
        const done = resuming && resume.length === 1;
        if (
          !done &&
          depth < MAX_DEPTH &&
          !rules.excluded(inner, rel, child.name, true) &&
          skipDirectory?.(abs) !== true
        ) {
          await visit(abs, rel, inner, resuming ? resume.slice(1) : undefined, depth + 1);
          if (stopped) return;
        }
        lastKey = rel;
        continue;
      }
      lastKey = rel;
      if (resuming) continue; // the key itself was returned on an earlier page
      if (child.kind === 'other' || rules.excluded(inner, rel, child.name, false)) continue;
      const found = statListable(root, rules, abs, child.kind);
      if (found !== undefined) entries.push({ rel, name: child.name, abs, ...found });
    }
    // Walked to its end: this walk will not resume inside it (see retireSortedDir).
    if (all.length >= MIN_CACHED) retireSortedDir(dirAbs);
  };

  await visit(root, '', [], after === undefined ? undefined : after.split('/'), 0);
  return stopped && lastKey !== undefined ? { entries, last: lastKey } : { entries };
}

/**
 * Stats of a regular file, or of the file a symlink leads to (resolved, without opening anything,
 * inside the root and not excluded) with its real path; else undefined.
 */
function statListable(
  root: string,
  rules: IgnoreRules,
  abs: string,
  kind: SortedEntry['kind'],
): { stats: Stats; real?: string } | undefined {
  try {
    if (kind === 'file') {
      const stats = lstatSync(abs);
      return stats.isFile() ? { stats } : undefined;
    }
    const target = statInside(root, abs);
    if (target === undefined || !target.stats.isFile()) return undefined;
    return rules.excludedPath(relativeKey(root, target.realPath), false)
      ? undefined
      : { stats: target.stats, real: target.realPath };
  } catch (error) {
    if (isMissing(error) || (error as NodeJS.ErrnoException).code === 'EACCES') return undefined;
    throw error;
  }
}
