/**
 * The open behind list hints: a listed file is opened through `openInside` (judged inside the root
 * on what the kernel reached, FIFOs and devices never opened) and read only while it is the very
 * file the listing saw — a regular file with the device, inode and size of its listing stat. A file
 * replaced since (rewritten under a new inode, grown, or swapped for a link or a FIFO) is not read:
 * it is listed without hints, and the next listing sees it as it is.
 */
import { closeSync, type Stats } from 'node:fs';
import { openInside } from './containment.js';

/** What the listing saw of a file: the open must find the very same inode. */
export type ListedStats = Pick<Stats, 'dev' | 'ino' | 'size'>;

/**
 * An open descriptor on the regular file listed at `abs` (inside `root`) with `listed` stats, or
 * undefined when it is not that file any more or cannot be reached inside the root. The caller
 * closes it; other errors (permission denied) are thrown.
 */
export function openListed(root: string, abs: string, listed: ListedStats): number | undefined {
  const opened = openInside(root, abs);
  if (opened === undefined) return undefined;
  const { stats } = opened;
  if (
    stats.isFile() &&
    stats.dev === listed.dev &&
    stats.ino === listed.ino &&
    stats.size === listed.size
  )
    return opened.fd;
  closeSync(opened.fd);
  return undefined;
}
