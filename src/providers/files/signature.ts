/**
 * A watched path's signature, compared before notifying: inode, size and timestamps from a stat,
 * and, when asked, a digest — of the content for files up to 1 MiB, of the sorted names for a
 * directory. A truncate-then-write pair or a touch that changed nothing leaves it as it was.
 */
import { hash } from 'node:crypto';
import { closeSync, readdirSync, readSync, statSync, type BigIntStats } from 'node:fs';
import { openInside } from './containment.js';

/** Files larger than this are compared by their stat alone. */
const DIGEST_LIMIT = 1024 * 1024;
/** A file whose ctime is older than this, ms, has settled: see baselineSignature. */
const STABLE_AFTER_MS = 1000;

export interface PathSignature {
  /** `missing`, `d:<inode>`, or `f:<inode>:<size>:<mtime ns>:<ctime ns>`. */
  stat: string;
  /** Undefined when not asked for, unreadable, or past the size limit. */
  digest: string | undefined;
  /**
   * The digest was not taken because the stat alone proves the content (see baselineSignature):
   * an unchanged stat means unchanged content, whatever digest a later event finds.
   */
  deferred?: true;
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
 * The signature a subscription starts from. A file whose ctime is over a second old gets no digest:
 * any later write or attribute change stamps a newer ctime (the kernel's clock has moved on by more
 * than its coarse tick), so while its stat signature is unchanged so is its content, and reading
 * and hashing it up front — the larger part of a subscribe's own cost — buys nothing. The digest is
 * taken by the first event that finds the stat unchanged (`deferred`). A file changed within the
 * last second is digested now, as every event does. `known` is the path's stat when the caller
 * has just taken it (of the object the path leads to).
 */
export function baselineSignature(root: string, abs: string, known?: BigIntStats): PathSignature {
  const stats = known ?? statSync(abs, { bigint: true, throwIfNoEntry: false });
  if (stats === undefined) return { stat: 'missing', digest: undefined };
  if (stats.isDirectory()) return directorySignature(stats, abs, true);
  const stat = fileStat(stats);
  if (stats.size > BigInt(DIGEST_LIMIT)) return { stat, digest: undefined };
  if (stats.ctimeNs < BigInt(Date.now() - STABLE_AFTER_MS) * 1_000_000n)
    return { stat, digest: undefined, deferred: true };
  return pathSignature(root, abs, true);
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
