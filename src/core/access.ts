/**
 * Access rules: which principal may do what to which URIs. A rule applies to principals by kind
 * and id (`token:alice`, `oauth:<sub>`; see `principalPattern`) or by scope (or to everyone when it
 * names neither), covers a set of operations (all by default), and carries allow and deny glob
 * patterns over normalised URIs (`file:///srv/docs/**`; see `rule-pattern.ts` for the syntax), both
 * compared in one match form (`match-form.ts`: percent-encoding decoded, Unicode NFC), so a rule
 * written `file:///srv/café/my docs/**` matches the URIs that encode those names. For a given principal, operation and URI:
 * any applicable deny wins; otherwise any applicable allow grants; otherwise the default decides.
 * The local principal (stdio: whoever started the server) is not subject to rules.
 *
 * These rules are applied in one place, `access-control.ts`, for every route to a resource — lists,
 * reads, template reads, templates, completion values, prompt embeddings, tool results,
 * subscriptions, search — judging the resource a URI names (its canonical URI) as well as the
 * spelling asked for (`decide`); a denied resource is answered exactly like a missing one.
 */
import { ConfigError } from './errors.js';
import { matchForm } from './match-form.js';
import type { Principal } from './principal.js';
import { compileRulePattern, couldMatchUnder, type RulePattern } from './rule-pattern.js';
import { definedProps } from './defined.js';

export const OPERATIONS = ['list', 'read', 'subscribe', 'complete', 'prompts', 'tools'] as const;
export type Operation = (typeof OPERATIONS)[number];

/** The principal kinds a rule can name before the colon (the local user is never subject to rules). */
export const RULE_KINDS = ['token', 'oauth'] as const;

export interface AccessRule {
  /**
   * Principals the rule applies to, each naming its kind: `token:<name>` (a static token),
   * `oauth:<subject>` (an OAuth token's `sub`), `token:*` / `oauth:*` (any of that kind),
   * `anonymous` (unauthenticated callers) or `*` (anyone). A bare id is refused: a token name and
   * an OAuth subject may be the same string.
   */
  principals?: string[] | undefined;
  /** The rule applies to a principal holding any of these scopes. */
  scopes?: string[] | undefined;
  /** Operations covered. @default all */
  operations?: Operation[] | undefined;
  /** URI glob patterns granted. */
  allow?: string[] | undefined;
  /** URI glob patterns refused; a deny wins over any allow. */
  deny?: string[] | undefined;
}

export interface AccessOptions {
  rules: AccessRule[];
  /** What applies when no rule matches. @default 'deny' when rules are given */
  default?: 'allow' | 'deny' | undefined;
}

/** What an access judgement of one URI found: an applicable deny, an allow, or neither. */
export type Verdict = 'deny' | 'allow' | 'none';

interface CompiledRule {
  /** `kind:id`, `kind:*`, `anonymous` or `*`. */
  principals: ReadonlySet<string> | undefined;
  scopes: readonly string[] | undefined;
  operations: ReadonlySet<Operation> | undefined;
  allow: RulePattern[];
  deny: RulePattern[];
}

export class AccessPolicy {
  private readonly rules: CompiledRule[];
  private readonly fallback: boolean;

  private readonly options: AccessOptions;

  constructor(options: AccessOptions) {
    this.options = options;
    this.rules = options.rules.map((rule, index) => compileRule(rule, index));
    this.fallback = (options.default ?? 'deny') === 'allow';
  }

  /**
   * The rules that apply to `principal` and the default, for "who am I" views. Each rule names only
   * the caller: of its `principals`, the entries that match the caller (its own `kind:id`,
   * `kind:*`, `anonymous`, `*`), and of its `scopes`, those the caller holds; other principals a
   * shared rule names, and scopes the caller does not hold, are left out.
   */
  rulesFor(principal: Principal): { default: 'allow' | 'deny'; rules: AccessRule[] } {
    const key = principalKey(principal);
    const mine = new Set(['*', key, `${principal.kind}:*`]);
    const rules = this.options.rules
      .filter((_, i) => namesPrincipal(this.rules[i]!, principal))
      .map((rule): AccessRule => {
        const { principals, scopes, ...rest } = structuredClone(rule);
        return {
          ...definedProps({
            principals: principals?.filter((p) => mine.has(p)),
            scopes: scopes?.filter((s) => principal.scopes.includes(s)),
          }),
          ...rest,
        };
      });
    return { default: this.fallback ? 'allow' : 'deny', rules };
  }

  /** Whether `principal` may perform `operation` on the (normalised) `uri`. */
  allows(principal: Principal | undefined, operation: Operation, uri: string): boolean {
    if (principal === undefined || principal.kind === 'local') return true;
    const verdict = this.judge(principal, operation, uri);
    return verdict === 'allow' || (verdict === 'none' && this.fallback);
  }

  /**
   * Whether `principal` may perform `operation` on the resource asked for as `spelling`, which its
   * provider resolved to `canonical` (all normalised): the resource's listed URI, then — when the
   * spelling also selects a version rules may tell apart (a git ref) — that version's own URI. A
   * deny of the spelling or of any of them refuses; otherwise each of them must be allowed. So every
   * spelling of one resource gets the answer the resource gets, unless a rule names a spelling or a
   * version.
   */
  decide(
    principal: Principal | undefined,
    operation: Operation,
    spelling: string,
    canonical: readonly string[],
  ): boolean {
    if (principal === undefined || principal.kind === 'local') return true;
    if (canonical.length === 0) return false;
    if (!canonical.includes(spelling) && this.judge(principal, operation, spelling) === 'deny')
      return false;
    return canonical.every((uri) => this.allows(principal, operation, uri));
  }

