/**
 * What a files provider never serves, whatever the exclusion and access rules say: what the server
 * keeps — its config file, the TLS key and certificate, the secret file, the audit log (and its
 * rotated files) — and its whole state directory (the search index with its WAL and SHM, the cursor
 * key, and anything created there later), when they lie inside a served root.
 *
 * A hidden file is known by its real path and by its device and inode, so no spelling reaches it:
 * not a URI variant (those resolve to the same path), not a symbolic link (judged on where it leads),
 * not a hard link under another name (same inode). A hidden directory hides everything below its real
 * path, and a directory with its inode (a bind mount) is hidden too. A file with more than one hard
 * link is also compared with what lies in the hidden directories now (files made after start-up, such
 * as a new index), so a hard link to one of them is refused as well. Hidden entries are left out of
 * lists, directory reads, completion and change events, and answer reads, template reads and watches
 * exactly like missing files.
 */
import { lstatSync, readdirSync, realpathSync, statSync, type Stats } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';

/** Entries looked at when a hidden directory's contents are compared by inode (a state dir holds few). */
const MAX_SCANNED = 10_000;
/** Depth below a hidden directory whose files are compared by inode. */
const MAX_SCAN_DEPTH = 4;

export class HiddenFiles {
  private readonly paths = new Set<string>();
  private readonly dirs: string[] = [];
  private readonly inodes = new Set<string>();
  private readonly named: readonly string[];
  private contents: { stamp: string; inodes: Set<string> } | undefined;

  /**
   * `files` and `directories`: absolute or relative to the working directory; ones that do not exist
   * (yet) are kept by name, and by the real path their nearest existing parent gives them.
   */
  constructor(files: readonly string[] = [], directories: readonly string[] = []) {
    this.named = files.map((given) => resolve(given));
    for (const absolute of this.named) {
      for (const spelling of spellings(absolute)) this.paths.add(spelling);
      const id = inodeOf(absolute);
      if (id !== undefined) this.inodes.add(id);
    }
    for (const given of directories) {
      const absolute = resolve(given);
      for (const spelling of spellings(absolute))
        if (!this.dirs.includes(spelling)) this.dirs.push(spelling);
      const id = inodeOf(absolute);
      if (id !== undefined) this.inodes.add(id);
    }
  }

  get empty(): boolean {
    return this.paths.size === 0 && this.dirs.length === 0;
  }

  /** Whether the entry at real path `realPath` (with `stats` of the object, when known) is hidden. */
  has(
    realPath: string,
    stats?: Pick<Stats, 'dev' | 'ino' | 'nlink'> & { isFile(): boolean },
  ): boolean {
    if (this.empty) return false;
    if (this.paths.has(realPath) || this.dirs.some((dir) => inside(dir, realPath))) return true;
    if (stats === undefined) return false;
    const id = `${stats.dev}:${stats.ino}`;
    if (this.inodes.has(id)) return true;
    return stats.isFile() && stats.nlink > 1 && this.linkable().has(id);
  }

  /** Like `has`, for an entry known only by its real path: its inode is looked up (lstat) only when anything is hidden. */
  hasPath(realPath: string): boolean {
    if (this.empty) return false;
    if (this.paths.has(realPath) || this.dirs.some((dir) => inside(dir, realPath))) return true;
    try {
      const stats = lstatSync(realPath, { throwIfNoEntry: false });
      return stats !== undefined && this.has(realPath, stats);
    } catch {
      return false; // cannot be looked at: cannot be read either
    }
  }

  /**
   * The hidden paths that lie below `root` (canonical), relative to it and '/'-joined: what the
   * ignore rules leave out by name, so walks, pollers and watchers never even enter them.
   */
  relativeTo(root: string): string[] {
    const out = new Set<string>();
    for (const path of [...this.paths, ...this.dirs]) {
      if (path === root || !inside(root, path)) continue;
      out.add(relative(root, path).split(sep).join('/'));
    }
    return [...out];
  }

  /**
   * The inodes of the hidden files as they are now, and of every file in the hidden directories:
   * kept while none of the directories looked at changed (a new file changes its directory's mtime).
   */
  private linkable(): Set<string> {
    const stamp = this.stamp();
    if (this.contents?.stamp === stamp) return this.contents.inodes;
    const inodes = new Set<string>();
    for (const file of this.named) {
      const id = inodeOf(file);
      if (id !== undefined) inodes.add(id);
    }
    let budget = MAX_SCANNED;
    const scan = (dir: string, depth: number): void => {
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        return;
      }
      for (const name of names) {
        if (budget-- <= 0) return;
        const path = join(dir, name);
        const stats = lstatSync(path, { throwIfNoEntry: false });
        if (stats === undefined) continue;
        if (stats.isDirectory()) {
          if (depth < MAX_SCAN_DEPTH) scan(path, depth + 1);
        } else {
          inodes.add(`${stats.dev}:${stats.ino}`);
        }
      }
    };
    for (const dir of this.dirs) scan(dir, 0);
    this.contents = { stamp, inodes };
    return inodes;
  }

  /** What changes when a file is added to or removed from a hidden directory (their direct children's too). */
  private stamp(): string {
    const parts: string[] = [];
    const add = (path: string): void => {
      const stats = statSync(path, { throwIfNoEntry: false });
      parts.push(stats === undefined ? '-' : `${stats.ino}:${stats.mtimeMs}`);
    };
    for (const file of this.named) add(file);
    for (const dir of this.dirs) {
      add(dir);
      let names: string[] = [];
      try {
        names = readdirSync(dir);
      } catch {
        // missing or unreadable: its own stamp says so
      }
      for (const name of names) {
        const path = join(dir, name);
        if (lstatSync(path, { throwIfNoEntry: false })?.isDirectory() === true) add(path);
      }
    }
    return parts.join(',');
  }
}

/** `path` and its real path — or, while it does not exist, its nearest existing parent's real path and the rest. */
function spellings(path: string): string[] {
  const out = [path];
  let head = path;
  const tail: string[] = [];
  for (;;) {
    try {
      const real = realpathSync.native(head);
      const full = tail.length === 0 ? real : join(real, ...tail.reverse());
      if (full !== path) out.push(full);
      return out;
    } catch {
      const parent = dirname(head);
      if (parent === head) return out;
      tail.push(basename(head));
      head = parent;
    }
  }
}

function inodeOf(path: string): string | undefined {
  try {
    const stats = statSync(path, { throwIfNoEntry: false });
    return stats === undefined ? undefined : `${stats.dev}:${stats.ino}`;
  } catch {
    return undefined;
  }
}

function inside(dir: string, path: string): boolean {
  return path === dir || path.startsWith(dir === sep ? dir : dir + sep);
}
