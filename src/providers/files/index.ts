/**
 * The files provider: one local directory tree as `file://` resources. Lists every regular file
 * (keyset-paged, stable order), reads files as UTF-8 text or base64 blobs, reads a directory as a
 * listing of its children, and refuses — exactly as if missing — anything outside its root.
 */
import { closeSync, lstatSync, realpathSync, statSync, type Stats } from 'node:fs';
import { basename, join, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  ConfigError,
  InvalidArgumentError,
  NotFoundError,
  TooLargeError,
} from '../../core/errors.js';
import { silentLogger, type Logger } from '../../core/log.js';
import type {
  CallContext,
  DirectoryEntry,
  Provider,
  ProviderFactory,
  ReadResult,
  ResourceChange,
  ResourceInfo,
  ResourceTemplate,
} from '../../core/types.js';
import { pathCompleter } from './complete.js';
import {
  fdPath,
  isInside,
  openInside,
  pathFromFileUrl,
  relativeKey,
  type OpenedEntry,
} from './containment.js';
import { mimeFromName, toContents } from '../utils/content.js';
import { providerError } from '../utils/errors.js';
import { limitFor, readLimits, tooLarge } from '../utils/read-limit.js';
import { canonicalRoot } from '../utils/root.js';
import { FileHeads, type Described } from './heads.js';
import { HiddenFiles } from './hidden.js';
import { IgnoreRules, type IgnoreOptions } from './ignore.js';
import { RecentFiles } from './recent.js';
import { statInside, type Resolved } from './resolve.js';
import { fileTemplates } from './templates.js';
import { fileRead, filePart, readFilePart, readSpan } from './parts.js';
import { isValidKey, readSortedDir, walkPage } from './walk.js';
import { RootWatcher, type WatchOptions } from './watch.js';
import { definedProps } from '../../core/defined.js';

export const PROVIDER_NAME = 'files';

/** Default read cap: 7 MiB, whose base64 (9.33 MiB) still fits the SDK client's 10 MiB stdio message. */
export const DEFAULT_MAX_READ_BYTES = 7 * 1024 * 1024;
/** Entries a single list call may examine beyond the page itself (ignored files cost a look too). */
const SCAN_BUDGET_FACTOR = 8;
const SCAN_BUDGET_MIN = 10_000;

export interface FilesOptions extends IgnoreOptions {
  /** The directory to serve. Must exist. */
  root: string;
  /** Largest file read in one piece, in bytes. @default 7340032 (7 MiB) */
  maxReadBytes?: number | undefined;
  /** Change detection settings. @default native watching, 20 ms settle */
  watch?: WatchOptions | undefined;
  /** Where warnings go (e.g. a fall-back to polling). @default silent */
  logger?: Logger | undefined;
  /**
   * Serve regular files that have more than one hard link. A hard link inside the root may be the
   * very inode of a file outside it (containment sees only paths), so such files are refused —
   * left out of lists and answered like missing files — unless this is set. @default false
   */
  allowHardlinks?: boolean | undefined;
  /**
   * Files never served, whatever the rules (by real path and by inode): what the server keeps — its
   * config file, TLS key and certificate, secret file, audit log — when it lies inside the root.
   * @default none
   */
  hide?: string[] | undefined;
  /**
   * Directories never served, with everything in them now or later (by real path; the directory
   * also by inode): the server's state directory (search index, cursor key). @default none
   */
  hideDirectories?: string[] | undefined;
  /**
   * How long one list page may spend reading the first bytes of files it has not described yet
   * (sniffed type, description), ms; the rest are read in the background for later pages. 0 never
   * waits. @default 25
   */
  headBudgetMs?: number | undefined;
}

export interface DirectoryChild {
  name: string;
  uri: string;
  kind: 'file' | 'directory';
  size?: number;
}

