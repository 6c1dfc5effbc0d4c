/**
 * Access rules: which principal may do what to which URIs. A rule applies to principals by id or
 * by scope (or to everyone when it names neither), covers a set of operations (all by default), and
 * carries allow and deny glob patterns over normalised URIs (`file:///srv/docs/**`). For a given
 * principal, operation and URI: any applicable deny wins; otherwise any applicable allow grants;
 * otherwise the default decides. The local principal (stdio: whoever started the server) is not
 * subject to rules.
 *
 * The registry consults this in one place for every route to a resource — lists, reads, template
 * reads, templates, completion values, prompt embeddings, tool results, subscriptions — and a
 * denied resource is answered exactly like a missing one.
 */
import picomatch from 'picomatch';
import type { Principal } from './principal.js';

export const OPERATIONS = ['list', 'read', 'subscribe', 'complete', 'prompts', 'tools'] as const;
export type Operation = (typeof OPERATIONS)[number];

export interface AccessRule {
  /** Principal ids the rule applies to (`*` for any). */
  principals?: string[];
  /** The rule applies to a principal holding any of these scopes. */
  scopes?: string[];
  /** Operations covered. @default all */
  operations?: Operation[];
  /** URI glob patterns granted. */
  allow?: string[];
  /** URI glob patterns refused; a deny wins over any allow. */
  deny?: string[];
}

export interface AccessOptions {
  rules: AccessRule[];
  /** What applies when no rule matches. @default 'deny' when rules are given */
  default?: 'allow' | 'deny';
}

interface CompiledRule {
  principals: ReadonlySet<string> | undefined;
  scopes: readonly string[] | undefined;
  operations: ReadonlySet<Operation> | undefined;
  allow: Matcher[];
  deny: Matcher[];
}

interface Matcher {
  test: (uri: string) => boolean;
  /** The pattern's literal beginning, before its first glob character. */
  prefix: string;
  /** Whether the pattern covers everything below its prefix (ends with `**`). */
  subtree: boolean;
}

export class AccessPolicy {
  private readonly rules: CompiledRule[];
  private readonly fallback: boolean;

  private readonly options: AccessOptions;

  constructor(options: AccessOptions) {
    this.options = options;
    this.rules = options.rules.map(compileRule);
    this.fallback = (options.default ?? 'deny') === 'allow';
  }

  /** The rules that apply to `principal` (as configured) and the default, for "who am I" views. */
  rulesFor(principal: Principal): { default: 'allow' | 'deny'; rules: AccessRule[] } {
    const rules = this.options.rules.filter(
      (rule) =>
        (rule.principals === undefined && rule.scopes === undefined) ||
        rule.principals?.includes('*') === true ||
        rule.principals?.includes(principal.id) === true ||
        rule.scopes?.some((scope) => principal.scopes.includes(scope)) === true,
    );
    return { default: this.fallback ? 'allow' : 'deny', rules: structuredClone(rules) };
  }

  /** Whether `principal` may perform `operation` on the (normalised) `uri`. */
  allows(principal: Principal | undefined, operation: Operation, uri: string): boolean {
    if (principal === undefined || principal.kind === 'local') return true;
    let allowed = false;
    for (const rule of this.applicable(principal, operation)) {
      if (rule.deny.some((m) => m.test(uri))) return false;
      if (!allowed && rule.allow.some((m) => m.test(uri))) allowed = true;
    }
    return allowed || this.fallback;
  }

  /**
   * Whether `principal` may reach anything under the URI prefix `prefix` (a template's literal
   * part, a directory): used to decide what templates and completion values to show.
   */
  mayReachUnder(principal: Principal | undefined, operation: Operation, prefix: string): boolean {
    if (principal === undefined || principal.kind === 'local') return true;
    const rules = this.applicable(principal, operation);
    if (rules.some((r) => r.deny.some((m) => m.subtree && prefix.startsWith(m.prefix)))) return false;
    if (this.fallback) return true;
    return rules.some((r) => r.allow.some((m) => m.prefix.startsWith(prefix) || (prefix.startsWith(m.prefix) && (m.subtree || m.test(prefix)))));
  }

  private applicable(principal: Principal, operation: Operation): CompiledRule[] {
    return this.rules.filter(
      (rule) =>
        (rule.operations === undefined || rule.operations.has(operation)) &&
        ((rule.principals === undefined && rule.scopes === undefined) ||
          rule.principals?.has('*') === true ||
          rule.principals?.has(principal.id) === true ||
          rule.scopes?.some((scope) => principal.scopes.includes(scope)) === true),
    );
  }
}

function compileRule(rule: AccessRule): CompiledRule {
  return {
    principals: rule.principals === undefined ? undefined : new Set(rule.principals),
    scopes: rule.scopes,
    operations: rule.operations === undefined ? undefined : new Set(rule.operations),
    allow: (rule.allow ?? []).map(compilePattern),
    deny: (rule.deny ?? []).map(compilePattern),
  };
}

function compilePattern(pattern: string): Matcher {
  const glob = pattern.search(/[*?[\]{}()!+@]/);
  const prefix = glob < 0 ? pattern : pattern.slice(0, glob);
  return { test: picomatch(pattern, { dot: true }), prefix, subtree: pattern.endsWith('/**') || pattern === '**' };
}
