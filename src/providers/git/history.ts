/**
 * The commits of a history view, as `git log` gives them, and — while access rules are in force —
 * only those the caller may see: a commit whose changed paths (against its first parent, as the
 * commit view diffs it) are all withheld is left out entirely, with its message, author and id. A
 * commit that changed no path at all (an empty commit) withholds nothing and is shown.
 *
 * A shown commit's parents name no withheld commit: each is replaced by its own parents.
 *
 * Under rules the walk reads the changed paths of each commit (`--name-only`) in batches, and stops
 * after `scanBudget` commits: a history whose visible commits are that sparse comes back short, with
 * `more: true` (older matching commits may exist), never with an unbounded walk.
 */
import { randomBytes } from 'node:crypto';
import { OutputTooLarge } from './exec.js';
import type { ViewContext } from './context.js';
import { Visibility } from './visible.js';

const LOG_FIELDS = ['%H', '%P', '%an', '%ae', '%aI', '%cn', '%ce', '%cI', '%s'];

/** One commit as a history view shows it. */
export interface LoggedCommit {
  sha: string;
  parents: string[];
  author: { name: string; email: string; date: string };
  committer: { name: string; email: string; date: string };
  subject: string;
}

/** Commits examined per history view under rules, per commit it may return. */
const SCAN_FACTOR = 10;
/** Commits examined per history view under rules, at least. */
const MIN_SCAN = 200;

/**
 * Up to `want` commits reachable from `commit` that touch `path` (all, without one), newest first,
 * the caller may see; `exhausted` when the walk reached the end of the history.
 */
export async function visibleLog(
  view: ViewContext,
  ref: string,
  commit: string,
  path: string | undefined,
  want: number,
): Promise<{ commits: LoggedCommit[]; exhausted: boolean }> {
  if (view.allows === undefined) {
    const commits = await logBatch(view, commit, path, 0, want, false);
    return { commits, exhausted: commits.length < want };
  }
  const budget = Math.max(MIN_SCAN, want * SCAN_FACTOR);
  const shown: LoggedCommit[] = [];
  const hidden = new Map<string, string[]>();
  let ended = false;
  let skip = 0;
  let batch = Math.min(budget, Math.max(want, 50));
  while (shown.length < want && skip < budget) {
    const count = Math.min(batch, budget - skip);
    let commits: LoggedCommit[];
    try {
      commits = await logBatch(view, commit, path, skip, count, true);
    } catch (error) {
      // Commits with many changed paths: fewer at a time; one alone over the bound is too large.
      if (error instanceof OutputTooLarge && batch > 1) {
        batch = Math.max(1, batch >> 1);
        continue;
      }
      throw error;
    }
    for (const entry of commits) {
      if (seen(view, ref, entry)) {
        if (shown.length < want) shown.push(entry);
      } else hidden.set(entry.sha, entry.parents);
    }
    skip += commits.length;
    if (commits.length < count) {
      ended = true;
      break;
    }
  }
  // A shown commit's parent that is withheld is replaced by that commit's own parents (its id is
  // named nowhere), as far as the walk examined the history.
  for (const entry of shown) entry.parents = throughHidden(entry.parents, hidden);
  return { commits: shown, exhausted: ended };
}

/** `parents` with each withheld commit replaced by its parents, recursively (each once). */
export function throughHidden(
  parents: readonly string[],
  hidden: ReadonlyMap<string, readonly string[]>,
): string[] {
  const out: string[] = [];
  const visited = new Set<string>();
  const queue = [...parents];
  while (queue.length > 0) {
    const sha = queue.shift()!;
    if (visited.has(sha)) continue;
    visited.add(sha);
    const above = hidden.get(sha);
    if (above === undefined) out.push(sha);
    else queue.unshift(...above);
  }
  return out;
}

/** Whether the caller may see `entry`: it changed no path, or at least one it may read. */
function seen(view: ViewContext, ref: string, entry: LoggedCommit & { paths?: string[] }): boolean {
  const paths = entry.paths ?? [];
  delete entry.paths;
  if (paths.length === 0) return true;
  const visible = new Visibility(view.root, view.allows, [
    entry.sha,
    entry.parents[0],
    ref,
    view.listedRef,
  ]);
  return paths.some((path) => visible.file(path));
}

/** `git log` from `commit`, `count` commits after skipping `skip`, with their changed paths when `withPaths`. */
async function logBatch(
  view: ViewContext,
  commit: string,
  path: string | undefined,
  skip: number,
  count: number,
  withPaths: boolean,
): Promise<(LoggedCommit & { paths?: string[] })[]> {
  // Each record starts with a marker no path can be mistaken for (a fresh random one per call).
  const marker = withPaths ? `reservoir-${randomBytes(12).toString('hex')}:` : '';
  const args = [
    'log',
    `--format=${marker}${LOG_FIELDS.join('%x00')}`,
    '-z',
    '--no-color',
    '--no-decorate',
    `--max-count=${count}`,
  ];
  if (skip > 0) args.push(`--skip=${skip}`);
  if (withPaths) args.push('--name-only', '--diff-merges=first-parent', '--no-renames');
  args.push(commit, '--');
  if (path !== undefined) args.push(path);
  const out = await view.repo.run(
    args,
    withPaths ? view.maxBytes * 4 + 65_536 : view.maxBytes,
    view.signal,
  );
  const tokens = out.toString('utf8').split('\0');
  const commits: (LoggedCommit & { paths?: string[] })[] = [];
  let current: (LoggedCommit & { paths?: string[] }) | undefined;
  for (let at = 0; at < tokens.length;) {
    const token = tokens[at]!;
    if (withPaths && !token.startsWith(marker)) {
      // A changed path of the current commit (the first one follows a newline).
      const changed = token.startsWith('\n') ? token.slice(1) : token;
      if (current !== undefined && changed !== '') current.paths!.push(changed);
      at += 1;
      continue;
    }
    if (at + LOG_FIELDS.length > tokens.length) break;
    const [sha, parents, an, ae, ad, cn, ce, cd, subject] = tokens.slice(
      at,
      at + LOG_FIELDS.length,
    ) as string[] & { length: 9 };
    const id = sha!.slice(marker.length);
    if (!/^[0-9a-f]{40,64}$/.test(id)) break;
    current = {
      sha: id,
      parents: parents === '' ? [] : parents!.split(' '),
      author: { name: an!, email: ae!, date: ad! },
      committer: { name: cn!, email: ce!, date: cd! },
      subject: subject!,
    };
    if (withPaths) current.paths = [];
    commits.push(current);
    at += LOG_FIELDS.length;
  }
  return commits;
}
