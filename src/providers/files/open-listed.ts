/**
 * A cheaper verified open for the files a list page just listed, one directory at a time: the
 * directory is opened once through `openInside` (its real path judged inside the root), and each
 * listed child is then reached through that descriptor — `/proc/self/fd/DIR/NAME`, one component,
 * never following a final link — as an `O_PATH` handle that opens no content. Only when that handle
 * is a regular file with the device, inode and size the listing saw is the same inode reopened for
 * reading. A directory swapped for a link after it was opened cannot lead elsewhere (the descriptor
 * holds the inode that was judged), a child swapped for a link, FIFO or device is never opened, and
 * a child replaced since its stat is not read.
 *
 * Linux only (`/proc/self/fd` and `O_PATH`); elsewhere, and for a listed symlink (its target is
 * judged by `openInside`), the caller falls back to `openInside`.
 */
import { closeSync, constants, fstatSync, openSync, type Stats } from 'node:fs';
import { basename, dirname } from 'node:path';
import { isMissing, openInside } from './containment.js';

const PROC_FD = process.platform === 'linux' ? '/proc/self/fd/' : undefined;
// O_NONBLOCK: opening for reading never waits on anything.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
// Linux's O_PATH (not in Node's constants): a handle on an inode that opens no content.
const O_PATH = 0o10000000;

/** Whether this platform has the cheap path (else every open is `openInside`). */
export const CHEAP_OPEN = PROC_FD !== undefined;

/** What the listing saw of a file: the open must find the very same inode. */
export type ListedStats = Pick<Stats, 'dev' | 'ino' | 'size'>;

/**
 * Opens listed files of a root for reading, keeping the descriptor of the directory they are in
 * between calls (listed files come directory by directory). `close()` releases it.
 */
export class ListedOpener {
  private dir: string | undefined;
  private dirFd: number | undefined;

  constructor(private readonly root: string) {}

  /**
   * An open descriptor on the regular file listed at `abs` with `listed` stats, or undefined when it
   * is not that file any more (or cannot be reached inside the root). The caller closes it.
   */
  open(abs: string, listed: ListedStats): number | undefined {
    if (PROC_FD === undefined) return this.fallback(abs, listed);
    const dirFd = this.directory(dirname(abs));
    if (dirFd === undefined) return undefined;
    let handle: number;
    try {
      handle = openSync(`${PROC_FD}${dirFd}/${basename(abs)}`, O_PATH | NOFOLLOW);
    } catch (error) {
      if (isMissing(error) || (error as NodeJS.ErrnoException).code === 'EACCES') return undefined;
      throw error;
    }
    try {
      const stats = fstatSync(handle);
      // A listed symlink: its target is judged the long way.
      if (stats.isSymbolicLink()) return this.fallback(abs, listed);
      if (!same(stats, listed)) return undefined;
      return openSync(`${PROC_FD}${handle}`, OPEN_FLAGS);
    } finally {
      closeSync(handle);
    }
  }

  /** Releases the directory descriptor held. */
  close(): void {
    if (this.dirFd !== undefined) closeSync(this.dirFd);
    this.dirFd = undefined;
    this.dir = undefined;
  }

  private directory(dir: string): number | undefined {
    if (dir === this.dir) return this.dirFd;
    this.close();
    this.dir = dir;
    const opened = openInside(this.root, dir);
    if (opened === undefined) return undefined;
    if (!opened.stats.isDirectory()) {
      closeSync(opened.fd);
      return undefined;
    }
    this.dirFd = opened.fd;
    return opened.fd;
  }

  private fallback(abs: string, listed: ListedStats): number | undefined {
    const opened = openInside(this.root, abs);
    if (opened === undefined) return undefined;
    if (opened.stats.isFile() && same(opened.stats, listed)) return opened.fd;
    closeSync(opened.fd);
    return undefined;
  }
}

function same(stats: Stats, listed: ListedStats): boolean {
  return (
    stats.isFile() &&
    stats.dev === listed.dev &&
    stats.ino === listed.ino &&
    stats.size === listed.size
  );
}
