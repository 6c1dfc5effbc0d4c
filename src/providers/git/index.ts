/**
 * The git provider: one repository as `git://<name>/` resources. Lists the files at the default
 * branch's tip (keyset-paged in git's path order), reads any blob at any branch, tag or commit byte
 * for byte (text or blob by the files provider's rules), serves history and commit views as JSON,
 * completes refs, commit ids and paths, and reports changes when refs move. See
 * docs/providers/git.md for URIs, JSON shapes and the safety rules; address.ts for parsing.
 */
import { basename, resolve as resolvePath } from 'node:path';
import {
  ConfigError,
  InvalidArgumentError,
  NotFoundError,
  TooLargeError,
} from '../../core/errors.js';
import { silentLogger, type Logger } from '../../core/log.js';
import type {
  CallContext,
  Completer,
  Provider,
  ProviderFactory,
  ReadResult,
  ResourceInfo,
  ResourceTemplate,
} from '../../core/types.js';
import { mimeFromName } from '../utils/content.js';
import { readLimits } from '../utils/read-limit.js';
import { providerError } from '../utils/errors.js';
import {
  commitUri,
  encodePath,
  fileUri,
  isValidRef,
  parseGitUri,
  refSegment,
  type GitTarget,
} from './address.js';
import { readGitDirectory } from './directory.js';
import { Visibility } from './visible.js';
import { ObjectTooLarge } from './cat-file.js';
import { gitCompleters } from './complete.js';
import { OutputTooLarge } from './exec.js';
import {
  DEFAULT_COMMAND_TIMEOUT_MS,
  DEFAULT_LOG_LIMIT,
  DEFAULT_MAX_LOG_ENTRIES,
  DEFAULT_MAX_READ_BYTES,
  DEFAULT_POLL_INTERVAL_MS,
  gitSourceOptions,
  type GitSourceOptions,
} from './options.js';
import { readBlob } from './parts.js';
import { BlobHeads, type BlobListed } from './blob-heads.js';
import { LastModified, type Dated } from './last-modified.js';
import { Repository } from './repo.js';
import { partTemplates } from './templates.js';
import { commitShown, commitView, historyView, type ViewContext } from './views.js';
import { isListed, isValidKey, walkTree } from './walk.js';
import { RefWatcher } from './watch.js';
import { definedProps } from '../../core/defined.js';

export const PROVIDER_NAME = 'git';
export { DEFAULT_MAX_READ_BYTES, gitSourceOptions, type GitSourceOptions };

/** Entries a list call may examine beyond the page itself (symlinks, submodules cost a look too). */
const SCAN_BUDGET_FACTOR = 8;
const SCAN_BUDGET_MIN = 10_000;
/** How long a list page waits for its files' content hints and dates, ms (the rest come later). */
const HINT_BUDGET_MS = 50;

export interface GitOptions extends GitSourceOptions {
  /** Where warnings go (a repository going missing, coming back). @default silent */
  logger?: Logger | undefined;
}

/** A git provider: the Provider contract plus introspection for tests and metrics. */
export interface GitProvider extends Provider {
  /** The repository name in URIs. */
  readonly repository: string;
  isValidKey(key: string): boolean;
  templates(): ResourceTemplate[];
  watch(uri: string, onChange: () => void): Promise<() => void>;
  onListChanged(listener: () => void): Promise<() => void>;
  close(): Promise<void>;
  watchStats(): { watches: number; listListeners: number; polling: boolean };
  /** cat-file processes started by the current reader (1 while it stays up). */
  readerStarts(): number;
  /** The running cat-file process's id, if any. */
  readerPid(): number | undefined;
}

