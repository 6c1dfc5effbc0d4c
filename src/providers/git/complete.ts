/**
 * Completion for the git templates:
 *   - `ref`: branch and tag names starting with the typed value (branches first, each group in name
 *     order), `HEAD`, and — for 4 or more hex digits — the commits whose id starts with them. A
 *     branch or tag named `log` or `commits` is offered by its full name (`refs/heads/log`).
 *   - `sha`: commit ids from 4 or more hex digits.
 *   Under access rules a commit id is offered (for `ref` or `sha`) only when the caller may see the
 *   commit (`shown`): one whose changed files are all withheld is not named.
 *   - `path`: like shell tab completion within the tree at `context.ref` (the default branch when
 *     absent): the segment after the last `/` is completed among that directory's entries;
 *     directories first with a trailing `/`, then files, in name order; dot-names only when the
 *     typed segment starts with `.`. Only what a read would serve is offered.
 * Values are raw (not percent-encoded): a client expanding `{ref}` encodes `feature/x` itself. A
 * value or context that could not name anything (hostile, too long, unknown ref) completes to nothing.
 */
import type { CallContext, Completer, Completion } from '../../core/types.js';
import { HEX_ID, isServablePath, isValidRef, VIEW_SEGMENTS } from './address.js';
import type { Repository } from './repo.js';
import { isListed } from './walk.js';

const MAX_VALUES = 100;
const MAX_VALUE_LENGTH = 4096;
const NOTHING: Completion = { values: [], total: 0, hasMore: false };

export interface CompleteOptions {
  repo: Repository;
  /** The ref listed resources use (the default branch). */
  defaultRef(): Promise<string>;
  /** Whether the caller may see commit `id` (under access rules); every commit when absent. */
  shown?(id: string, ctx: CallContext): Promise<boolean>;
}

export function gitCompleters({ repo, defaultRef, shown }: CompleteOptions): {
  ref: Completer;
  sha: Completer;
  path: Completer;
} {
  const ref: Completer = async (value, _context, ctx) => {
    if (typeof value !== 'string' || value.length > 1024 || /[\s\0]/.test(value)) return NOTHING;
    const out = await repo.run(
      ['for-each-ref', '--format=%(refname)', 'refs/heads', 'refs/tags'],
      16 << 20,
      ctx.signal,
    );
    const names = new Set<string>();
    const heads: string[] = [];
    const tags: string[] = [];
    for (const full of out.toString('utf8').split('\n')) {
      const head = full.startsWith('refs/heads/');
      const tag = full.startsWith('refs/tags/');
      if (!head && !tag) continue;
      const short = full.slice(head ? 11 : 10);
      const offered = VIEW_SEGMENTS.has(short) ? full : short;
      if (!isValidRef(offered) || !offered.startsWith(value) || names.has(offered)) continue;
      names.add(offered);
      (head ? heads : tags).push(offered);
    }
    const values = [...heads.sort(), ...tags.sort()];
    if ('HEAD'.startsWith(value) && !names.has('HEAD')) values.push('HEAD');
    if (HEX_ID.test(value)) {
      for (const id of await commits(value, MAX_VALUES, ctx)) if (!names.has(id)) values.push(id);
    }
    return bounded(values);
  };

  const sha: Completer = async (value, _context, ctx) => {
    if (typeof value !== 'string' || !HEX_ID.test(value)) return NOTHING;
    return bounded(await commits(value, MAX_VALUES + 1, ctx));
  };

  /** Commit ids starting with `prefix` that the caller may see, at most `max`. */
  const commits = async (prefix: string, max: number, ctx: CallContext): Promise<string[]> => {
    const ids = await repo.commitsWithPrefix(prefix, max);
    if (shown === undefined || ctx.allows === undefined) return ids;
    const visible: string[] = [];
    for (const id of ids) if (await shown(id, ctx)) visible.push(id);
    return visible;
  };

  const path: Completer = async (value, context) => {
    if (typeof value !== 'string' || value.length > MAX_VALUE_LENGTH || value.startsWith('/'))
      return NOTHING;
    const refName =
      context['ref'] !== undefined && context['ref'] !== '' ? context['ref'] : await defaultRef();
    if (!isValidRef(refName)) return NOTHING;
    const resolved = await repo.resolve(refName);
    if (resolved === undefined) return NOTHING;
    const slash = value.lastIndexOf('/');
    const typedDir = value.slice(0, slash + 1);
    const segment = value.slice(slash + 1);
    const dir = typedDir === '' ? '' : typedDir.slice(0, -1);
    if (dir !== '' && !isServablePath(dir)) return NOTHING;
    const tree = await repo.treeAt(resolved.commit, dir);
    if (tree === undefined) return NOTHING;
    const hidden = segment.startsWith('.');
    const dirs: string[] = [];
    const files: string[] = [];
    for (const entry of await repo.tree(tree)) {
      if (
        !entry.valid ||
        !entry.name.startsWith(segment) ||
        (!hidden && entry.name.startsWith('.'))
      )
        continue;
      const full = `${typedDir}${entry.name}`;
      if (entry.kind === 'tree' && isServablePath(full)) dirs.push(`${full}/`);
      else if (isListed(entry, full)) files.push(full);
    }
    return bounded([...dirs.sort(), ...files.sort()]);
  };

  return { ref, sha, path };
}

function bounded(values: string[]): Completion {
  return {
    values: values.slice(0, MAX_VALUES),
    total: values.length,
    hasMore: values.length > MAX_VALUES,
  };
}
