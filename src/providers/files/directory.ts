/**
 * Directories of a files tree read as directories: a page of served children by name
 * (`resources/directory/read`, skills catalogs), and a whole read of a directory URI as one JSON
 * listing of its children (`inode/directory`), capped at the read limit. A symlink is described by
 * where it leads, and only when the caller may read there; a FIFO, socket or device is named as
 * `special` (never read); children the caller may not see are not named at all.
 */
import { closeSync, lstatSync } from 'node:fs';
import { basename, join, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { InvalidArgumentError, NotFoundError, TooLargeError } from '../../core/errors.js';
import type { CallContext, DirectoryEntry, DirectoryPage, ReadResult } from '../../core/types.js';
import { directoryEntry, fileEntry, specialEntry } from '../utils/directory-entry.js';
import { fdPath, type OpenedEntry } from './containment.js';
import { filePart } from './parts.js';
import { statInside, type Resolved } from './resolve.js';
import { directoryUri, entryUri, type ServedEntry, type ServedTree } from './served.js';
import { readSortedDir } from './walk.js';

/** One child in a directory read as a whole (the JSON text of an `inode/directory` read). */
export interface DirectoryChild {
  name: string;
  uri: string;
  kind: 'file' | 'directory';
  size?: number;
}

/** A page of the served children of the directory `uri`, after the name `after`. */
export function readDirectoryPage(
  tree: ServedTree,
  uri: string,
  after: string | undefined,
  limit: number,
  ctx: CallContext,
): DirectoryPage {
  if (filePart(uri).part.kind !== 'whole')
    throw new InvalidArgumentError('uri', 'a directory has no parts: read it without a query', {
      uri,
    });
  const opened = tree.open(uri, ctx);
  try {
    if (!opened.stats.isDirectory()) throw new NotFoundError(uri);
    const items: DirectoryEntry[] = [];
    let last: string | undefined;
    for (const entry of directoryEntries(tree, opened, opened.path, ctx, after)) {
      if (items.length === limit) return { items, last: last! };
      items.push(entry);
      last = entry.name;
    }
    return { items };
  } finally {
    closeSync(opened.fd);
  }
}

/** An opened directory read whole: its children as JSON, TooLargeError past `maxReadBytes`. */
export function readDirectoryListing(
  tree: ServedTree,
  opened: ServedEntry,
  ctx: CallContext,
  maxReadBytes: number,
): ReadResult {
  const children: DirectoryChild[] = [];
  let bytes = 2;
  const dirUri = directoryUri(opened.path);
  for (const entry of directoryEntries(tree, opened, opened.path, ctx, undefined)) {
    if (entry.kind === 'special') continue;
    const child: DirectoryChild =
      entry.kind === 'directory'
        ? { name: entry.name, uri: entry.uri, kind: 'directory' }
        : { name: entry.name, uri: entry.uri, kind: 'file', size: entry.size! };
    bytes += JSON.stringify(child).length + 1;
    if (bytes > maxReadBytes) throw new TooLargeError(dirUri, bytes, maxReadBytes, 'listing');
    children.push(child);
  }
  return {
    contents: [{ uri: dirUri, mimeType: 'inode/directory', text: JSON.stringify(children) }],
  };
}

/** The served children of an opened directory, sorted by name, after the name `after`. */
function* directoryEntries(
  tree: ServedTree,
  opened: OpenedEntry,
  path: string,
  ctx: CallContext,
  after: string | undefined,
): Generator<DirectoryEntry> {
  const rel = tree.relOf(path);
  for (const entry of readSortedDir(fdPath(opened.fd, opened.realPath))) {
    if (after !== undefined && entry.name <= after) continue;
    const childRel = rel === '' ? entry.name : `${rel}/${entry.name}`;
    const abs = path === sep ? `${sep}${entry.name}` : `${path}${sep}${entry.name}`;
    const child = describeChild(tree, abs, join(opened.realPath, entry.name), entry.kind, ctx);
    if (child === undefined) continue;
    if (tree.rules.excludedPath(childRel, child.kind === 'directory')) continue;
    // Children the principal may not see are not named at all.
    if (ctx.allows !== undefined && !ctx.allows('list', child.uri, child.kind === 'directory'))
      continue;
    yield child;
  }
}

/** A directory read's entry for `abs` (whose real path is `real`), or undefined when it is not served. */
function describeChild(
  tree: ServedTree,
  abs: string,
  real: string,
  kind: string,
  ctx: CallContext,
): DirectoryEntry | undefined {
  const name = basename(abs);
  if (kind === 'directory')
    return tree.hidden.hasPath(real) ? undefined : directoryEntry(name, directoryUri(abs));
  if (kind !== 'file' && kind !== 'symlink')
    return tree.hidden.hasPath(real) ? undefined : specialEntry(name, pathToFileURL(abs).href);
  if (kind === 'file') {
    const stats = lstatSync(real, { throwIfNoEntry: false }); // lstat: a file swapped for a symlink since readdir is skipped
    return stats?.isFile() && tree.servable(real, stats)
      ? fileEntry(name, pathToFileURL(abs).href, stats.size)
      : undefined;
  }
  // A symlink: described by where it leads, found without opening it.
  let target: Resolved | undefined;
  try {
    target = statInside(tree.root, abs);
  } catch {
    return undefined;
  }
  if (target === undefined) return undefined;
  const { stats, realPath } = target;
  const isDir = stats.isDirectory();
  if (
    (!isDir && !stats.isFile()) ||
    tree.rules.excludedPath(tree.relOf(realPath), isDir) ||
    !tree.servable(realPath, stats)
  )
    return undefined;
  if (ctx.allows !== undefined && !ctx.allows('read', entryUri(realPath, isDir), isDir))
    return undefined;
  return isDir
    ? directoryEntry(name, directoryUri(abs), true)
    : fileEntry(name, pathToFileURL(abs).href, stats.size, true);
}
