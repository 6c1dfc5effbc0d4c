/**
 * What `reservoir check` says about access rules that can match nothing — a pattern for a scheme
 * no source serves, a source that does not exist, a path outside every source's root — and about
 * patterns read other than they may look (a `%` that begins no escape, a `[` that never closes).
 * A config with such a rule is still valid (it may anticipate a source), so these are warnings.
 * Also about a deny that keeps a query tool away: a tool that can read anything under a source's
 * root (`Tool.reads`, `sql_query_<name>`) is offered only to principals that may read all of it.
 */
import { matchForm } from '../core/match-form.js';
import { compileRulePattern, couldMatchUnder } from '../core/rule-pattern.js';
import type { AccessConfig } from './schema.js';

/** Schemes rules name that no source mounts: `tool:NAME` and `prompt:NAME`. */
const NAME_SCHEMES = new Set(['tool', 'prompt']);
const SCHEME = /^([a-z][a-z0-9+.-]*):/;
const GLOB = /[*?[\]{}\\]/;

/** A tool that can read anything under `reads` (a source's root), whatever it is asked. */
export interface Reader {
  name: string;
  reads: string;
}

/**
 * One line per problem, naming the rule's field and pattern and saying why: `roots` are the URI
 * roots the config's sources would mount (undefined when they could not be worked out; then only
 * the patterns themselves are judged); `readers` the tools that read all of a root.
 */
export function accessWarnings(
  access: AccessConfig,
  roots: readonly string[] | undefined,
  readers: readonly Reader[] = [],
): string[] {
  const lines: string[] = [];
  const forms = roots?.map(matchForm);
  access.rules.forEach((rule, index) => {
    for (const list of ['allow', 'deny'] as const) {
      (rule[list] ?? []).forEach((pattern, position) => {
        const where = `access.rules[${index}].${list}[${position}] '${pattern}'`;
        const compiled = compileRulePattern(pattern);
        for (const problem of compiled.problems) lines.push(`${where}: ${problem}`);
        const reason = forms === undefined ? undefined : unreachable(compiled.prefix, forms);
        if (reason !== undefined) lines.push(`${where} can match nothing: ${reason}`);
        if (list === 'deny' && (rule.operations?.includes('read') ?? true))
          for (const reader of readers) {
            // The judgement the running server makes (AccessPolicy.mayReachAllUnder).
            if (couldMatchUnder(compiled, matchForm(reader.reads)))
              lines.push(
                `${where} also keeps the tool ${reader.name} from the principals this rule applies to: the tool can read anything under ${reader.reads}, so only a principal that may read all of it is offered the tool (docs/auth.md, Query tools)`,
              );
          }
      });
    }
  });
  return lines;
}

/** Why no URI under `roots` (match forms) can begin with the literal `prefix`, or undefined when some can. */
function unreachable(prefix: string, roots: readonly string[]): string | undefined {
  if (prefix === '') return undefined;
  const scheme = SCHEME.exec(prefix)?.[1];
  if (scheme === undefined) {
    return /^[a-z][a-z0-9+.-]*$/i.test(prefix)
      ? undefined
      : 'every URI begins with a scheme (file:///…, git://…); start the pattern with one, or with ** to match any';
  }
  if (NAME_SCHEMES.has(scheme)) return undefined;
  const served = roots.filter((root) => root.startsWith(`${scheme}:`));
  if (served.length === 0) {
    const schemes = [
      ...new Set(roots.map((root) => SCHEME.exec(root)?.[1]).filter((s) => s !== undefined)),
    ];
    return `no source serves ${scheme}: URIs (served: ${schemes.length === 0 ? 'none' : schemes.map((s) => `${s}:`).join(', ')})`;
  }
  if (served.some((root) => root.startsWith(prefix) || prefix.startsWith(root))) return undefined;
  const host = hostOf(prefix);
  const hosts = served.map(hostOf);
  if (
    host !== undefined &&
    host !== '' &&
    hosts.some((h) => h !== undefined && h !== '') &&
    !hosts.includes(host)
  ) {
    const near = hosts.find((h) => h !== undefined && h.toLowerCase() === host.toLowerCase());
    if (near !== undefined)
      return `no source is named '${host}'; ${scheme}: source names are case-sensitive, did you mean '${near}'?`;
    return `no ${scheme}: source is named '${host}' (sources: ${hosts.map((h) => `'${h}'`).join(', ')})`;
  }
  return `its literal beginning ${prefix} lies outside every ${scheme}: source root (${served.join(', ')})`;
}

/** The authority of `scheme://authority/…` when it is written out in full, '' for `file:///`, undefined otherwise. */
function hostOf(uri: string): string | undefined {
  const match = /^[a-z][a-z0-9+.-]*:\/\/([^/]*)\//.exec(uri);
  if (match === null || GLOB.test(match[1]!)) return undefined;
  return match[1];
}