/** A files provider: the Provider contract plus introspection of its open watches. */
export interface FilesProvider extends Provider {
  watchStats(): { paths: number; dirWatchers: number; tree: boolean; polling: boolean };
}

export const filesProvider = ((options: FilesOptions): FilesProvider => {
  const root = canonicalRoot(options.root);
  const maxReadBytes = options.maxReadBytes ?? DEFAULT_MAX_READ_BYTES;
  if (!Number.isSafeInteger(maxReadBytes) || maxReadBytes < 1) {
    throw new ConfigError('maxReadBytes', 'must be a positive whole number of bytes', {
      value: maxReadBytes,
    });
  }
  const hidden = new HiddenFiles(options.hide, options.hideDirectories);
  const rules = new IgnoreRules(root, { ...options, reserved: hidden.relativeTo(root) });
  const rootUri = directoryUri(root);
  const recent = new RecentFiles();
  const allowHardlinks = options.allowHardlinks === true;
  /** Whether a file or directory (its real path and the stats of the object) may be served at all. */
  const servable = (realPath: string, stats: Stats): boolean =>
    !hidden.has(realPath, stats) && (allowHardlinks || !stats.isFile() || stats.nlink <= 1);
  const watcher = new RootWatcher(root, rules, options.logger ?? silentLogger, {
    ...options.watch,
    includeGitDir: options.includeGitDir,
  });

  const relOf = (path: string): string => relativeKey(root, path);
  const heads = new FileHeads(root, { budgetMs: options.headBudgetMs });

  const info = (abs: string, rel: string, stats: Stats): ResourceInfo => {
    const name = basename(abs);
    const mimeType = mimeFromName(name);
    return {
      uri: pathToFileURL(abs).href,
      name,
      title: rel,
      ...definedProps({ mimeType }),
      size: stats.size,
      annotations: { lastModified: new Date(stats.mtimeMs).toISOString() },
    };
  };

  /** What a tree event means for the resource at `abs`: listed now (with its info), a directory, or gone. */
  const changeOf = (abs: string): ResourceChange => {
    const rel = relOf(abs);
    const stats = statSync(abs, { throwIfNoEntry: false });
    if (stats?.isDirectory() === true) return { uri: directoryUri(abs), container: true };
    if (
      stats === undefined ||
      !stats.isFile() ||
      rules.excludedPath(rel, false) ||
      (!hidden.empty && hidden.has(realPathOf(abs), stats))
    )
      return { uri: pathToFileURL(abs).href };
    return { uri: pathToFileURL(abs).href, info: info(abs, rel, stats) };
  };

  const provider: FilesProvider = {
    name: PROVIDER_NAME,
    root: rootUri,

    list: (after, limit, ctx) => listPage(after, limit, ctx, undefined),

    async listUnder(uri, after, limit, ctx) {
      const path = pathFromFileUrl(uri);
      if (path === undefined || !isInside(root, path)) return { items: [] };
      const under = relOf(path);
      return listPage(after, limit, ctx, under === '' ? undefined : under);
    },

    isValidKey,

    async read(uri, ctx) {
      // A query or fragment is never silently dropped: it names a part, or it is refused.
      const { base, part } = filePart(uri);
      if (part.kind === 'whole') {
        const again = readRecent(base, ctx);
        if (again !== undefined) return again;
      }
      let opened: OpenedEntry & { path: string };
      try {
        opened = openServed(base, ctx);
      } catch (error) {
        // Missing, outside or excluded: reported under the URI the client sent.
        throw error instanceof NotFoundError ? new NotFoundError(uri) : error;
      }
      try {
        const { stats } = opened;
        const limits = readLimits(ctx, maxReadBytes);
        if (part.kind !== 'whole')
          return { contents: [await readFilePart(uri, opened, part, limits, ctx)] };
        if (stats.isDirectory()) return readDirectory(opened, opened.path, ctx);
        // Decided from the size, before a byte is read.
        const mimeType = mimeFromName(basename(opened.path));
        const limit = limitFor(limits, mimeType);
        if (stats.size > limit)
          throw tooLarge(uri, stats.size, limit, { limits, mimeType, lines: true });
        const bytes = await readSpan(fileRead(opened.fd, stats.size), 0, stats.size, ctx);
        const contents = Object.freeze(
          toContents(pathToFileURL(opened.path).href, basename(opened.path), bytes),
        );
        // Only a file reached without any symlink is kept: through a link, the same unchanged inode
        // could later be reached by another route, which the rules must judge afresh.
        // Nor one over the source's cap (read for a document's rendition): a later read would get it.
        if (
          bytes.length === stats.size &&
          stats.size <= maxReadBytes &&
          opened.realPath === opened.path
        )
          recent.keep(opened.path, stats, contents);
        if (bytes.length !== stats.size) return { contents: [contents] };
        const { dev, ino, size, mtimeMs, ctimeMs } = stats;
        return { contents: [contents], version: `${dev}:${ino}:${size}:${mtimeMs}:${ctimeMs}` };
      } catch (error) {
        throw providerError(uri, error);
      } finally {
        closeSync(opened.fd);
      }
    },

    canonical(uri) {
      // The file or directory a URI names, as listed: `?lines=` (the line template) and a trailing
      // slash on a file are spellings of it; a directory's URI ends in '/'. Other queries are
      // refused by the read itself. Existence is not judged here (a missing path names itself).
      const cut = uri.search(/[?#]/);
      const path = pathFromFileUrl(cut < 0 ? uri : uri.slice(0, cut));
      if (path === undefined || !isInside(root, path)) throw new NotFoundError(uri);
      if (path === root) return rootUri;
      let isDir = false;
      try {
        isDir = statSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false;
      } catch {
        // unreadable: the read says so; judged as the file it would be
      }
      return isDir ? directoryUri(path) : pathToFileURL(path).href;
    },

    reachable(uri, ctx) {
      // Refused exactly when a read would be: the target of a symlink is judged as well.
      try {
        closeSync(openServed(uri, ctx).fd);
        return true;
      } catch (error) {
        if (error instanceof NotFoundError) return false;
        throw error;
      }
    },

    async watch(uri, onChange) {
      const opened = openServed(uri);
      closeSync(opened.fd);
      return watcher.watchPath(opened.path, opened.stats.isDirectory(), onChange);
    },

    async readDirectory(uri, after, limit, ctx) {
      if (filePart(uri).part.kind !== 'whole')
        throw new InvalidArgumentError('uri', 'a directory has no parts: read it without a query', {
          uri,
        });
      const opened = openServed(uri, ctx);
      try {
        if (!opened.stats.isDirectory()) throw new NotFoundError(uri);
        const items: DirectoryEntry[] = [];
        let last: string | undefined;
        for (const entry of directoryEntries(opened, opened.path, ctx, after)) {
          if (items.length === limit) return { items, last: last! };
          items.push(entry);
          last = entry.name;
        }
        return { items };
      } finally {
        closeSync(opened.fd);
      }
    },

    templates: () => templates,

    onListChanged(listener) {
      return watcher.onListChanged(listener);
    },

    onChanges(listener) {
      return watcher.onTreeChanges((events) =>
        listener(events.map((event) => changeOf(event.path))),
      );
    },

    close() {
      heads.close();
      return watcher.close();
    },

    /** Open watches, for tests and metrics. */
    watchStats: () => watcher.stats(),
  };

  /** One page of the tree, or of the subtree of the directory `under` (its key). */
  async function listPage(
    after: string | undefined,
    limit: number,
    ctx: CallContext | undefined,
    under: string | undefined,
  ): Promise<{ items: ResourceInfo[]; last?: string }> {
    const page = await walkPage(
      root,
      rules,
      after,
      limit,
      Math.max(SCAN_BUDGET_MIN, limit * SCAN_BUDGET_FACTOR),
      { skipDirectory, under },
    );
    const items: ResourceInfo[] = [];
    // Content hints (type, description) for what the caller may read; the search index reads all anyway.
    const described: Described[] | undefined = ctx?.contentIds === true ? undefined : [];
    for (const e of page.entries) {
      if (!servable(e.real ?? e.abs, e.stats)) continue;
      // A symlink is listed only when the caller may read where it leads (as a read of it would
      // require): its size and date are the target's, which are not the caller's to see otherwise.
      if (
        e.real !== undefined &&
        ctx?.allows !== undefined &&
        !ctx.allows('read', pathToFileURL(e.real).href)
      )
        continue;
      const item = info(e.abs, e.rel, e.stats);
      items.push(item);
      if (described !== undefined && (ctx?.allows === undefined || ctx.allows('read', item.uri)))
        described.push({ item, abs: e.abs, stats: e.stats });
    }
    if (described !== undefined && described.length > 0) heads.annotate(described);
    return page.last === undefined ? { items } : { items, last: page.last };
  }

  /** A directory the walk does not enter: a hidden one (a bind mount of the state directory, say). */
  function skipDirectory(abs: string): boolean {
    return hidden.hasPath(abs);
  }

  const templates: ResourceTemplate[] = fileTemplates({
    rootUri,
    maxReadBytes,
    read: (uri, ctx) => provider.read(uri, ctx),
    completePath: pathCompleter({ root, rules, hidden }),
  });

  /**
   * Opens the file or directory a URI names, if it is served: inside the root (real path of what
   * was opened), a regular file or a directory, and not excluded. Anything else is NotFoundError.
   */
  function openServed(uri: string, ctx?: CallContext): OpenedEntry & { path: string } {
    const path = pathFromFileUrl(uri);
    if (path === undefined || !isInside(root, path)) throw new NotFoundError(uri);
    let opened: OpenedEntry | undefined;
    try {
      opened = openInside(root, path);
    } catch (error) {
      throw providerError(uri, error);
    }
    if (opened === undefined) throw new NotFoundError(uri);
    const { stats, realPath } = opened;
    const isDir = stats.isDirectory();
    if (
      (!isDir && !stats.isFile()) ||
      !servable(realPath, stats) ||
      !served(path, realPath, isDir, ctx)
    ) {
      closeSync(opened.fd);
      throw new NotFoundError(uri);
    }
    return { ...opened, path };
  }

  /** Whether the entry at `path` (which is `realPath`, perhaps through a symlink) is served to this caller. */
  function served(
    path: string,
    realPath: string,
    isDir: boolean,
    ctx: CallContext | undefined,
  ): boolean {
    if (rules.excludedPath(relOf(path), isDir)) return false;
    if (realPath === path) return true;
    if (rules.excludedPath(relOf(realPath), isDir)) return false;
    // Through a symlink, access rules judge where it leads as well as the name asked for.
    return (
      ctx?.allows === undefined ||
      ctx.allows('read', isDir ? directoryUri(realPath) : pathToFileURL(realPath).href, isDir)
    );
  }

  /**
   * A file read recently and unchanged since (see recent.ts), or undefined to read it afresh.
   * Exclusion and access rules are judged on every read, as for a fresh one.
   */
  function readRecent(uri: string, ctx: CallContext): ReadResult | undefined {
    const path = pathFromFileUrl(uri);
    if (path === undefined || !recent.has(path)) return undefined;
    let stats: Stats | undefined;
    try {
      stats = statSync(path, { throwIfNoEntry: false });
    } catch {
      stats = undefined; // e.g. permission denied now: the fresh read says so
    }
    const contents = recent.get(path, stats);
    if (contents === undefined || !served(path, path, false, ctx)) return undefined;
    return { contents: [contents] };
  }

  function readDirectory(opened: OpenedEntry, path: string, ctx: CallContext): ReadResult {
    const children: DirectoryChild[] = [];
    let bytes = 2;
    const dirUri = path === root ? rootUri : directoryUri(path);
    for (const entry of directoryEntries(opened, path, ctx, undefined)) {
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
    opened: OpenedEntry,
    path: string,
    ctx: CallContext,
    after: string | undefined,
  ): Generator<DirectoryEntry> {
    const rel = relOf(path);
    for (const entry of readSortedDir(fdPath(opened.fd, opened.realPath))) {
      if (after !== undefined && entry.name <= after) continue;
      const childRel = rel === '' ? entry.name : `${rel}/${entry.name}`;
      const abs = path === sep ? `${sep}${entry.name}` : `${path}${sep}${entry.name}`;
      const child = describeChild(abs, join(opened.realPath, entry.name), entry.kind, ctx);
      if (child === undefined) continue;
      if (rules.excludedPath(childRel, child.kind === 'directory')) continue;
      // Children the principal may not see are not named at all.
      if (ctx.allows !== undefined && !ctx.allows('list', child.uri, child.kind === 'directory'))
        continue;
      yield child;
    }
  }

  /**
   * A directory read's entry for `abs`, or undefined when it is not served. A symlink is described
   * by where it leads, and only when the caller may read there: its size is the target's. A FIFO,
   * socket or device is named as `special` (never read).
   */
  function describeChild(
    abs: string,
    real: string,
    kind: string,
    ctx: CallContext,
  ): DirectoryEntry | undefined {
    const name = basename(abs);
    if (kind === 'directory')
      return hidden.hasPath(real)
        ? undefined
        : { name, uri: directoryUri(abs), kind: 'directory', mimeType: 'inode/directory' };
    if (kind !== 'file' && kind !== 'symlink')
      return hidden.hasPath(real)
        ? undefined
        : { name, uri: pathToFileURL(abs).href, kind: 'special' };
    if (kind === 'file') {
      const stats = lstatSync(real, { throwIfNoEntry: false }); // lstat: a file swapped for a symlink since readdir is skipped
      return stats?.isFile() && servable(real, stats)
        ? fileEntry(abs, name, stats, false)
        : undefined;
    }
    // A symlink: described by where it leads, found without opening it.
    let target: Resolved | undefined;
    try {
      target = statInside(root, abs);
    } catch {
      return undefined;
    }
    if (target === undefined) return undefined;
    const { stats, realPath } = target;
    const isDir = stats.isDirectory();
    if (
      (!isDir && !stats.isFile()) ||
      rules.excludedPath(relOf(realPath), isDir) ||
      !servable(realPath, stats)
    )
      return undefined;
    if (
      ctx.allows !== undefined &&
      !ctx.allows('read', isDir ? directoryUri(realPath) : pathToFileURL(realPath).href, isDir)
    )
      return undefined;
    if (isDir)
      return {
        name,
        uri: directoryUri(abs),
        kind: 'directory',
        mimeType: 'inode/directory',
        link: true,
      };
    return fileEntry(abs, name, stats, true);
  }

  function fileEntry(abs: string, name: string, stats: Stats, link: boolean): DirectoryEntry {
    const mimeType = mimeFromName(name);
    return {
      name,
      uri: pathToFileURL(abs).href,
      kind: 'file',
      ...definedProps({ mimeType }),
      size: stats.size,
      ...(link ? { link } : {}),
    };
  }

  return provider;
}) satisfies ProviderFactory<FilesOptions>;

/** The real path of `abs`, or `abs` itself when it cannot be resolved (then gone, or not ours to read). */
function realPathOf(abs: string): string {
  try {
    return realpathSync.native(abs);
  } catch {
    return abs;
  }
}

function directoryUri(abs: string): string {
  const href = pathToFileURL(abs).href;
  return href.endsWith('/') ? href : `${href}/`;
}
