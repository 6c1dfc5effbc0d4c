/**
 * The files provider: one local directory tree as `file://` resources. Lists every regular file
 * (keyset-paged, stable order), reads files as UTF-8 text or base64 blobs, reads a directory as a
 * listing of its children, and refuses — exactly as if missing — anything outside its root.
 */
import { closeSync, statSync, type Stats } from 'node:fs';
import { basename } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError, NotFoundError } from '../../core/errors.js';
import { silentLogger, type Logger } from '../../core/log.js';
import type {
  CallContext,
  Provider,
  ProviderFactory,
  ReadResult,
  ResourceChange,
  ResourceInfo,
  ResourceTemplate,
} from '../../core/types.js';
import { mimeFromName, toContents } from '../utils/content.js';
import { providerError } from '../utils/errors.js';
import { scanBudget } from '../utils/list-budget.js';
import { limitFor, readLimits, tooLarge } from '../utils/read-limit.js';
import { canonicalRoot } from '../utils/root.js';
import { pathCompleter } from './complete.js';
import { isInside, pathFromFileUrl } from './containment.js';
import { readDirectoryListing, readDirectoryPage } from './directory.js';
import { FileHeads, type Described } from './heads.js';
import { HiddenFiles } from './hidden.js';
import { IgnoreRules, type IgnoreOptions } from './ignore.js';
import { fileRead, filePart, readFilePart, readSpan } from './parts.js';
import { RecentFiles } from './recent.js';
import { directoryUri, FileUris, realPathOf, ServedTree, type ServedEntry } from './served.js';
import { fileTemplates } from './templates.js';
import { Slice } from './slice.js';
import { isValidKey, walkPage } from './walk.js';
import { RootWatcher, type WatchOptions } from './watch.js';
import { watchTarget } from './watch-target.js';

export const PROVIDER_NAME = 'files';

/** Default read cap: 7 MiB, whose base64 (9.33 MiB) still fits the SDK client's 10 MiB stdio message. */
export const DEFAULT_MAX_READ_BYTES = 7 * 1024 * 1024;

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

export type { DirectoryChild } from './directory.js';

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
  const tree = new ServedTree(root, rules, hidden, options.allowHardlinks === true);
  const { rootUri } = tree;
  const recent = new RecentFiles();
  const watcher = new RootWatcher(root, rules, options.logger ?? silentLogger, {
    ...options.watch,
    includeGitDir: options.includeGitDir,
  });

  const relOf = (path: string): string => tree.relOf(path);
  const heads = new FileHeads(root, { budgetMs: options.headBudgetMs });

  const info = (
    abs: string,
    rel: string,
    stats: Stats,
    name = basename(abs),
    uri = pathToFileURL(abs).href,
  ): ResourceInfo => {
    const mimeType = mimeFromName(name);
    const annotations = { lastModified: new Date(stats.mtimeMs).toISOString() };
    return mimeType === undefined
      ? { uri, name, title: rel, size: stats.size, annotations }
      : { uri, name, title: rel, mimeType, size: stats.size, annotations };
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
      if (part.kind === 'whole' && ctx.readOnce !== true) {
        const again = readRecent(base, ctx);
        if (again !== undefined) return again;
      }
      let opened: ServedEntry;
      try {
        opened = tree.open(base, ctx);
      } catch (error) {
        // Missing, outside or excluded: reported under the URI the client sent.
        throw error instanceof NotFoundError ? new NotFoundError(uri) : error;
      }
      try {
        const { stats } = opened;
        const limits = readLimits(ctx, maxReadBytes);
        if (part.kind !== 'whole')
          return { contents: [await readFilePart(uri, opened, part, limits, ctx)] };
        if (stats.isDirectory()) return readDirectoryListing(tree, opened, ctx, maxReadBytes);
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
        // Nor one the search index reads (once each: a build would only churn the cache).
        if (
          ctx.readOnce !== true &&
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
        watchTarget(tree, uri, ctx);
        return true;
      } catch (error) {
        if (error instanceof NotFoundError) return false;
        throw error;
      }
    },

    async watch(uri, onChange) {
      const target = watchTarget(tree, uri);
      return watcher.watchPath(target.path, target.stats.isDirectory(), onChange, target.stats);
    },

    async readDirectory(uri, after, limit, ctx) {
      return readDirectoryPage(tree, uri, after, limit, ctx);
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
    // One slice for the whole page: the walk, the items and the head reads each give the event
    // loop a turn once it is spent, so no other request waits behind the page (slice.ts).
    const slice = new Slice();
    const page = await walkPage(root, rules, after, limit, scanBudget(limit), {
      skipDirectory,
      under,
      slice,
    });
    const items: ResourceInfo[] = [];
    // Content hints (type, description) for what the caller may read; the search index reads all anyway.
    const described: Described[] | undefined = ctx?.contentIds === true ? undefined : [];
    const uris = new FileUris();
    for (const e of page.entries) {
      if (slice.spent) await slice.next();
      if (!tree.servable(e.real ?? e.abs, e.stats)) continue;
      // A symlink is listed only when the caller may read where it leads (as a read of it would
      // require): its size and date are the target's, which are not the caller's to see otherwise.
      if (
        e.real !== undefined &&
        ctx?.allows !== undefined &&
        !ctx.allows('read', pathToFileURL(e.real).href)
      )
        continue;
      const item = info(e.abs, e.rel, e.stats, e.name, uris.of(e.abs, e.name));
      items.push(item);
      if (described !== undefined && (ctx?.allows === undefined || ctx.allows('read', item.uri)))
        described.push({ item, abs: e.abs, stats: e.stats });
    }
    if (described !== undefined && described.length > 0) await heads.annotate(described, slice);
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
    if (contents === undefined || !tree.served(path, path, false, ctx)) return undefined;
    return { contents: [contents] };
  }

  return provider;
}) satisfies ProviderFactory<FilesOptions>;
