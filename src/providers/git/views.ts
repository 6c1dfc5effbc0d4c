/**
 * The two JSON views (`application/json`):
 *
 * History — `git://<repo>/log/<ref>[/<path>][?limit=N]`: the commits reachable from the ref that
 * touch the path (or all of them, without a path), newest first, at most `limit` (default 20,
 * refused above `maxLogEntries`):
 *
 *   { "repository", "ref", "commit": "<id the ref resolved to>", "path": "<path>" | null,
 *     "limit", "more": <whether older matching commits exist>,
 *     "commits": [{ "sha", "uri", "parents", "author": { "name", "email", "date" },
 *                   "committer": { … }, "subject" }] }
 *
 * Commit — `git://<repo>/commits/<sha>`: one commit and its changes against its first parent (the
 * empty tree for a root commit; a merge is diffed against its first parent):
 *
 *   { "repository", "sha", "uri", "tree", "parents", "author", "committer", "message",
 *     "files": [{ "path", "status": "A"|"M"|"D"|"T", "additions": n | null, "deletions": n | null }],
 *     "diff": "<unified diff>" | null, "diffOmitted"?: { "reason": "too_large", "limit": <bytes> } }
 *
 * Under access rules (`ctx.allows`), a view names and shows only files the caller may read
 * (`visible.ts`): the commit view leaves a withheld file out of `files` and out of `diff` (the patch
 * is made without it, so neither its name nor its content appears), without a marker; the history of a
 * path the caller may not read is not found, like a read of that path. A commit whose changed files
 * are all withheld is not shown at all: a history leaves it out (its id, author and subject with
 * it; see history.ts) and its commit view is not found, exactly like a commit that does not exist.
 * A commit that changed both kinds shows its message as written: the message belongs to a commit
 * the caller may see, and withholding it would itself mark the commits that touched a withheld
 * file (so a repository whose messages describe secret files keeps those changes in commits of
 * their own). A commit that changed nothing (an empty commit) withholds nothing.
 *
 * Dates are ISO 8601 in the recorded offset. `additions`/`deletions` are null for binary files.
 * The patch is included when the whole answer fits the read cap; otherwise `diff` is null and
 * `diffOmitted` says why (never a silently cut patch). A history or file list over the cap is
 * TooLargeError. Diffs run with `--no-ext-diff --no-textconv`, no renames, no colour.
 */
import { commitUri } from './address.js';
import { OutputTooLarge } from './exec.js';
import { throughHidden, visibleLog } from './history.js';
import { Visibility } from './visible.js';
import type { ViewContext } from './context.js';

export type { ViewContext } from './context.js';

export async function historyView(
  view: ViewContext,
  ref: string,
  commit: string,
  path: string | undefined,
  limit: number,
): Promise<Record<string, unknown>> {
  const { commits, exhausted } = await visibleLog(view, ref, commit, path, limit + 1);
  // More: a commit past the limit was found, or the walk stopped before the history's end.
  const more = commits.length > limit || !exhausted;
  const shown = commits.slice(0, limit).map((entry) => ({
    sha: entry.sha,
    uri: commitUri(view.root, entry.sha),
    parents: entry.parents,
    author: entry.author,
    committer: entry.committer,
    subject: entry.subject,
  }));
  // Under rules a ref whose tip the caller may not see reports the newest commit below it it may.
  const tip =
    view.allows === undefined ? commit : ((await shownParents(view, [commit]))[0] ?? null);
  return {
    repository: view.name,
    ref,
    commit: tip,
    path: path ?? null,
    limit,
    more,
    commits: shown,
  };
}

const DIFF_TREE = [
  'diff-tree',
  '-r',
  '--no-commit-id',
  '--no-renames',
  '--no-ext-diff',
  '--no-textconv',
  '--no-color',
];

/** A commit's changed files and those of them the caller may see (all of them without rules). */
async function changesOf(
  view: ViewContext,
  commit: { id: string; parents: readonly string[] },
): Promise<{ changes: Change[]; files: Change[] }> {
  const range =
    commit.parents.length === 0 ? ['--root', commit.id] : [commit.parents[0]!, commit.id];
  // A changed file is judged at the commit and at its first parent (the two sides of its diff).
  const visible = new Visibility(view.root, view.allows, [
    commit.id,
    commit.parents[0],
    view.listedRef,
  ]);
  // The raw records carry two object ids a file: allow for them, then bound the JSON itself.
  const summary = await view.repo.run(
    [...DIFF_TREE, '-z', '--raw', '--numstat', ...range, '--'],
    view.maxBytes * 4 + 65_536,
    view.signal,
  );
  const changes = parseChanges(summary);
  return {
    changes,
    files: visible.restricted ? changes.filter((change) => visible.file(change.path)) : changes,
  };
}