  /** Whether any rule denies `operation` on `uri` to `principal` (a spelling judged before its resource is known). */
  denies(principal: Principal | undefined, operation: Operation, uri: string): boolean {
    if (principal === undefined || principal.kind === 'local') return false;
    return this.judge(principal, operation, uri) === 'deny';
  }

  private judge(principal: Principal, operation: Operation, uri: string): Verdict {
    const form = matchForm(uri);
    let verdict: Verdict = 'none';
    for (const rule of this.applicable(principal, operation)) {
      if (rule.deny.some((m) => m.test(form))) return 'deny';
      if (verdict === 'none' && rule.allow.some((m) => m.test(form))) verdict = 'allow';
    }
    return verdict;
  }

  /**
   * Whether `principal` may reach anything under the URI prefix `prefix` (a template's literal
   * part, a directory): used to decide what templates and completion values to show.
   */
  mayReachUnder(principal: Principal | undefined, operation: Operation, uri: string): boolean {
    if (principal === undefined || principal.kind === 'local') return true;
    const prefix = matchForm(uri);
    const rules = this.applicable(principal, operation);
    // A deny ending in `/**` that matches the prefix itself matches everything below it.
    if (rules.some((r) => r.deny.some((m) => m.subtree && m.test(prefix)))) return false;
    if (this.fallback) return true;
    return rules.some((r) =>
      r.allow.some(
        (m) =>
          m.prefix.startsWith(prefix) ||
          (prefix.startsWith(m.prefix) && (m.subtree || m.test(prefix))),
      ),
    );
  }

  /**
   * Whether `principal` may perform `operation` on everything under the URI prefix `uri` (a source's
   * root): no applicable deny could match anything there — judged by the patterns' literal
   * beginnings, so a deny whose beginning lies inside the prefix, or ends before it with a glob
   * after, counts — and an allow covers it all (its literal beginning, a prefix of `uri`, then `**`
   * alone: `db://app/**`, `db://**`), or the default allows. For what can reach every resource of a
   * source whatever it is asked (a query tool).
   */
  mayReachAllUnder(principal: Principal | undefined, operation: Operation, uri: string): boolean {
    if (principal === undefined || principal.kind === 'local') return true;
    const prefix = matchForm(uri);
    const rules = this.applicable(principal, operation);
    if (rules.some((r) => r.deny.some((m) => couldMatchUnder(m, prefix)))) return false;
    return (
      this.fallback ||
      rules.some((r) => r.allow.some((m) => m.wholeSubtree && prefix.startsWith(m.prefix)))
    );
  }

  private applicable(principal: Principal, operation: Operation): CompiledRule[] {
    return this.rules.filter(
      (rule) =>
        (rule.operations === undefined || rule.operations.has(operation)) &&
        namesPrincipal(rule, principal),
    );
  }
}

/** Whether `rule` applies to `principal`: by kind and id, by kind, by scope, or to everyone. */
function namesPrincipal(rule: CompiledRule, principal: Principal): boolean {
  return (
    (rule.principals === undefined && rule.scopes === undefined) ||
    rule.principals?.has('*') === true ||
    rule.principals?.has(principalKey(principal)) === true ||
    rule.principals?.has(`${principal.kind}:*`) === true ||
    rule.scopes?.some((scope) => principal.scopes.includes(scope)) === true
  );
}

/** The forms a `principals` entry takes, as a regular expression (for the JSON schema). */
export const PRINCIPAL_PATTERN = '^(\\*|anonymous|(token|oauth):.+)$';

/** How a rule names `principal`: `anonymous`, or `kind:id`. */
export function principalKey(principal: Principal): string {
  return principal.kind === 'anonymous' ? 'anonymous' : `${principal.kind}:${principal.id}`;
}

/**
 * Why a `principals` entry cannot be used, or undefined when it can: `*`, `anonymous`,
 * `token:<name>`, `oauth:<subject>`, `token:*` or `oauth:*`. Shared by the config validator and the
 * policy's constructor, so a config and a library caller are told the same thing.
 */
export function principalProblem(entry: string): string | undefined {
  if (entry === '*' || entry === 'anonymous') return undefined;
  const colon = entry.indexOf(':');
  const kind = colon < 0 ? undefined : entry.slice(0, colon);
  if (kind !== undefined && (RULE_KINDS as readonly string[]).includes(kind)) {
    return colon === entry.length - 1
      ? `'${entry}' names no ${kind}: write ${kind}:<id>, or ${kind}:* for any`
      : undefined;
  }
  return (
    `'${entry}' does not say which kind of principal it is: write token:${entry} for the static token named ${entry}, ` +
    `oauth:${entry} for the OAuth subject ${entry}, anonymous, or * (a token name and an OAuth subject may be the same string)`
  );
}

function compileRule(rule: AccessRule, index: number): CompiledRule {
  for (const [i, entry] of (rule.principals ?? []).entries()) {
    const problem = principalProblem(entry);
    if (problem !== undefined)
      throw new ConfigError(`access.rules[${index}].principals[${i}]`, problem, { value: entry });
  }
  return {
    principals: rule.principals === undefined ? undefined : new Set(rule.principals),
    scopes: rule.scopes,
    operations: rule.operations === undefined ? undefined : new Set(rule.operations),
    allow: (rule.allow ?? []).map(compileRulePattern),
    deny: (rule.deny ?? []).map(compileRulePattern),
  };
}
