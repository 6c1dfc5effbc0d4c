/**
 * Resource templates as the registry uses them: matching a read's URI against a provider's
 * templates (through a host-supplied engine, compiled once per template), and completing a
 * template's arguments with the answer kept within the protocol's bounds and the values the caller
 * may see (judged by access control: `AccessControl.completionJudge`).
 */
import type { CompletionJudge } from './access-control.js';
import { ownMember } from './defined.js';
import type {
  CallContext,
  Completion,
  Provider,
  ResourceTemplate,
  TemplateVariables,
} from './types.js';
import { parseUri } from './uri.js';

/** An RFC 6570 template compiled for matching; supplied by the host (the server uses the SDK's). */
export interface CompiledTemplate {
  /** Variables extracted from `uri`, or null when it does not match. Must run in linear time. */
  match(uri: string): TemplateVariables | null;
  /** The URI the template names for these variables (used to vet completion values). */
  expand?(variables: TemplateVariables): string;
}

export interface TemplateEngine {
  compile(template: string): CompiledTemplate;
}

/** Completion answers carry at most this many values (the protocol's limit). */
export const MAX_COMPLETION_VALUES = 100;

export class Templates {
  private readonly compiled = new Map<string, CompiledTemplate>();

  constructor(private readonly engine: TemplateEngine | undefined) {}

  /** The first template of `provider` with a reader that matches `href`. */
  match(
    provider: Provider,
    href: string,
  ): { template: ResourceTemplate; variables: TemplateVariables } | undefined {
    if (this.engine === undefined || provider.templates === undefined) return undefined;
    for (const template of provider.templates()) {
      if (template.read === undefined) continue;
      const variables = this.compile(template.uriTemplate).match(href);
      if (variables !== null) return { template, variables };
    }
    return undefined;
  }

  /**
   * Completes `argument` of `template`. With a `judge` (access rules in force for the caller) only
   * values it lets through are given, and the counts are those of what is shown. Each value is
   * judged as the URI it completes to.
   */
  async complete(
    template: ResourceTemplate,
    argument: string,
    value: string,
    context: Record<string, string>,
    ctx: CallContext,
    judge: CompletionJudge | undefined,
  ): Promise<Completion> {
    // The argument's name is the client's: only the template's own completers answer it, never
    // what `constructor` or `__proto__` find on an object's prototype.
    const completer =
      template.complete === undefined ? undefined : ownMember(template.complete, argument);
    if (completer === undefined) return { values: [], total: 0, hasMore: false };
    const completion = await completer(value, context, ctx);
    if (judge === undefined) return boundCompletion(completion);
    const expand =
      this.engine === undefined ? undefined : this.compile(template.uriTemplate).expand;
    const shown = await Promise.all(
      completion.values.map(async (v) => {
        if (expand === undefined) return false;
        try {
          // A `#` or `?` in a value (a file `a#b/`) is part of a name, which a `{+var}` slot leaves
          // raw, as if a fragment or query began: the value is judged as the name it holds (and
          // also as expanded, should it hold the stand-ins themselves).
          const named = delimitersRestored(expand({ ...context, [argument]: delimitersHidden(v) }));
          const spellings = new Set(
            /[\uE023\uE03F]/.test(v) ? [named, expand({ ...context, [argument]: v })] : [named],
          );
          for (const spelling of spellings)
            if (!(await judge(parseUri(spelling).href, v.endsWith('/')))) return false;
          return true;
        } catch {
          return false; // a value whose resource cannot be resolved now is not offered
        }
      }),
    );
    const values = completion.values.filter((_v, i) => shown[i] === true);
    return boundCompletion({
      values,
      total: values.length,
      hasMore: completion.hasMore === true && values.length === completion.values.length,
    });
  }

  private compile(template: string): CompiledTemplate {
    let compiled = this.compiled.get(template);
    if (compiled === undefined) {
      compiled = this.engine!.compile(template);
      this.compiled.set(template, compiled);
    }
    return compiled;
  }
}

/** Stand-ins for `#` and `?` in a completion value (private-use characters), encoded by any expansion. */
const HIDDEN = { '#': '\uE023', '?': '\uE03F' } as const;
const RESTORED: Record<string, string> = { '%EE%80%A3': '%23', '%EE%80%BF': '%3F' };

function delimitersHidden(value: string): string {
  return value.replace(/[#?]/g, (c) => HIDDEN[c as '#' | '?']);
}

function delimitersRestored(uri: string): string {
  return uri.replace(/%EE%80%(?:A3|BF)/gi, (escape) => RESTORED[escape.toUpperCase()]!);
}

/** Caps a completer's answer at the protocol's 100 values, keeping `total` and `hasMore` honest. */
export function boundCompletion(completion: Completion): Completion {
  const values = completion.values;
  if (values.length <= MAX_COMPLETION_VALUES) {
    return {
      values,
      total: completion.total ?? values.length,
      hasMore: completion.hasMore ?? (completion.total ?? values.length) > values.length,
    };
  }
  return {
    values: values.slice(0, MAX_COMPLETION_VALUES),
    total: Math.max(completion.total ?? 0, values.length),
    hasMore: true,
  };
}
