/**
 * Files a files provider never serves, whatever the exclusion and access rules say — the server's
 * own config file, with its secrets, when it lies inside a served root. A hidden file is known by
 * its real path and by its device and inode, so no spelling reaches it: not a URI variant (those
 * resolve to the same path), not a symbolic link (judged on where it leads), not a hard link under
 * another name (same inode). Hidden files are left out of lists, directory reads and completion,
 * and answer reads, template reads and watches exactly like missing files.
 */
import { lstatSync, realpathSync, statSync, type Stats } from 'node:fs';
import { resolve } from 'node:path';

export class HiddenFiles {
  private readonly paths = new Set<string>();
  private readonly inodes = new Set<string>();

  /** `paths`: absolute or relative to the working directory; ones that do not exist (yet) are kept by name. */
  constructor(paths: readonly string[] = []) {
    for (const given of paths) {
      const absolute = resolve(given);
      this.paths.add(absolute);
      try {
        this.paths.add(realpathSync.native(absolute));
        const stats = statSync(absolute);
        this.inodes.add(`${stats.dev}:${stats.ino}`);
      } catch {
        // missing now: hidden by name (a later file at that path has a path we know)
      }
    }
  }

  get empty(): boolean {
    return this.paths.size === 0;
  }

  /** Whether the entry at real path `realPath` (with `stats` of the object, when known) is hidden. */
  has(realPath: string, stats?: Pick<Stats, 'dev' | 'ino'>): boolean {
    if (this.paths.size === 0) return false;
    if (this.paths.has(realPath)) return true;
    return stats !== undefined && this.inodes.has(`${stats.dev}:${stats.ino}`);
  }

  /** Like `has`, for an entry known only by its real path: its inode is looked up (lstat) only when any file is hidden. */
  hasPath(realPath: string): boolean {
    if (this.paths.size === 0) return false;
    if (this.paths.has(realPath)) return true;
    if (this.inodes.size === 0) return false;
    try {
      const stats = lstatSync(realPath, { throwIfNoEntry: false });
      return stats !== undefined && this.inodes.has(`${stats.dev}:${stats.ino}`);
    } catch {
      return false; // cannot be looked at: cannot be read either
    }
  }
}
