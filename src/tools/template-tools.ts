/**
 * Typed tools made from resource templates, for hosts that only call tools: each template becomes
 * one tool with one string argument per variable — `git://app/{ref}/{+path}` is read as
 * `read_app_file(ref, path)`. A call expands the template and reads the URI exactly as
 * `read_resource` does (the same access rules, limits, audit and answer), so a template tool can
 * reach nothing a read by URI could not.
 *
 * The input schemas are portable to the strictest hosts (OpenAI's strict mode, Gemini): one
 * `string` per variable, every property required, no additional properties, no type arrays. An
 * optional variable (a `{?query}` one) is nullable (core/portable-schema.ts): null, "" or absent
 * leave it out. A variable whose values are few and
 * complete (a completion with no more, at most `maxEnum`) gets them as an `enum`; others name a few
 * in their description. Values are taken when the tools are made (at start and on each reload),
 * and only when no access rules are in force: a listing never shows one caller another's values.
 */
import { z } from 'zod';
import type { Registry } from '../core/registry.js';
import { ownMember } from '../core/defined.js';
import type { TemplateEngine } from '../core/templates.js';
import { defineOneRoundTool, type Tool } from '../core/tools.js';
import type { ResourceTemplateInfo } from '../core/types.js';
import { readResourceTool } from './read-resource.js';
import { READ_ONLY, toolError } from './shared.js';

export interface TemplateToolOptions {
  /** Complete value sets up to this many become an `enum`. @default 20 */
  maxEnum?: number;
  /** Names already taken (the other tools): a template tool never shadows one. */
  taken?: Iterable<string>;
}

/** Tool names: OpenAI and Gemini accept at most 64 of `[a-zA-Z0-9_-]`, starting with a letter or `_`. */
export const MAX_TOOL_NAME = 64;
/** Values named in a variable's description when they are not an `enum`. */
const EXAMPLES = 5;
/** How long the completion of one variable may take while the tools are made. */
const COMPLETE_MS = 5_000;

/** One variable of a template: its name and whether its operator makes it optional or multi-segment. */
export interface TemplateVariable {
  name: string;
  /** A query variable (`{?a}`, `{&a}`): may be left out. */
  optional: boolean;
  /** Reserved or fragment expansion (`{+a}`, `{#a}`): may hold `/` and span segments. */
  reserved: boolean;
}

