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
 * path the caller may not read is not found, like a read of that path.
 *
 * Dates are ISO 8601 in the recorded offset. `additions`/`deletions` are null for binary files.
 * The patch is included when the whole answer fits the read cap; otherwise `diff` is null and
 * `diffOmitted` says why (never a silently cut patch). A history or file list over the cap is
 * TooLargeError. Diffs run with `--no-ext-diff --no-textconv`, no renames, no colour.
 */
import type { Repository } from './repo.js';
import { commitUri } from './address.js';
import { OutputTooLarge } from './exec.js';
import { Visibility, type Allows } from './visible.js';

export interface ViewContext {
  repo: Repository;
  root: string;
  name: string;
  maxBytes: number;
  signal: AbortSignal;
  /** Set while access rules apply: may the caller read this URI? */
  allows?: Allows;
  /** The branch the listing shows (its spelling is one more a rule may be written against). */
  listedRef?: string;
}

const LOG_FIELDS = ['%H', '%P', '%an', '%ae', '%aI', '%cn', '%ce', '%cI', '%s'];

export async function historyView(
  view: ViewContext,
  ref: string,
  commit: string,
  path: string | undefined,
  limit: number,
): Promise<Record<string, unknown>> {
  const args = ['log', `--format=${LOG_FIELDS.join('%x00')}`, '-z', '--no-color', '--no-decorate', `--max-count=${limit + 1}`, commit, '--'];
  if (path !== undefined) args.push(path);
  const out = await view.repo.run(args, view.maxBytes, view.signal);
  const fields = out.toString('utf8').split('\0');
  const commits: Record<string, unknown>[] = [];
  for (let at = 0; at + LOG_FIELDS.length <= fields.length; at += LOG_FIELDS.length) {
    const [sha, parents, an, ae, ad, cn, ce, cd, subject] = fields.slice(at, at + LOG_FIELDS.length) as string[] & { length: 9 };
    if (!/^[0-9a-f]{40,64}$/.test(sha ?? '')) break;
    commits.push({
      sha,
      uri: commitUri(view.root, sha!),
      parents: parents === '' ? [] : parents!.split(' '),
      author: { name: an, email: ae, date: ad },
      committer: { name: cn, email: ce, date: cd },
      subject,
    });
  }
  const more = commits.length > limit;
  return { repository: view.name, ref, commit, path: path ?? null, limit, more, commits: commits.slice(0, limit) };
}

export async function commitView(view: ViewContext, sha: string): Promise<Record<string, unknown>> {
  const commit = await view.repo.commit(sha);
  const range = commit.parents.length === 0 ? ['--root', commit.id] : [commit.parents[0]!, commit.id];
  // A changed file is judged at the commit and at its first parent (the two sides of its diff).
  const visible = new Visibility(view.root, view.allows, [commit.id, commit.parents[0], view.listedRef]);
  const common = ['diff-tree', '-r', '--no-commit-id', '--no-renames', '--no-ext-diff', '--no-textconv', '--no-color'];
  // The raw records carry two object ids a file: allow for them, then bound the JSON itself.
  const summary = await view.repo.run([...common, '-z', '--raw', '--numstat', ...range, '--'], view.maxBytes * 4 + 65_536, view.signal);
  const changes = parseChanges(summary);
  const files = visible.restricted ? changes.filter((change) => visible.file(change.path)) : changes;
  // Withheld files are left out of the patch by pathspec, so git never writes their lines.
  const withheld = changes.filter((change) => !files.includes(change)).map((change) => `:(top,literal,exclude)${change.path}`);
  const result: Record<string, unknown> = {
    repository: view.name,
    sha: commit.id,
    uri: commitUri(view.root, commit.id),
    tree: commit.tree,
    parents: commit.parents,
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
    const patch = await view.repo.run([...common, '-p', '--src-prefix=a/', '--dst-prefix=b/', ...range, '--', ...withheld], room, view.signal, undefined, withheld.length > 0);
    const text = patch.toString('utf8');
    if (Buffer.byteLength(JSON.stringify(text)) <= room) result['diff'] = text;
    else result['diffOmitted'] = { reason: 'too_large', limit: view.maxBytes };
  } catch (error) {
    if (!(error instanceof OutputTooLarge)) throw error;
    result['diffOmitted'] = { reason: 'too_large', limit: view.maxBytes };
  }
  return result;
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
