/**
 * Config prompts compiled into core Prompts. `{{name}}` in a message's text or resource is
 * replaced by the argument's value (an optional argument not given is empty); `\{{` writes a
 * literal `{{`. A `resource` is embedded when the prompt is fetched, through the Registry, so
 * containment and read caps apply as to any read. A resource without a URI scheme is a path,
 * resolved against the config file's directory.
 */
import { relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Prompt, PromptArgument, PromptMessage } from '../core/prompts.js';
import type { Registry } from '../core/registry.js';
import { MAX_COMPLETION_VALUES } from '../core/templates.js';
import type { CallContext, Completer, Completion } from '../core/types.js';
import type { PromptArgumentConfig, PromptConfig } from './schema.js';
import { definedProps, ownMember } from '../core/defined.js';

const PLACEHOLDER = /(\\?)\{\{\s*([^{}]*?)\s*\}\}/g;

/** The argument names a template refers to, in order of appearance (escaped ones excluded). */
export function placeholders(template: string): string[] {
  const names: string[] = [];
  for (const match of template.matchAll(PLACEHOLDER)) if (match[1] === '') names.push(match[2]!);
  return names;
}

/**
 * Replaces `{{name}}` by `args[name]` ('' when absent) and `\{{` by `{{`. Only the arguments given
 * count: an argument `toString` not given is empty, not what Object.prototype holds under that name.
 */
export function substitute(template: string, args: Readonly<Record<string, string>>): string {
  return template.replace(PLACEHOLDER, (whole, escape: string, name: string) =>
    escape === '' ? (ownMember(args, name) ?? '') : whole.slice(1),
  );
}

/** A URI (has a scheme of two letters or more) or else a path resolved against `baseDir`. */
export function resourceUri(value: string, baseDir: string): string {
  if (/^[A-Za-z][A-Za-z0-9+.-]+:/.test(value)) return value;
  return pathToFileURL(resolve(baseDir, value)).href;
}

export interface CompileOptions {
  /** Resolves relative resource paths and is what `path` completion is relative to. */
  baseDir: string;
  /** Where `path` completion finds the served sources. */
  registry: Registry;
}

export function compilePrompts(
  configs: readonly PromptConfig[],
  options: CompileOptions,
): Prompt[] {
  return configs.map((config) => compilePrompt(config, options));
}

function compilePrompt(config: PromptConfig, options: CompileOptions): Prompt {
  const argumentsList = config.arguments?.map((a) => compileArgument(a, options));
  return {
    name: config.name,
    ...definedProps({
      title: config.title,
      description: config.description,
      arguments: argumentsList,
    }),
    messages(args): PromptMessage[] {
      return config.messages.map((message) =>
        message.resource !== undefined
          ? {
              role: message.role,
              content: {
                type: 'resource_ref',
                uri: resourceUri(substitute(message.resource, args), options.baseDir),
              },
            }
          : {
              role: message.role,
              content: { type: 'text', text: substitute(message.text ?? '', args) },
            },
      );
    },
  };
}

function compileArgument(config: PromptArgumentConfig, options: CompileOptions): PromptArgument {
  const complete =
    config.complete === undefined
      ? undefined
      : config.complete === 'path'
        ? pathCompleter(options)
        : valuesCompleter(config.complete);
  return {
    name: config.name,
    ...definedProps({
      title: config.title,
      description: config.description,
      required: config.required,
      complete,
    }),
  };
}

/** The fixed values starting with what was typed (case-insensitively), in the order given. */
function valuesCompleter(values: readonly string[]): Completer {
  return (typed) => {
    const prefix = typed.toLowerCase();
    const matches = values.filter((v) => v.toLowerCase().startsWith(prefix));
    return {
      values: matches.slice(0, MAX_COMPLETION_VALUES),
      total: matches.length,
      hasMore: matches.length > MAX_COMPLETION_VALUES,
    };
  };
}

/**
 * Served paths, relative to the config directory, completed like shell tab completion by the
 * files provider's own `path` completer (one directory read per source): a value inside a source
 * is handed to that source's completer; a value that is a prefix of a source's root offers the root
 * itself (`docs/`). Sources without a `path` completer offer nothing.
 *
 * Completion goes through the registry (`completeTemplate`), as a `completion/complete` on the
 * source's template would: under access rules a source whose template the caller cannot see
 * offers nothing (not even its root), and only values naming what the caller may reach are given —
 * judged on the name and, through a symlink, on where it leads.
 */
function pathCompleter(options: CompileOptions): Completer {
  return async (typed, _context, ctx: CallContext): Promise<Completion> => {
    const values: string[] = [];
    let total: number | undefined = 0;
    let hasMore = false;
    const offer = (answer: Completion, prefix: string): void => {
      for (const value of answer.values)
        if (values.length < MAX_COMPLETION_VALUES) values.push(prefix + value);
      total = total === undefined || answer.total === undefined ? undefined : total + answer.total;
      hasMore ||= answer.hasMore === true;
    };
    const registry = options.registry;
    const principal = ctx.principal;
    for (const provider of registry.providers()) {
      const template = provider.templates?.().find((t) => t.complete?.['path'] !== undefined);
      const root = localPath(provider.root, options.baseDir);
      if (template === undefined || root === undefined) continue;
      if (
        !registry.access.mayReachUnder(principal, 'read', provider.root) ||
        !registry.access.mayReachUnder(principal, 'complete', provider.root)
      )
        continue;
      const complete = (value: string): Promise<Completion> =>
        registry.completeTemplate(template.uriTemplate, 'path', value, {}, ctx);
      if (root === '') offer(await complete(typed), '');
      else if (typed.startsWith(`${root}/`))
        offer(await complete(typed.slice(root.length + 1)), `${root}/`);
      else if (`${root}/`.startsWith(typed)) offer({ values: [`${root}/`], total: 1 }, '');
    }
    if (total === undefined) return { values, hasMore: true };
    return { values, total, hasMore: hasMore || total > values.length };
  };
}

/** The path of a file: URI relative to `baseDir`, '/'-joined, without a trailing slash. */
function localPath(uri: string, baseDir: string): string | undefined {
  if (!uri.startsWith('file:')) return undefined;
  try {
    return relative(baseDir, fileURLToPath(uri)).split(sep).join('/');
  } catch {
    return undefined;
  }
}