/** The variables of an RFC 6570 template, in order, each once. */
export function templateVariables(uriTemplate: string): TemplateVariable[] {
  const found = new Map<string, TemplateVariable>();
  for (const [, operator = '', list = ''] of uriTemplate.matchAll(/\{([+#./;?&]?)([^}]*)\}/g)) {
    for (const spec of list.split(',')) {
      const name = spec.replace(/\*$|:\d+$/, '').trim();
      if (name === '' || found.has(name)) continue;
      found.set(name, {
        name,
        optional: operator === '?' || operator === '&',
        reserved: operator === '+' || operator === '#',
      });
    }
  }
  return [...found.values()];
}

/** `read_` and the template's name, in the characters every host accepts, within the length limit. */
export function templateToolName(templateName: string, taken: ReadonlySet<string>): string {
  const slug =
    templateName
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '_')
      .replace(/^_+|_+$/g, '') || 'template';
  const base = `read_${slug}`.slice(0, MAX_TOOL_NAME);
  if (!taken.has(base)) return base;
  for (let n = 2; ; n += 1) {
    const suffix = `_${n}`;
    const name = `${base.slice(0, MAX_TOOL_NAME - suffix.length)}${suffix}`;
    if (!taken.has(name)) return name;
  }
}

/** One tool per template the registry lists (every page), named uniquely. */
export async function templateTools(
  registry: Registry,
  engine: TemplateEngine,
  options: TemplateToolOptions = {},
): Promise<Tool[]> {
  const maxEnum = options.maxEnum ?? 20;
  const taken = new Set(options.taken ?? []);
  const reader = readResourceTool(registry);
  const tools: Tool[] = [];
  let cursor: string | undefined;
  do {
    const page = registry.listTemplates(cursor);
    for (const template of page.items) {
      const name = templateToolName(template.name, taken);
      taken.add(name);
      tools.push(await templateTool(registry, engine, template, name, reader, maxEnum));
    }
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tools;
}

async function templateTool(
  registry: Registry,
  engine: TemplateEngine,
  template: ResourceTemplateInfo,
  name: string,
  reader: Tool,
  maxEnum: number,
): Promise<Tool> {
  const variables = templateVariables(template.uriTemplate);
  // Own members, whatever the variables' names: assigned, `__proto__` would set the prototype.
  const entries: [string, z.ZodType][] = [];
  for (const variable of variables)
    entries.push([variable.name, await argumentSchema(registry, template, variable, maxEnum)]);
  const shape: Record<string, z.ZodType> = Object.fromEntries(entries);
  const compiled = engine.compile(template.uriTemplate);
  const about = template.title ?? template.description ?? template.name;
  return defineOneRoundTool({
    name,
    title: template.title ?? `Read ${template.name}`,
    description:
      `Read one resource of the template ${template.uriTemplate} (${about}): the arguments fill its variables, ` +
      'and the answer is what read_resource gives for the URI they make.' +
      (template.description === undefined || template.description === about
        ? ''
        : ` ${template.description}`),
    input: z.strictObject(shape),
    annotations: { title: template.title ?? `Read ${template.name}`, ...READ_ONLY },
    call(args: Record<string, string | undefined>, ctx) {
      // No prototype: the expansion reads every variable it has from `values`, so one called
      // `valueOf` left out must be absent (whatever engine expands it), and one called `__proto__`
      // is a member like any other, not the prototype.
      const values = Object.create(null) as Record<string, string>;
      for (const variable of variables) {
        // only the arguments given: an optional `valueOf` left out is not Object.prototype's
        const value = ownMember(args, variable.name) ?? '';
        if (value === '' && !variable.optional)
          return toolError(
            `The argument ${variable.name} is empty; give the ${variable.name} of the resource to read (the template is ${template.uriTemplate}).`,
          );
        if (value !== '') values[variable.name] = value;
      }
      if (compiled.expand === undefined)
        return toolError(`The template ${template.uriTemplate} cannot be expanded here.`);
      return reader.call({ uri: compiled.expand(values) }, ctx);
    },
  });
}

async function argumentSchema(
  registry: Registry,
  template: ResourceTemplateInfo,
  variable: TemplateVariable,
  maxEnum: number,
): Promise<z.ZodType> {
  const what = variable.reserved
    ? `The ${variable.name} variable of the template (may contain /).`
    : `The ${variable.name} variable of the template.`;
  const optional = variable.optional ? ' Optional: null (or "") leaves it out.' : '';
  const values = await knownValues(registry, template, variable);
  if (
    values !== undefined &&
    !values.more &&
    values.values.length > 0 &&
    values.values.length <= maxEnum &&
    !variable.reserved
  ) {
    const choices = z.enum(values.values as [string, ...string[]]);
    return (variable.optional ? choices.optional() : choices).describe(`${what}${optional}`);
  }
  const examples =
    values === undefined || values.values.length === 0
      ? ''
      : ` For example: ${values.values
          .slice(0, EXAMPLES)
          .map((v) => JSON.stringify(v))
          .join(', ')}.`;
  // No minLength: strict hosts refuse it; an empty required value is refused when called.
  return (variable.optional ? z.string().optional() : z.string()).describe(
    `${what}${optional}${examples}`,
  );
}

/** The values the template's completer gives for an empty prefix; none while access rules are in force. */
async function knownValues(
  registry: Registry,
  template: ResourceTemplateInfo,
  variable: TemplateVariable,
): Promise<{ values: string[]; more: boolean } | undefined> {
  if (registry.restricted) return undefined;
  try {
    const completion = await registry.completeTemplate(
      template.uriTemplate,
      variable.name,
      '',
      {},
      { signal: AbortSignal.timeout(COMPLETE_MS) },
    );
    const values = completion.values.filter((v) => v !== '');
    const more =
      completion.hasMore === true ||
      (completion.total !== undefined && completion.total > values.length);
    return { values, more };
  } catch {
    return undefined;
  }
}
