/**
 * A watched path's signature, compared before notifying: inode, size and timestamps from a stat,
 * and, when asked, a digest — of the content for files up to 1 MiB, of the sorted names for a
 * directory. A truncate-then-write pair or a touch that changed nothing leaves it as it was.
 */
import { hash } from 'node:crypto';
import { closeSync, fstatSync, readdirSync, readSync, statSync, type BigIntStats } from 'node:fs';
import { openInside } from './containment.js';

/** Files larger than this are compared by their stat alone. */
const DIGEST_LIMIT = 1024 * 1024;

export interface PathSignature {
  /** `missing`, `d:<inode>`, or `f:<inode>:<size>:<mtime ns>:<ctime ns>`. */
  stat: string;
  /** Undefined when not asked for, unreadable, or past the size limit. */
  digest: string | undefined;
}

/** What identifies a path's current state. The digest is computed only when asked (events). */
export function pathSignature(root: string, abs: string, withDigest = true): PathSignature {
  const stats = statSync(abs, { bigint: true, throwIfNoEntry: false });
  if (stats === undefined) return { stat: 'missing', digest: undefined };
  if (stats.isDirectory()) return directorySignature(stats, abs, withDigest);
  const stat = fileStat(stats);
  if (!withDigest || stats.size > BigInt(DIGEST_LIMIT)) return { stat, digest: undefined };
  const opened = openInside(root, abs);
  if (opened === undefined) return { stat, digest: undefined };
  try {
    return { stat, digest: contentDigest(opened.fd, BigInt(opened.stats.size)) };
  } finally {
    closeSync(opened.fd);
  }
}

/**
 * The signature of a path already opened (and judged) by the caller, from its descriptor: the same
 * value `pathSignature` gives, without resolving and opening the path a second time.
 */
export function openedSignature(fd: number, abs: string): PathSignature {
  const stats = fstatSync(fd, { bigint: true });
  if (stats.isDirectory()) return directorySignature(stats, abs, true);
  const stat = fileStat(stats);
  if (stats.size > BigInt(DIGEST_LIMIT)) return { stat, digest: undefined };
  return { stat, digest: contentDigest(fd, stats.size) };
}

function directorySignature(stats: BigIntStats, abs: string, withDigest: boolean): PathSignature {
  let names: string[] = [];
  if (withDigest) {
    try {
      names = readdirSync(abs).sort();
    } catch {
      // unreadable now: its stat signature still changes when it does
    }
  }
  return { stat: `d:${stats.ino}`, digest: withDigest ? digestOf(names.join('\0')) : undefined };
}

function fileStat(stats: BigIntStats): string {
  return `f:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`;
}

function contentDigest(fd: number, fileSize: bigint): string | undefined {
  try {
    const size = Math.min(Number(fileSize), DIGEST_LIMIT);
    const buffer = Buffer.allocUnsafe(size);
    let offset = 0;
    while (offset < size) {
      const n = readSync(fd, buffer, offset, size - offset, offset);
      if (n === 0) break;
      offset += n;
    }
    // One-shot hashing: no Hash object per subscribed file (most are small).
    return hash('sha1', buffer.subarray(0, offset), 'base64');
  } catch {
    return undefined;
  }
}

function digestOf(text: string): string {
  return hash('sha1', text, 'base64');
}
