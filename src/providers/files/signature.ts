/**
 * A watched path's signature, compared before notifying: inode, size and timestamps from a stat,
 * and, when asked, a digest — of the content for files up to 1 MiB, of the sorted names for a
 * directory. A truncate-then-write pair or a touch that changed nothing leaves it as it was.
 */
import { createHash } from 'node:crypto';
import { closeSync, readdirSync, readSync, statSync } from 'node:fs';
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
  if (stats.isDirectory()) {
    let names: string[] = [];
    try {
      names = readdirSync(abs).sort();
    } catch {
      // unreadable now: its stat signature still changes when it does
    }
    return { stat: `d:${stats.ino}`, digest: withDigest ? digestOf(names.join('\0')) : undefined };
  }
  const stat = `f:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`;
  if (!withDigest || stats.size > BigInt(DIGEST_LIMIT)) return { stat, digest: undefined };
  return { stat, digest: contentDigest(root, abs) };
}

function contentDigest(root: string, abs: string): string | undefined {
  const opened = openInside(root, abs);
  if (opened === undefined) return undefined;
  try {
    const size = Math.min(Number(opened.stats.size), DIGEST_LIMIT);
    const buffer = Buffer.allocUnsafe(size);
    let offset = 0;
    while (offset < size) {
      const n = readSync(opened.fd, buffer, offset, size - offset, offset);
      if (n === 0) break;
      offset += n;
    }
    return createHash('sha1').update(buffer.subarray(0, offset)).digest('base64');
  } catch {
    return undefined;
  } finally {
    closeSync(opened.fd);
  }
}

function digestOf(text: string): string {
  return createHash('sha1').update(text).digest('base64');
}
