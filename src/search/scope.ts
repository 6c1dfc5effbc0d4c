/**
 * What of the index a caller may see, as SQL over the `docs` table (alias `d`), derived from the
 * access rules that apply to the caller before any query runs — so denied documents are left out
 * before matching, ranking and counting, and a search's answer, time and errors do not depend on
 * what they hold.
 *
 * The rules' allow patterns become URI ranges by their literal beginnings (the part before the first
 * glob character: every URI a pattern matches starts with it, so the ranges hold every document the
 * caller may read, and perhaps some it may not), and deny patterns of whole subtrees (`PREFIX/**`)
 * cut ranges out (every URI in them is refused, a deny winning over any allow). What the ranges let
 * through is still judged one by one by access control (`AccessControl.findable`) before it is
 * shown or counted: the ranges only narrow, never decide. A caller no rule restricts anywhere (the local
 * user, no rules, or an allow of whole subtrees over every indexed source and no deny) sees all.
 *
 * The ranges depend on the rules and the indexed sources only, never on the index's contents.
 */
import type { AccessRule } from '../core/access.js';
import { parseUri } from '../core/uri.js';

/** Characters that start a glob in a pattern (a backslash escape included, to be safe). */
const GLOB = /[*?[\]{}()!+@\\]/;
/** The top of a URI range: every URI starting with a prefix sorts below prefix + this. */
const TOP = '\u{10FFFF}';

export type Scope =
  /** Every indexed document is visible. */
  | { kind: 'all' }
  /** Documents in one of `allow` and none of `deny` (URI prefixes) may be visible. */
  | { kind: 'ranges'; allow: string[]; deny: string[] };

export interface RulesInForce {
  default: 'allow' | 'deny';
  rules: AccessRule[];
}

/**
 * The scope of a caller to whom `access` applies (undefined: no rules in force, or the local user)
 * for reads, over the indexed sources rooted at `roots`.
 */
export function scopeOf(access: RulesInForce | undefined, roots: readonly string[]): Scope {
  if (access === undefined) return { kind: 'all' };
  const rules = access.rules.filter(
    (rule) => rule.operations === undefined || rule.operations.includes('read'),
  );
  const allowPatterns = rules.flatMap((rule) => rule.allow ?? []);
  const denyPatterns = rules.flatMap((rule) => rule.deny ?? []);
  const allow =
    access.default === 'allow'
      ? ['']
      : unique(allowPatterns.flatMap((p) => allowRanges(literalPrefix(p))));
  const deny = unique(
    denyPatterns
      .map(subtreePrefix)
      .filter((p): p is string => p !== undefined)
      .flatMap(denyRanges),
  );
  if (denyPatterns.length === 0) {
    const whole =
      access.default === 'allow'
        ? ['']
        : allowPatterns.map(subtreePrefix).filter((p): p is string => p !== undefined);
    if (roots.every((root) => whole.some((prefix) => root.startsWith(prefix))))
      return { kind: 'all' };
  }
  return { kind: 'ranges', allow: narrowest(allow), deny: narrowest(deny) };
}

/** The scope as `AND (…)` SQL over `docs d`, with its parameters (empty for `all`). */
export function scopeSql(scope: Scope): { sql: string; params: string[] } {
  if (scope.kind === 'all') return { sql: '', params: [] };
  if (scope.allow.length === 0) return { sql: 'AND 1 = 0', params: [] };
  const range = '(d.uri >= ? AND d.uri < ?)';
  const params = scope.allow.flatMap((p) => [p, p + TOP]);
  let sql = `AND (${scope.allow.map(() => range).join(' OR ')})`;
  if (scope.deny.length > 0) {
    sql += ` AND NOT (${scope.deny.map(() => range).join(' OR ')})`;
    params.push(...scope.deny.flatMap((p) => [p, p + TOP]));
  }
  return { sql, params };
}

/** The literal beginning of a glob pattern: every URI it matches starts with it. */
function literalPrefix(pattern: string): string {
  const glob = pattern.search(GLOB);
  return glob < 0 ? pattern : pattern.slice(0, glob);
}

/** For `PREFIX**` with a literal PREFIX ending in `/` (or empty): PREFIX, everything under which the pattern matches. */
function subtreePrefix(pattern: string): string | undefined {
  if (!pattern.endsWith('**')) return undefined;
  const prefix = pattern.slice(0, -2);
  if (GLOB.test(prefix) || !(prefix === '' || prefix.endsWith('/'))) return undefined;
  return prefix;
}

/**
 * Ranges narrow the search before matching; the per-hit access check (`AccessControl.findable`) is what
 * decides. So an allow range may be wider than its pattern, never narrower, and a deny range never
 * wider. A prefix of plain characters (letters, digits, `-._~/:`) is spelled the same in every
 * provider's URIs, so it is kept as written and as the registry normalises it (`HTTP://Host/` →
 * `http://host/`; a normalisation that only adds to the end, `git://repo` → `git://repo/`, is not a
 * prefix of all the written one covers, and is dropped). A prefix with any other character (`é` in
 * NFC or NFD, a space, `#`, `%`, `+`) may be spelled in the index in ways no list could hold (each
 * provider encodes differently; a name on disk may be NFD): an allow is cut back to the last `/`
 * before that character, and a deny does not narrow at all.
 */
const PLAIN = /[^A-Za-z0-9\-._~/:]/;

function normalised(prefix: string): string[] {
  try {
    const href = parseUri(prefix).href;
    return href.startsWith(prefix) ? [prefix] : [prefix, href];
  } catch {
    return [prefix]; // not a URI on its own (a partial one): the written spelling stands
  }
}

function allowRanges(prefix: string): string[] {
  const unsafe = prefix.search(PLAIN);
  if (unsafe < 0) return normalised(prefix);
  const cut = prefix.slice(0, prefix.lastIndexOf('/', unsafe) + 1);
  return cut === '' ? [''] : normalised(cut);
}

function denyRanges(prefix: string): string[] {
  return prefix.search(PLAIN) < 0 ? normalised(prefix) : [];
}

/** The prefixes not covered by a shorter one among them (fewer, disjoint-looking ranges). */
function narrowest(prefixes: string[]): string[] {
  const sorted = [...prefixes].sort((a, b) => a.length - b.length);
  const kept: string[] = [];
  for (const prefix of sorted) if (!kept.some((k) => prefix.startsWith(k))) kept.push(prefix);
  return kept.sort();
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