/** Whether the caller may see commit `sha` at all: under rules, not when every file it changed is withheld. */
export async function commitShown(view: ViewContext, sha: string): Promise<boolean> {
  if (view.allows === undefined) return true;
  const { changes, files } = await changesOf(view, await view.repo.commit(sha));
  return changes.length === 0 || files.length > 0;
}

/** The commit view, or undefined when the caller may not see the commit (answered as not found). */
export async function commitView(
  view: ViewContext,
  sha: string,
): Promise<Record<string, unknown> | undefined> {
  const commit = await view.repo.commit(sha);
  const range =
    commit.parents.length === 0 ? ['--root', commit.id] : [commit.parents[0]!, commit.id];
  const common = DIFF_TREE;
  const { changes, files } = await changesOf(view, commit);
  if (changes.length > 0 && files.length === 0) return undefined;
  // Withheld files are left out of the patch by pathspec, so git never writes their lines.
  const withheld = changes
    .filter((change) => !files.includes(change))
    .map((change) => `:(top,literal,exclude)${change.path}`);
  const result: Record<string, unknown> = {
    repository: view.name,
    sha: commit.id,
    uri: commitUri(view.root, commit.id),
    tree: commit.tree,
    parents: view.allows === undefined ? commit.parents : await shownParents(view, commit.parents),
    author: commit.author,
    committer: commit.committer,
    message: commit.message,
    files,
    diff: null,
  };
  const size = Buffer.byteLength(JSON.stringify(result));
  if (size > view.maxBytes) throw new OutputTooLarge(view.maxBytes, size);
  const room = view.maxBytes - size;
  try {
    const patch = await view.repo.run(
      [...common, '-p', '--src-prefix=a/', '--dst-prefix=b/', ...range, '--', ...withheld],
      room,
      view.signal,
      undefined,
      withheld.length > 0,
    );
    const text = patch.toString('utf8');
    if (Buffer.byteLength(JSON.stringify(text)) <= room) result['diff'] = text;
    else result['diffOmitted'] = { reason: 'too_large', limit: view.maxBytes };
  } catch (error) {
    if (!(error instanceof OutputTooLarge)) throw error;
    result['diffOmitted'] = { reason: 'too_large', limit: view.maxBytes };
  }
  return result;
}

/** Withheld commits a commit view looks through for a parent the caller may see. */
const MAX_HIDDEN_PARENTS = 64;

/**
 * `parents` with each commit the caller may not see replaced by its own parents (the history view
 * does the same), looking through at most MAX_HIDDEN_PARENTS withheld commits; past that, the
 * parent is left out rather than named.
 */
async function shownParents(view: ViewContext, parents: readonly string[]): Promise<string[]> {
  const hidden = new Map<string, string[]>();
  const judged = new Set<string>();
  const unjudged = new Set<string>();
  const queue = [...parents];
  while (queue.length > 0) {
    const sha = queue.shift()!;
    if (judged.has(sha)) continue;
    if (judged.size >= MAX_HIDDEN_PARENTS) {
      unjudged.add(sha);
      continue;
    }
    judged.add(sha);
    if (await commitShown(view, sha)) continue;
    const above = (await view.repo.commit(sha)).parents;
    hidden.set(sha, [...above]);
    queue.push(...above);
  }
  return throughHidden(parents, hidden).filter((sha) => !unjudged.has(sha));
}

interface Change {
  path: string;
  status: string;
  additions: number | null;
  deletions: number | null;
}

/** Parses `diff-tree -z --raw --numstat`: raw records (`:meta\0path\0`), then numstat (`a\td\tpath\0`). */
function parseChanges(out: Buffer): Change[] {
  const tokens = out.toString('utf8').split('\0');
  const byPath = new Map<string, Change>();
  const changes: Change[] = [];
  for (let i = 0; i < tokens.length; i += 1) {
    const token = tokens[i]!;
    if (token.startsWith(':')) {
      const path = tokens[i + 1] ?? '';
      i += 1;
      const status = token.split(' ').pop() ?? '';
      const change: Change = { path, status: status.slice(0, 1), additions: null, deletions: null };
      byPath.set(path, change);
      changes.push(change);
      continue;
    }
    const match = /^(\d+|-)\t(\d+|-)\t([\s\S]*)$/.exec(token);
    if (match === null) continue;
    const change = byPath.get(match[3]!);
    if (change === undefined) continue;
    change.additions = match[1] === '-' ? null : Number(match[1]);
    change.deletions = match[2] === '-' ? null : Number(match[2]);
  }
  return changes;
}
