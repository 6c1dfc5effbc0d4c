/**
 * `annotations.audience` and `annotations.priority` on listed resources: hints a host uses to pick
 * context. Three layers, each over the one before:
 * 1. defaults from the name (`names.ts`): READMEs, doc indexes, skills and agent guides high;
 *    vendored, generated, lock and minified files low;
 * 2. what a provider found in the content (a file marked as generated), which it sets itself;
 * 3. the config's `hints` rules: URI globs (the access rules' syntax), applied in order, each
 *    setting the fields it names, so a later rule overrides an earlier one.
 */
import { ConfigError } from './errors.js';
import { nameHint, type Audience } from './hint-names.js';
import { matchForm } from './match-form.js';
import { compileRulePattern, type RulePattern } from './rule-pattern.js';
import type { ResourceInfo } from './types.js';

export type { Audience } from './hint-names.js';
export const AUDIENCES: readonly Audience[] = ['user', 'assistant'];

/**
 * Which listed resources carry the icon of their kind (src/mcp/resource-icons.ts):
 * - `auto`: over HTTP, by URL on the server's own origin (~60 bytes an item); over stdio none — a
 *   stdio server has no origin to name, and an inline picture (~350 bytes an item) would triple a
 *   listing's bytes. The server, tools, prompts and templates carry their icons on both transports.
 * - `always`: as `auto`, and over stdio each resource gets its kind's picture inline as a `data:` URI.
 * - `off`: no resource carries one (a provider's own icons still pass).
 */
export type ResourceIconMode = 'auto' | 'always' | 'off';
export const RESOURCE_ICON_MODES: readonly ResourceIconMode[] = ['auto', 'always', 'off'];

/** One `hints` rule of the config. */
export interface HintRule {
  /** URI glob patterns (`**` / `*` / `?` / `[...]` / `{a,b}`), e.g. `**` + `/CHANGELOG.md`. */
  match: string | string[];
  /** 0 (entirely optional) to 1 (most important). */
  priority?: number | undefined;
  audience?: Audience[] | undefined;
}

export interface HintOptions {
  /** Derive hints from names (README high, lock files low …). @default true */
  defaults?: boolean | undefined;
  rules?: HintRule[] | undefined;
  /** Which listed resources carry the icon of their kind. @default 'auto' */
  resourceIcons?: ResourceIconMode | undefined;
}

interface CompiledRule {
  patterns: RulePattern[];
  priority: number | undefined;
  audience: Audience[] | undefined;
}

/** The hints in force: set at start and replaced whole on a config reload. */
export class ResourceHints {
  private readonly defaults: boolean;
  private readonly rules: CompiledRule[];
  /** Which listed resources carry the icon of their kind. */
  readonly resourceIcons: ResourceIconMode;

  /** Throws ConfigError naming the rule and field of the first problem. */
  constructor(options: HintOptions = {}) {
    this.defaults = options.defaults !== false;
    this.resourceIcons = options.resourceIcons ?? 'auto';
    if (!RESOURCE_ICON_MODES.includes(this.resourceIcons))
      throw new ConfigError(
        'hints.resourceIcons',
        `must be one of ${RESOURCE_ICON_MODES.join(', ')}`,
        { value: this.resourceIcons },
      );
    this.rules = (options.rules ?? []).map((rule, i) => compileRule(rule, `hints.rules[${i}]`));
  }

  /** Whether any hint can be given (else items pass untouched). */
  get active(): boolean {
    return this.defaults || this.rules.length > 0;
  }

  /** The item with its hints: the same object when none apply or change anything. */
  apply(item: ResourceInfo): ResourceInfo {
    let priority = item.annotations?.priority;
    let audience = item.annotations?.audience;
    if (this.defaults && priority === undefined && audience === undefined) {
      const hint = nameHint(item.uri);
      if (hint !== undefined) ({ priority, audience } = hint);
    }
    if (this.rules.length > 0) {
      const form = matchForm(item.uri);
      for (const rule of this.rules) {
        if (!rule.patterns.some((pattern) => pattern.test(form))) continue;
        if (rule.priority !== undefined) priority = rule.priority;
        if (rule.audience !== undefined) audience = rule.audience;
      }
    }
    if (priority === item.annotations?.priority && audience === item.annotations?.audience)
      return item;
    const annotations = { ...item.annotations };
    if (priority !== undefined) annotations.priority = priority;
    if (audience !== undefined) annotations.audience = [...audience];
    return { ...item, annotations };
  }
}

function compileRule(rule: HintRule, at: string): CompiledRule {
  const patterns = typeof rule.match === 'string' ? [rule.match] : rule.match;
  if (patterns.length === 0)
    throw new ConfigError(`${at}.match`, 'expected at least one URI glob pattern');
  const compiled = patterns.map((pattern, i) => {
    const field = typeof rule.match === 'string' ? `${at}.match` : `${at}.match[${i}]`;
    if (typeof pattern !== 'string' || pattern === '')
      throw new ConfigError(field, 'expected a non-empty URI glob pattern', { value: pattern });
    const result = compileRulePattern(pattern);
    if (result.problems.length > 0)
      throw new ConfigError(field, `${pattern}: ${result.problems[0]!}`, { value: pattern });
    return result;
  });
  const { priority, audience } = rule;
  if (priority !== undefined && !(typeof priority === 'number' && priority >= 0 && priority <= 1))
    throw new ConfigError(`${at}.priority`, 'expected a number from 0 to 1', { value: priority });
  if (audience !== undefined) {
    if (!Array.isArray(audience) || audience.length === 0)
      throw new ConfigError(`${at}.audience`, 'expected a non-empty list of user and assistant', {
        value: audience,
      });
    for (const entry of audience)
      if (!AUDIENCES.includes(entry))
        throw new ConfigError(
          `${at}.audience`,
          `expected user or assistant, got ${String(entry)}`,
          {
            value: entry,
          },
        );
  }
  if (priority === undefined && audience === undefined)
    throw new ConfigError(at, 'a rule sets priority, audience or both');
  return {
    patterns: compiled,
    priority,
    audience: audience === undefined ? undefined : [...new Set(audience)],
  };
}
