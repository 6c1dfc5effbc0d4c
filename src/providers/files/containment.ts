/**
 * Containment: every path the files provider touches on a client's behalf must lie inside its
 * canonical root. The path is judged before anything is opened for reading (no side effect and no
 * errno oracle outside the root: on Linux through an `O_PATH` handle, which opens no content, else
 * by resolving it first), and the check is made on what was actually opened — the real path of the
 * open file descriptor — so a symlink swapped in between cannot escape. FIFOs and devices are never
 * opened. Anything refused is reported as `undefined`, which callers answer exactly like a missing
 * file.
 */
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readlinkSync,
  realpathSync,
  statSync,
  type Stats,
} from 'node:fs';
import { isAbsolute, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rememberRecent } from '../../core/memo.js';
import { isMissingErrno } from '../utils/errors.js';
import { realPathInside } from './resolve.js';

const PROC_FD = process.platform === 'linux' ? '/proc/self/fd/' : undefined;
// O_NONBLOCK: opening a FIFO or device for reading must never wait for a writer.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
// Linux's O_PATH (not in Node's constants): a handle on an inode that opens no content.
const O_PATH = 0o10000000;

/** The path of `abs` (inside `root`) relative to it, '/'-joined: '' for the root itself. */
export function relativeKey(root: string, abs: string): string {
  if (abs === root) return '';
  return abs
    .slice(root === sep ? 1 : root.length + 1)
    .split(sep)
    .join('/');
}

/** Whether `path` (absolute, normalised) is `root` or lies below it. */
export function isInside(root: string, path: string): boolean {
  return path === root || path.startsWith(root === sep ? root : root + sep);
}

/**
 * Turns a normalised `file:` URL into an absolute path, or undefined when it cannot name a local
 * file: a foreign host, an encoded separator, a NUL byte.
 */
export const pathFromFileUrl = rememberRecent((href: string): string | undefined => {
  let path: string;
  try {
    path = fileURLToPath(href);
  } catch {
    return undefined;
  }
  // An empty segment (`a//b`) is one more spelling of `a/b`: refused, so a rule written for `a/b/**` cannot be sidestepped.
  if (path.includes('\0') || !isAbsolute(path) || path.includes('//')) return undefined;
  const normalised = resolve(path);
  // A trailing slash names a directory; resolve() drops it, which is what we want for the check.
  return normalised;
});

/** An open, verified file descriptor and what it is. Close it with `closeSync(fd)`. */
export interface OpenedEntry {
  fd: number;
  stats: Stats;
  /** The real path that was opened. */
  realPath: string;
}

/**
 * Opens `path` for reading and verifies the opened object lies inside `root`. Nothing outside the
 * root is ever opened for reading, and an outside path answers exactly like a missing one.
 *
 * On Linux the path is first taken as an `O_PATH|O_NOFOLLOW` handle (`openDirect`): a handle on an
 * inode that opens no content, touches no FIFO or device, and needs no read permission on the object
 * — so taking it has no side effect and no errno oracle even when a directory link on the way leads
 * outside. The handle's type (a regular file or a directory; a final symlink is never followed here)
 * and its kernel path (`/proc/self/fd`, inside the root) are judged, and only then is that very
 * inode reopened for reading through `/proc/self/fd`. A component swapped for a symlink in between
 * cannot escape: what is reopened is what was judged. When the direct handle cannot be taken for a
 * reason other than "missing" (permission denied on the way, which may have arisen outside), or it
 * ends on a symlink, the path is resolved the slow way instead.
 *
 * The slow way, and the only way elsewhere — check before open: the real path is found first without
 * opening anything (`resolve.ts`: realpath(3), or lstat and readlink component by component) and
 * judged — anything missing or leading outside is undefined before anything is opened. Only a regular
 * file or a directory is then opened: on Linux through an `O_PATH|O_NOFOLLOW` handle on the real path
 * judged as above; elsewhere with `O_NOFOLLOW`, then the descriptor's real path is verified by a
 * device/inode comparison. Returns undefined for anything missing, outside, or neither a file nor a
 * directory; other errors inside the root (e.g. permission denied) are thrown for the caller to
 * classify.
 */
