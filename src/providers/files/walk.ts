/**
 * Keyset listing of a directory tree. The order is a depth-first walk with each directory's entries
 * sorted by name, so a file's key — its path relative to the root, '/'-joined — orders segment by
 * segment. A page resumes strictly after a key by descending along the key's own path, skipping
 * whole subtrees by binary search: the cost of a page is the size of the page plus the directories
 * on the way, never the number of files before it. Files added or removed between pages never make
 * an unchanged file repeat or go missing.
 *
 * Symbolic links to regular files inside the root are listed; links to directories are not followed
 * (no loops, no duplicates); links leading outside the root are left out. Links are resolved without
 * opening anything (`resolve.ts`); a symlink entry carries its target's real path so the provider
 * can judge it (access rules, hidden files, hard links).
 */
import { lstatSync, readdirSync, type Dirent, type Stats } from 'node:fs';
import { join } from 'node:path';
import { isMissing, relativeKey } from './containment.js';
import { statInside } from './resolve.js';
import type { IgnoreRules, RuleChain } from './ignore.js';

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

export interface SortedEntry {
  name: string;
  kind: 'file' | 'directory' | 'symlink' | 'other';
}

/** A directory's entries sorted by name (UTF-16 code unit order, the same order keys compare in). */
export function readSortedDir(abs: string): SortedEntry[] {
  let dirents: Dirent[];
  try {
    dirents = readdirSync(abs, { withFileTypes: true });
  } catch (error) {
    if (isMissing(error) || (error as NodeJS.ErrnoException).code === 'EACCES') return [];
    throw error;
  }
  const entries = dirents.map((d) => ({ name: d.name, kind: kindOf(d, abs) }));
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return entries;
}

export function isValidKey(key: string): boolean {
  if (key.length === 0 || key.length > MAX_KEY_LENGTH || key.includes('\0')) return false;
  return key.split('/').every((s) => s !== '' && s !== '.' && s !== '..');
}

/**
 * Walks at most `limit` listable files after `after`, examining at most `budget` entries (so a
 * directory full of ignored files cannot make one call unbounded; the page then ends early with a
 * resume key). A directory `skipDirectory` names (by its real path) is not entered.
 */
export function walkPage(
  root: string,
  rules: IgnoreRules,
  after: string | undefined,
  limit: number,
  budget: number,
  skipDirectory?: (abs: string) => boolean,
): WalkPage {
  const entries: WalkEntry[] = [];
  let examined = 0;
  let lastKey: string | undefined;
  let stopped = false;

  const visit = (
    dirAbs: string,
    dirRel: string,
    chain: RuleChain,
    resume: string[] | undefined,
    depth: number,
  ): void => {
    const children = readSortedDir(dirAbs);
    const hasGitignore = children.some((c) => c.name === '.gitignore');
    const inner = rules.enter(chain, dirRel, hasGitignore);
    let i = resume === undefined ? 0 : lowerBound(children, resume[0]!);
    for (; i < children.length; i += 1) {
      if (entries.length >= limit || examined >= budget) {
        stopped = true;
        return;
      }
      const child = children[i]!;
      const rel = dirRel === '' ? child.name : `${dirRel}/${child.name}`;
      const abs = join(dirAbs, child.name);
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
          visit(abs, rel, inner, resuming ? resume.slice(1) : undefined, depth + 1);
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
  };

  visit(root, '', [], after === undefined ? undefined : after.split('/'), 0);
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

function lowerBound(entries: SortedEntry[], name: string): number {
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (entries[mid]!.name < name) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
