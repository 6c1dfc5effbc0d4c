/**
 * What a subscription to a files URI is judged by — the same verdict as a read's (`ServedTree.open`:
 * inside the root by its real path, a file or a directory, servable, served to this caller, readable)
 * — reached without opening anything: the real path (realpath(3), or the walk of resolve.ts), an
 * `lstat` of it and an access(2) check. A watch reads no content on the caller's behalf; it learns
 * only what `reachable` would say, so the descriptor a read needs (an O_PATH handle, its kernel path,
 * the reopen through /proc) is not made for it. That was most of a subscribe's CPU time.
 */
import { accessSync, constants, lstatSync, type BigIntStats } from 'node:fs';
import { NotFoundError } from '../../core/errors.js';
import type { CallContext } from '../../core/types.js';
import { isMissingErrno, providerError } from '../utils/errors.js';
import { isInside, pathFromFileUrl } from './containment.js';
import { realPathInside } from './resolve.js';
import type { ServedTree } from './served.js';

/** A served path a subscription may watch: the path asked for (perhaps a symlink) and what it is. */
export interface WatchTarget {
  path: string;
  realPath: string;
  /** `lstat` of the real path (the object itself), in nanoseconds: the baseline of its signature. */
  stats: BigIntStats;
}

/**
 * The path `uri` names when a read of it would be served to `ctx`'s caller; NotFoundError for
 * anything a read answers as missing, and the read's error (e.g. permission denied) otherwise.
 */
export function watchTarget(tree: ServedTree, uri: string, ctx?: CallContext): WatchTarget {
  const path = pathFromFileUrl(uri);
  if (path === undefined || !isInside(tree.root, path)) throw new NotFoundError(uri);
  let realPath: string | undefined;
  let stats: BigIntStats | undefined;
  try {
    realPath = realPathInside(tree.root, path);
    if (realPath !== undefined) {
      stats = lstatSync(realPath, { bigint: true, throwIfNoEntry: false });
    }
  } catch (error) {
    if (isMissingErrno(error)) throw new NotFoundError(uri);
    throw providerError(uri, error);
  }
  if (realPath === undefined || stats === undefined) throw new NotFoundError(uri);
  const isDir = stats.isDirectory();
  const isFile = stats.isFile();
  // Judged as the number-valued stats a read's descriptor gives (an inode past 2^53 rounds alike).
  const judged = {
    dev: Number(stats.dev),
    ino: Number(stats.ino),
    nlink: Number(stats.nlink),
    isFile: () => isFile,
  };
  if (!isDir && !isFile) throw new NotFoundError(uri);
  try {
    // A read then opens the file or directory for reading (before judging it served): what may not
    // be opened is refused as the read refuses it.
    accessSync(realPath, constants.R_OK);
  } catch (error) {
    if (isMissingErrno(error)) throw new NotFoundError(uri);
    throw providerError(uri, error);
  }
  if (!tree.servable(realPath, judged) || !tree.served(path, realPath, isDir, ctx))
    throw new NotFoundError(uri);
  return { path, realPath, stats };
}