export const gitProvider = ((options: GitOptions): GitProvider => {
  const { logger = silentLogger, ...rest } = options;
  const parsed = gitSourceOptions.safeParse(rest);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(issue.path.join('.') || 'git', issue.message);
  }
  const config = parsed.data;
  const dir = resolvePath(config.path);
  const name = config.name ?? defaultName(dir);
  if (config.branch !== undefined && !isValidRef(config.branch)) {
    throw new ConfigError('branch', 'not a valid ref name (see git check-ref-format)', {
      value: config.branch,
    });
  }
  const maxReadBytes = config.maxReadBytes ?? DEFAULT_MAX_READ_BYTES;
  const maxLogEntries = config.maxLogEntries ?? DEFAULT_MAX_LOG_ENTRIES;
  const root = `git://${name}/`;
  const repo = new Repository(dir, { timeoutMs: config.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS });
  const blobHeads = new BlobHeads(repo);
  const lastModified = new LastModified(repo);

  /** The ref whose tip is listed: the configured branch, HEAD's branch, or HEAD when detached. */
  const defaultRef = async (): Promise<string> => {
    if (config.branch !== undefined) return config.branch;
    const head = await repo.headBranch();
    return head === undefined ? 'HEAD' : head.slice('refs/heads/'.length);
  };

  const watcher = new RefWatcher(repo, {
    intervalMs: config.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS,
    logger,
    defaultRef,
  });
  const completers = gitCompleters({
    repo,
    defaultRef,
    shown: async (id, ctx) => {
      const listed = await defaultRef().catch(() => undefined);
      const view: ViewContext = {
        repo,
        root,
        name,
        maxBytes: maxReadBytes,
        signal: ctx.signal,
        allows: ctx.allows,
        listedRef: listed,
      };
      return commitShown(view, id).catch(() => false);
    },
  });

  /** Runs `work`, turning git failures into errors under `uri`; gives up as soon as `signal` aborts. */
  const guard = async <T>(
    uri: string,
    work: () => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> => {
    try {
      signal?.throwIfAborted();
      return await (signal === undefined ? work() : abortable(work(), signal));
    } catch (error) {
      throw translate(uri, error, maxReadBytes);
    }
  };

  /**
   * The commit `ref` names. Under rules, a ref spelled as a commit id that names a commit the
   * caller may not see (every file it changed is withheld) is not found, like an id naming nothing.
   */
  const resolveShown = async (uri: string, ref: string, view: ViewContext): Promise<string> => {
    const resolved = await repo.resolve(ref);
    if (resolved === undefined) throw new NotFoundError(uri);
    if (
      view.allows !== undefined &&
      resolved.fullRef === undefined &&
      !(await commitShown(view, resolved.commit))
    )
      throw new NotFoundError(uri);
    return resolved.commit;
  };

  const readTarget = async (
    uri: string,
    target: GitTarget,
    ctx: CallContext,
  ): Promise<ReadResult> => {
    const view: ViewContext = { repo, root, name, maxBytes: maxReadBytes, signal: ctx.signal };
    if (ctx.allows !== undefined) {
      view.allows = ctx.allows;
      const listed = await defaultRef().catch(() => undefined);
      if (listed !== undefined) view.listedRef = listed;
    }
    switch (target.kind) {
      case 'file': {
        const commit = await resolveShown(uri, target.ref, view);
        const entry = await repo.entryAt(commit, target.path);
        if (entry === undefined || !isListed(entry, target.path)) throw new NotFoundError(uri);
        ctx.signal.throwIfAborted();
        const limits = readLimits(ctx, maxReadBytes);
        const name = basename(target.path);
        const contents = [await readBlob(repo, uri, entry.id, name, target.part, limits, ctx)];
        // A blob id names its bytes: the whole file's version.
        return target.part.kind === 'whole'
          ? { contents, version: `git:${entry.id}` }
          : { contents };
      }
      case 'log': {
        const limit = target.limit ?? Math.min(DEFAULT_LOG_LIMIT, maxLogEntries);
        if (limit > maxLogEntries) {
          throw new InvalidArgumentError(
            'limit',
            `at most ${maxLogEntries} commits per history view`,
            { value: limit, max: maxLogEntries },
          );
        }
        const commit = await resolveShown(uri, target.ref, view);
        // The history of a path is refused, like a read of it, when the caller may not read it.
        if (
          target.path !== undefined &&
          !new Visibility(root, view.allows, [target.ref, commit, view.listedRef]).path(target.path)
        ) {
          throw new NotFoundError(uri);
        }
        return json(uri, await historyView(view, target.ref, commit, target.path, limit));
      }
      case 'commit': {
        const resolved = await repo.resolve(target.sha);
        if (resolved === undefined || resolved.fullRef !== undefined) throw new NotFoundError(uri);
        // A commit whose changed files are all withheld is answered like one that does not exist.
        const shown = await commitView(view, resolved.commit);
        if (shown === undefined) throw new NotFoundError(uri);
        return json(uri, shown);
      }
    }
  };

  const complete =
    (completer: Completer): Completer =>
    (value, context, ctx) =>
      guard(root, async () => completer(value, context, ctx), ctx.signal);

  const templates: ResourceTemplate[] = [
    ...partTemplates(root, name, maxReadBytes, (uri, ctx) => provider.read(uri, ctx), {
      ref: complete(completers.ref),
      path: complete(completers.path),
    }),
    {
      uriTemplate: `${root}{ref}/{+path}`,
      name: `${name}-file`,
      title: `File at a ref in ${name}`,
      description:
        `A file of the ${name} repository at a branch, tag or commit id (percent-encode a ref containing '/', e.g. feature%2Fx). ` +
        'Read byte for byte: UTF-8 text, or a base64 blob; one over the read cap by ?lines= or ?bytes=.',
      read: (uri, _variables, ctx) => provider.read(uri, ctx),
      complete: { ref: complete(completers.ref), path: complete(completers.path) },
    },
    {
      uriTemplate: `${root}log/{ref}/{+path}{?limit}`,
      name: `${name}-history`,
      title: `History of a path in ${name}`,
      description: `Commits reachable from the ref that touch the path (a file or directory), newest first, as JSON; limit defaults to ${DEFAULT_LOG_LIMIT}, at most ${maxLogEntries}.`,
      mimeType: 'application/json',
      read: (uri, _variables, ctx) => provider.read(uri, ctx),
      complete: { ref: complete(completers.ref), path: complete(completers.path) },
    },
    {
      uriTemplate: `${root}log/{ref}{?limit}`,
      name: `${name}-log`,
      title: `History of a ref in ${name}`,
      description: `Commits reachable from the ref, newest first, as JSON; limit defaults to ${DEFAULT_LOG_LIMIT}, at most ${maxLogEntries}.`,
      mimeType: 'application/json',
      read: (uri, _variables, ctx) => provider.read(uri, ctx),
      complete: { ref: complete(completers.ref) },
    },
    {
      uriTemplate: `${root}commits/{sha}`,
      name: `${name}-commit`,
      title: `Commit in ${name}`,
      description: `One commit as JSON: message, author, date, changed files and the diff against its first parent (omitted when over ${maxReadBytes} bytes).`,
      mimeType: 'application/json',
      read: (uri, _variables, ctx) => provider.read(uri, ctx),
      complete: { sha: complete(completers.sha) },
    },
  ];

  const provider: GitProvider = {
    name: PROVIDER_NAME,
    root,
    repository: name,

    async list(after, limit, ctx) {
      try {
        const ref = await defaultRef();
        const resolved = await repo.resolve(ref);
        if (resolved === undefined) return { items: [] }; // an unborn branch: nothing yet
        const tree = (await repo.commit(resolved.commit)).tree;
        const page = await walkTree(
          repo,
          tree,
          after,
          limit,
          Math.max(SCAN_BUDGET_MIN, limit * SCAN_BUDGET_FACTOR),
          ctx.signal,
        );
        const segment = refSegment(ref);
        const sizes = await Promise.all(page.files.map((f) => repo.blobSize(f.entry.id)));
        const items = page.files.map((f, i): ResourceInfo => {
          const fileName = basename(f.path);
          const mimeType = mimeFromName(fileName);
          const item: ResourceInfo = {
            uri: fileUri(root, segment, f.path),
            name: fileName,
            title: f.path,
            ...definedProps({ mimeType }),
            size: sizes[i]!,
          };
          if (ctx.contentIds === true) item.contentId = `git:${f.entry.id}`;
          return item;
        });
        // The search index (contentIds) reads every file itself: it needs no hints.
        if (ctx.contentIds !== true) {
          const described: BlobListed[] = [];
          const dated: Dated[] = [];
          page.files.forEach((f, i) => {
            const item = items[i]!;
            dated.push({ item, path: f.path });
            if (ctx.allows === undefined || ctx.allows('read', item.uri))
              described.push({ item, id: f.entry.id, name: item.name, size: sizes[i]! });
          });
          await Promise.all([
            blobHeads.annotate(described, HINT_BUDGET_MS),
            lastModified.annotate(resolved.commit, dated, HINT_BUDGET_MS),
          ]);
        }
        return page.last === undefined ? { items } : { items, last: page.last };
      } catch (error) {
        // A missing repository is unavailable: the registry's merged list skips it, names it and logs
        // the outage once, and lists it again when it is back (docs/design.md, "One failing source").
        throw translate(root, error, maxReadBytes);
      }
    },

    isValidKey,

    read(uri, ctx) {
      return guard(uri, () => readTarget(uri, parseGitUri(root, uri), ctx), ctx.signal);
    },

    canonical(uri, ctx) {
      // A file at any ref is the file at the listed ref (the resource is its path), and at another
      // ref also that version, which rules name by its ref: both judged. A history view likewise,
      // whatever its ?limit; a commit by its full id. A commit that resolves to nothing names nothing.
      return guard(
        uri,
        async (): Promise<string[]> => {
          const target = parseGitUri(root, uri);
          if (target.kind === 'commit') {
            const resolved = await repo.resolve(target.sha);
            if (resolved === undefined || resolved.fullRef !== undefined)
              throw new NotFoundError(uri);
            return [commitUri(root, resolved.commit)];
          }
          const listed = await defaultRef();
          const at = (segment: string): string =>
            target.kind === 'file'
              ? fileUri(root, segment, target.path)
              : `${root}log/${segment}${target.path === undefined ? '' : `/${encodePath(target.path)}`}`;
          const same = target.ref === listed || target.ref === `refs/heads/${listed}`;
          return same
            ? [at(refSegment(listed))]
            : [at(refSegment(listed)), at(encodeURIComponent(target.ref))];
        },
        ctx.signal,
      );
    },

    async reachable(uri, ctx) {
      // Subscribing to the history of a path is refused, like reading it, when the path is withheld.
      if (ctx.allows === undefined) return true;
      let target: GitTarget;
      try {
        target = parseGitUri(root, uri);
      } catch {
        return false;
      }
      if (target.kind === 'commit') {
        // Subscribing to a commit the caller may not see is refused, like reading it.
        const resolved = await repo.resolve(target.sha).catch(() => undefined);
        if (resolved === undefined || resolved.fullRef !== undefined) return true; // not found later, like any missing commit
        const listed = await defaultRef().catch(() => undefined);
        const view: ViewContext = {
          repo,
          root,
          name,
          maxBytes: maxReadBytes,
          signal: AbortSignal.timeout(10_000),
          allows: ctx.allows,
          listedRef: listed,
        };
        return commitShown(view, resolved.commit).catch(() => false);
      }
      if (target.kind !== 'log' || target.path === undefined) return true;
      const [listed, resolved] = await Promise.all([
        defaultRef().catch(() => undefined),
        repo.resolve(target.ref).catch(() => undefined),
      ]);
      return new Visibility(root, ctx.allows, [target.ref, resolved?.commit, listed]).path(
        target.path,
      );
    },

    templates: () => templates,

    watch(uri, onChange) {
      return guard(uri, async () => {
        const target = parseGitUri(root, uri);
        if (target.kind === 'commit') {
          await readTarget(uri, target, { signal: new AbortController().signal }); // exists, or NotFoundError
          return () => undefined; // a commit never changes
        }
        const resolved = await repo.resolve(target.ref);
        if (resolved === undefined) throw new NotFoundError(uri);
        if (target.kind === 'log')
          return watcher.watch(target.ref, undefined, resolved.commit, undefined, onChange);
        const entry = await repo.entryAt(resolved.commit, target.path);
        if (entry === undefined || !isListed(entry, target.path)) throw new NotFoundError(uri);
        return watcher.watch(target.ref, target.path, resolved.commit, entry.id, onChange);
      });
    },

    readDirectory(uri, after, limit, ctx) {
      return guard(uri, () => readGitDirectory(repo, root, uri, after, limit, ctx), ctx.signal);
    },

    onListChanged(listener) {
      return watcher.onListChanged(listener);
    },

    async onChanges(listener) {
      // The default branch moving (or another branch becoming the default) may change any file:
      // reported as the whole tree, which the index reconciles by content.
      const whole = (): void => listener([{ uri: root, container: true }]);
      const ref = await defaultRef();
      const stopCommits = watcher.watch(
        ref,
        undefined,
        (await repo.resolve(ref))?.commit,
        undefined,
        whole,
      );
      const stopList = await watcher.onListChanged(whole);
      return () => {
        stopCommits();
        stopList();
      };
    },

    async close() {
      lastModified.close();
      watcher.close();
      repo.close();
    },

    watchStats: () => watcher.stats(),
    readerStarts: () => repo.objectReader?.starts ?? 0,
    readerPid: () => repo.objectReader?.pid,
  };
  return provider;
}) satisfies ProviderFactory<GitOptions>;

/** The directory's base name as a URI authority: other characters become '-'. */
function defaultName(dir: string): string {
  const cleaned = basename(dir)
    .replace(/\.git$/, '')
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 63);
  return cleaned === '' ? 'repo' : cleaned;
}

/** `promise`, or the abort reason as soon as `signal` aborts (object reads in flight finish unobserved). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => {
      promise.catch(() => undefined); // its outcome no longer matters to anyone
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

function json(uri: string, value: unknown): ReadResult {
  return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(value) }] };
}

function translate(uri: string, error: unknown, maxReadBytes: number): unknown {
  if (error instanceof ObjectTooLarge) return new TooLargeError(uri, error.info.size, maxReadBytes);
  if (error instanceof OutputTooLarge)
    return new TooLargeError(uri, error.size ?? error.limit + 1, maxReadBytes, 'output');
  return providerError(uri, error); // a GitFailure (git's exit statuses, worded by exec.ts), an errno …
}
