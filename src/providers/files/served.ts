/**
 * What a files provider serves, judged in one place: an entry is served when it lies inside the
 * root (by the real path of what was opened), is a regular file or a directory, is not hidden (the
 * server's own files, by path and inode), is not a file with several hard links (unless allowed),
 * is not excluded by the ignore rules — under its own name and, through a symlink, where it leads —
 * and, through a symlink, may be read by the caller where it leads. Everything else answers exactly
 * like a missing file.
 */
import { closeSync, realpathSync, type Stats } from 'node:fs';
import { sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { NotFoundError } from '../../core/errors.js';
import type { CallContext } from '../../core/types.js';
import { providerError } from '../utils/errors.js';
import {
  isInside,
  openInside,
  pathFromFileUrl,
  relativeKey,
  type OpenedEntry,
} from './containment.js';
import type { HiddenFiles } from './hidden.js';
import type { IgnoreRules } from './ignore.js';

/** An entry opened because it is served, with the path it was asked for (perhaps a symlink). */
export type ServedEntry = OpenedEntry & { path: string };

export class ServedTree {
  /** The root's directory URI (ends in '/'). */
  readonly rootUri: string;

  constructor(
    /** The canonical root directory. */
    readonly root: string,
    readonly rules: IgnoreRules,
    readonly hidden: HiddenFiles,
    private readonly allowHardlinks: boolean,
  ) {
    this.rootUri = directoryUri(root);
  }

  /** The key of `path` (inside the root): '/'-joined, '' for the root itself. */
  relOf(path: string): string {
    return relativeKey(this.root, path);
  }

  /** Whether a file or directory (its real path and the stats of the object) may be served at all. */
  servable(
    realPath: string,
    stats: Pick<Stats, 'dev' | 'ino' | 'nlink'> & { isFile(): boolean },
  ): boolean {
    return (
      !this.hidden.has(realPath, stats) &&
      (this.allowHardlinks || !stats.isFile() || stats.nlink <= 1)
    );
  }

  /** Whether the entry at `path` (which is `realPath`, perhaps through a symlink) is served to this caller. */
  served(path: string, realPath: string, isDir: boolean, ctx: CallContext | undefined): boolean {
    if (this.rules.excludedPath(this.relOf(path), isDir)) return false;
    if (realPath === path) return true;
    if (this.rules.excludedPath(this.relOf(realPath), isDir)) return false;
    // Through a symlink, access rules judge where it leads as well as the name asked for.
    return ctx?.allows === undefined || ctx.allows('read', entryUri(realPath, isDir), isDir);
  }

  /**
   * Opens the file or directory a URI names, if it is served (see above); anything else is
   * NotFoundError. Close the descriptor with `closeSync(fd)`.
   */
  open(uri: string, ctx?: CallContext): ServedEntry {
    const path = pathFromFileUrl(uri);
    if (path === undefined || !isInside(this.root, path)) throw new NotFoundError(uri);
    let opened: OpenedEntry | undefined;
    try {
      opened = openInside(this.root, path);
    } catch (error) {
      throw providerError(uri, error);
    }
    if (opened === undefined) throw new NotFoundError(uri);
    const { stats, realPath } = opened;
    const isDir = stats.isDirectory();
    if (
      (!isDir && !stats.isFile()) ||
      !this.servable(realPath, stats) ||
      !this.served(path, realPath, isDir, ctx)
    ) {
      closeSync(opened.fd);
      throw new NotFoundError(uri);
    }
    return { ...opened, path };
  }
}

/** A directory's URI: its file URL, ending in '/'. */
export function directoryUri(abs: string): string {
  const href = pathToFileURL(abs).href;
  return href.endsWith('/') ? href : `${href}/`;
}

/**
 * A name `pathToFileURL` leaves as it is on every Node line (letters, digits, '.', '_', '-'): the
 * URI of such a child is its directory's URI and the name, with nothing to encode.
 */
const PLAIN_NAME = /^[A-Za-z0-9._-]+$/;

/**
 * File URIs for the entries of a walk, which come directory by directory: `pathToFileURL`'s href,
 * built as the directory's URI (encoded once while the walk stays in it) plus the child's name when
 * the name needs no encoding — a list page of 1,000 files then encodes one path, not 1,000.
 */
export class FileUris {
  private dir: string | undefined;
  private prefix = '';

  /** `pathToFileURL(abs).href` for the file `abs`, whose last segment is `name`. */
  of(abs: string, name: string): string {
    if (sep !== '/' || !PLAIN_NAME.test(name)) return pathToFileURL(abs).href;
    const dir = abs.length === name.length + 1 ? sep : abs.slice(0, abs.length - name.length - 1);
    if (dir !== this.dir) {
      this.dir = dir;
      this.prefix = directoryUri(dir);
    }
    return this.prefix + name;
  }
}

/** The URI of a directory (ending in '/') or of a file at `abs`. */
export function entryUri(abs: string, isDir: boolean): string {
  return isDir ? directoryUri(abs) : pathToFileURL(abs).href;
}

/** The real path of `abs`, or `abs` itself when it cannot be resolved (then gone, or not ours to read). */
export function realPathOf(abs: string): string {
  try {
    return realpathSync.native(abs);
  } catch {
    return abs;
  }
}
