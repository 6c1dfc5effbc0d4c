/**
 * Check before open: the real path a path inside a root leads to, found with realpath(3) or
 * component by component with `lstat` and `readlink` — nothing is opened, so nothing outside the root is ever
 * touched in a way that has a side effect (opening a FIFO releases its writer) or that answers
 * differently for a file that exists but may not be read (an errno oracle).
 *
 * The walk follows symbolic links as the kernel would (absolute and relative targets, `..` taken
 * from the real directory reached so far, at most 40 links). It may pass outside the root on its
 * way (a link `../docs/a.txt` inside `docs/` comes back in); while it is outside, every error
 * (missing, permission denied, not a directory) is answered as "outside" — undefined — so an
 * outside path says nothing about itself. Inside the root, a missing component is undefined and any
 * other error (e.g. EACCES on a directory that may not be entered) is thrown for the caller to
 * classify, as an open would.
 */
import { lstatSync, readlinkSync, realpathSync, type Stats } from 'node:fs';
import { dirname, sep } from 'node:path';
import { isMissingErrno } from '../utils/errors.js';

/** Symbolic links followed in one resolution before giving up (Linux's own limit, ELOOP). */
export const MAX_LINKS = 40;

export interface Resolved {
  /** The real path: no symbolic link in it. */
  realPath: string;
  /** `lstat` of the real path (so of the object itself; never of a link). */
  stats: Stats;
}

/**
 * Resolves `path` (absolute, normalised, lexically inside `root`, which is canonical) to the real
 * object it names, or undefined when it is missing or ends outside the root.
 */
export function resolveInside(root: string, path: string): Resolved | undefined {
  const pending =
    path === root
      ? []
      : path
          .slice(root === sep ? 1 : root.length + 1)
          .split(sep)
          .reverse();
  let current = root;
  let currentStats: Stats | undefined;
  let links = 0;
  while (pending.length > 0) {
    const name = pending.pop()!;
    if (name === '' || name === '.') continue;
    if (name === '..') {
      current = dirname(current);
      currentStats = undefined;
      continue;
    }
    const next = current === sep ? `${sep}${name}` : `${current}${sep}${name}`;
    let stats: Stats;
    try {
      stats = lstatSync(next);
    } catch (error) {
      if (isMissingErrno(error) || !within(root, current)) return undefined;
      throw error;
    }
    if (stats.isSymbolicLink()) {
      links += 1;
      if (links > MAX_LINKS) return undefined;
      let target: string;
      try {
        target = readlinkSync(next);
      } catch (error) {
        if (isMissingErrno(error) || !within(root, current)) return undefined;
        throw error;
      }
      if (target.startsWith(sep)) current = sep;
      for (const part of target.split(sep).reverse()) pending.push(part);
      currentStats = undefined;
      continue;
    }
    // Only a directory can have more path after it.
    if (pending.some((p) => p !== '' && p !== '.') && !stats.isDirectory()) return undefined;
    current = next;
    currentStats = stats;
  }
  if (!within(root, current)) return undefined;
  if (currentStats === undefined) {
    try {
      currentStats = lstatSync(current);
    } catch (error) {
      if (isMissingErrno(error)) return undefined;
      throw error;
    }
  }
  return { realPath: current, stats: currentStats };
}

/**
 * The real path `path` leads to when it lies inside `root`; undefined when it is missing or outside.
 * The C library's realpath(3) first — lstat and readlink inside one call, opening nothing; only when
 * it fails for a reason that depends on where it arose (permission denied) is the path walked here,
 * component by component, to tell an inside failure (thrown) from an outside one (undefined).
 */
export function realPathInside(root: string, path: string): string | undefined {
  let real: string;
  try {
    real = realpathSync.native(path);
  } catch (error) {
    if (isMissingErrno(error)) return undefined;
    return resolveInside(root, path)?.realPath;
  }
  return within(root, real) ? real : undefined;
}

/**
 * The real path and `lstat` of what `path` leads to inside `root` — for describing an entry (a
 * symlink in a listing, a directory read, a completion) without opening it; undefined when missing
 * or outside.
 */
export function statInside(root: string, path: string): Resolved | undefined {
  const realPath = realPathInside(root, path);
  if (realPath === undefined) return undefined;
  const stats = lstatSync(realPath, { throwIfNoEntry: false });
  return stats === undefined ? undefined : { realPath, stats };
}

function within(root: string, path: string): boolean {
  return path === root || path.startsWith(root === sep ? root : root + sep);
}
