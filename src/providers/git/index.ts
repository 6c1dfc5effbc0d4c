/**
 * The git provider: one repository as `git://<name>/` resources. Lists the files at the default
 * branch's tip (keyset-paged in git's path order), reads any blob at any branch, tag or commit byte
 * for byte (text or blob by the files provider's rules), serves history and commit views as JSON,
 * completes refs, commit ids and paths, and reports changes when refs move. See
 * docs/providers/git.md for URIs, JSON shapes and the safety rules; address.ts for parsing.
 */
import { NotFoundError } from '../../core/errors.js';
import { silentLogger, type Logger } from '../../core/log.js';
import type { Completer, Provider, ProviderFactory, ResourceTemplate } from '../../core/types.js';
import {
  commitUri,
  encodePath,
  fileUri,
  parseGitUri,
  refSegment,
  type GitTarget,
} from './address.js';
import { gitCompleters } from './complete.js';
import { viewOf, type GitSource } from './context.js';
import { readGitDirectory } from './directory.js';
import { guarded, translate } from './guard.js';
import { GitListing } from './list.js';
import { DEFAULT_MAX_READ_BYTES, gitSourceOptions, type GitSourceOptions } from './options.js';
import { readGitTarget } from './read.js';
import { Repository } from './repo.js';
import { gitSettings } from './settings.js';
import { gitTemplates } from './templates.js';
import { commitShown } from './views.js';
import { Visibility } from './visible.js';
import { isListed, isValidKey } from './walk.js';
import { RefWatcher } from './watch.js';

export const PROVIDER_NAME = 'git';
export { DEFAULT_MAX_READ_BYTES, gitSourceOptions, type GitSourceOptions };

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
  const settings = gitSettings(rest);
  const { name, maxReadBytes } = settings;
  const root = `git://${name}/`;
  const repo = new Repository(settings.dir, { timeoutMs: settings.timeoutMs });

  /** The ref whose tip is listed: the configured branch, HEAD's branch, or HEAD when detached. */
  const defaultRef = async (): Promise<string> => {
    if (settings.branch !== undefined) return settings.branch;
    const head = await repo.headBranch();
    return head === undefined ? 'HEAD' : head.slice('refs/heads/'.length);
  };
  const source: GitSource = {
    repo,
    root,
    name,
    maxReadBytes,
    maxLogEntries: settings.maxLogEntries,
    defaultRef,
  };
  const listing = new GitListing(source);
  const watcher = new RefWatcher(repo, {
    intervalMs: settings.pollIntervalMs,
    logger,
    defaultRef,
  });

  /** Runs `work`, turning git failures into errors under `uri`; gives up as soon as `signal` aborts. */
  const guard = <T>(uri: string, work: () => Promise<T>, signal?: AbortSignal): Promise<T> =>
    guarded(uri, maxReadBytes, work, signal);

  const completers = gitCompleters({
    repo,
    defaultRef,
    shown: async (id, ctx) =>
      commitShown(await viewOf(source, ctx.signal, ctx.allows), id).catch(() => false),
  });
  const complete =
    (completer: Completer): Completer =>
    (value, context, ctx) =>
      guard(root, async () => completer(value, context, ctx), ctx.signal);
  const templates = gitTemplates(source, (uri, ctx) => provider.read(uri, ctx), {
    ref: complete(completers.ref),
    path: complete(completers.path),
    sha: complete(completers.sha),
  });

  const provider: GitProvider = {
    name: PROVIDER_NAME,
    root,
    repository: name,

    async list(after, limit, ctx) {
      try {
        return await listing.page(after, limit, ctx);
      } catch (error) {
        // A missing repository is unavailable: the registry's merged list skips it, names it and logs
        // the outage once, and lists it again when it is back (docs/design.md, "One failing source").
        throw translate(root, error, maxReadBytes);
      }
    },

    isValidKey,

    read(uri, ctx) {
      return guard(uri, () => readGitTarget(source, uri, parseGitUri(root, uri), ctx), ctx.signal);
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
        const view = await viewOf(source, AbortSignal.timeout(10_000), ctx.allows);
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
          await readGitTarget(source, uri, target, { signal: new AbortController().signal }); // exists, or NotFoundError
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
      listing.close();
      watcher.close();
      repo.close();
    },

    watchStats: () => watcher.stats(),
    readerStarts: () => repo.objectReader?.starts ?? 0,
    readerPid: () => repo.objectReader?.pid,
  };
  return provider;
}) satisfies ProviderFactory<GitOptions>;
