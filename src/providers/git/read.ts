/**
 * Reads of a parsed git URI (address.ts): a file at a ref (whole or a part, parts.ts), the history
 * of a ref or a path, and one commit, the last two as JSON views (views.ts). Under access rules a
 * commit or a history the caller may not see is answered as not found, like one that does not
 * exist.
 */
import { basename } from 'node:path';
import { InvalidArgumentError, NotFoundError } from '../../core/errors.js';
import type { CallContext, ReadResult } from '../../core/types.js';
import { readLimits } from '../utils/read-limit.js';
import type { GitTarget } from './address.js';
import { viewOf, type GitSource } from './context.js';
import { DEFAULT_LOG_LIMIT } from './options.js';
import { readBlob } from './parts.js';
import { commitShown, commitView, historyView, type ViewContext } from './views.js';
import { Visibility } from './visible.js';
import { isListed } from './walk.js';

export async function readGitTarget(
  source: GitSource,
  uri: string,
  target: GitTarget,
  ctx: CallContext,
): Promise<ReadResult> {
  const { repo, root, maxReadBytes, maxLogEntries } = source;
  const view = await viewOf(source, ctx.signal, ctx.allows);
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
      return target.part.kind === 'whole' ? { contents, version: `git:${entry.id}` } : { contents };
    }
    case 'log': {
      const limit = target.limit ?? Math.min(DEFAULT_LOG_LIMIT, maxLogEntries);
      if (limit > maxLogEntries) {
        throw new InvalidArgumentError(
          'limit',
          `at most ${maxLogEntries} commits per history view`,
          {
            value: limit,
            max: maxLogEntries,
          },
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
}

/**
 * The commit `ref` names. Under rules, a ref spelled as a commit id that names a commit the
 * caller may not see (every file it changed is withheld) is not found, like an id naming nothing.
 */
async function resolveShown(uri: string, ref: string, view: ViewContext): Promise<string> {
  const resolved = await view.repo.resolve(ref);
  if (resolved === undefined) throw new NotFoundError(uri);
  if (
    view.allows !== undefined &&
    resolved.fullRef === undefined &&
    !(await commitShown(view, resolved.commit))
  )
    throw new NotFoundError(uri);
  return resolved.commit;
}

function json(uri: string, value: unknown): ReadResult {
  return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(value) }] };
}