export function openInside(root: string, path: string): OpenedEntry | undefined {
  if (!isInside(root, path)) return undefined;
  if (PROC_FD !== undefined) {
    const direct = openDirect(root, path, PROC_FD);
    if (direct !== SLOW_WAY) return direct;
  }
  const real = realPathInside(root, path);
  if (real === undefined) return undefined;
  try {
    return PROC_FD === undefined
      ? openVerified(root, real)
      : (openThroughHandle(root, real, PROC_FD) ?? undefined);
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

/** `openDirect` could not judge the path by itself: resolve it component by component. */
const SLOW_WAY = Symbol('slow way');

/**
 * Linux: an `O_PATH|O_NOFOLLOW` handle on `path` as given (the kernel follows directory links on
 * the way), judged and reopened by `openThroughHandle`. Missing — wherever it arose — is undefined;
 * any other failure to take the handle, or a final symlink, is left to the slow way, which tells an
 * inside failure (thrown) from an outside one (undefined).
 */
function openDirect(
  root: string,
  path: string,
  procFd: string,
): OpenedEntry | undefined | typeof SLOW_WAY {
  let handle: number;
  try {
    handle = openSync(path, O_PATH | NOFOLLOW);
  } catch (error) {
    return isMissing(error) ? undefined : SLOW_WAY;
  }
  try {
    const opened = judgeHandle(root, handle, procFd);
    return opened === null ? SLOW_WAY : opened;
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  } finally {
    closeSync(handle);
  }
}

/** Linux: judge an O_PATH handle on `real` (type, kernel path), then reopen that inode for reading. */
function openThroughHandle(
  root: string,
  real: string,
  procFd: string,
): OpenedEntry | undefined | null {
  const handle = openSync(real, O_PATH | NOFOLLOW);
  try {
    return judgeHandle(root, handle, procFd);
  } finally {
    closeSync(handle);
  }
}

/**
 * The object an O_PATH handle is on, reopened for reading when it is a regular file or a directory
 * whose kernel path lies inside `root`; undefined when it is anything else or outside; null when it
 * is a symbolic link (never followed from a handle).
 */
function judgeHandle(root: string, handle: number, procFd: string): OpenedEntry | undefined | null {
  const stats = fstatSync(handle);
  if (stats.isSymbolicLink()) return null;
  if (!(stats.isFile() || stats.isDirectory())) return undefined;
  const realPath = readlinkSync(procFd + handle);
  if (!isInside(root, realPath)) return undefined;
  return { fd: openSync(procFd + handle, OPEN_FLAGS), stats, realPath };
}

/** Elsewhere: a file or directory judged by lstat, opened without following a final link, then verified. */
function openVerified(root: string, real: string): OpenedEntry | undefined {
  const before = lstatSync(real);
  if (!(before.isFile() || before.isDirectory())) return undefined;
  const fd = openSync(real, OPEN_FLAGS | NOFOLLOW);
  try {
    const realPath = realPathOfFd(fd, real);
    const stats = fstatSync(fd);
    if (
      realPath === undefined ||
      !isInside(root, realPath) ||
      !(stats.isFile() || stats.isDirectory())
    ) {
      closeSync(fd);
      return undefined;
    }
    return { fd, stats, realPath };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/** The path of an open descriptor, as the kernel sees it. */
export function fdPath(fd: number, fallback: string): string {
  return PROC_FD === undefined ? fallback : PROC_FD + fd;
}

function realPathOfFd(fd: number, path: string): string | undefined {
  if (PROC_FD !== undefined) return readlinkSync(PROC_FD + fd);
  // Elsewhere: resolve the path, then prove the descriptor is that very file (same device and inode).
  const real = realpathSync.native(path);
  const a = fstatSync(fd);
  const b = statSync(real);
  return a.dev === b.dev && a.ino === b.ino ? real : undefined;
}

export const isMissing = isMissingErrno;
