/**
 * Loads a config file: parse (YAML, or JSON for `.json`), interpolate `${ENV}`, validate against
 * the schema, then check what the schema cannot (roots exist and do not overlap, prompt names are
 * unique, `{{placeholders}}` name declared arguments). Every problem is reported at once, each
 * naming the file, the line, the field path and what was expected; any problem throws a
 * ConfigFileError and nothing is served.
 */
import { readFileSync } from 'node:fs';
import { dirname, extname, resolve } from 'node:path';
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import type { Document, Node } from 'yaml';
import { isReservoirError } from '../core/errors.js';
import { catalogRow } from '../providers/catalog.js';
import { canonicalRoot } from '../providers/utils/root.js';
import { ConfigFileError, overlaps } from './basics.js';
import type { HintsConfig } from './hints.js';
import { interpolateEnv } from './interpolate.js';
import type { ToolsConfig } from './tools.js';
import { forbiddenKeyProblems } from './keys.js';
import { locateJsonError } from './json.js';
import { describeValue, formatPath, problemsOf, type ConfigProblem } from './messages.js';
import { placeholders } from './prompts.js';
import {
  ConfigSchema,
  type AccessConfig,
  type FilesSourceConfig,
  type OtherSourceConfig,
  type PromptConfig,
  type SearchConfig,
  type ServerConfig,
} from './schema.js';

import { resolveSkills, type SkillsSettings } from './skills.js';
import { definedProps } from '../core/defined.js';

export { ConfigFileError, DEFAULT_CONFIG_FILE, overlaps } from './basics.js';

/** A files source with its root resolved to a canonical absolute path. */
export interface ResolvedFilesSource extends FilesSourceConfig {
  /** Where it was declared, e.g. `sources[1]`, for messages. */
  field: string;
}

/** A source other than files, as configured (its path fields resolved against the config's directory). */
export interface OtherSource {
  index: number;
  config: OtherSourceConfig;
}

export interface LoadedConfig {
  /** Absolute path of the file. */
  file: string;
  /** The path as the user gave it, used in messages. */
  display: string;
  /** The file's directory: relative roots and resource paths resolve against it. */
  dir: string;
  sources: ResolvedFilesSource[];
  server: ServerConfig;
  prompts: PromptConfig[];
  /** Sources other than files (git, http, sql, s3), with their position in `sources`. */
  otherSources: OtherSource[];
  /** Access rules, when the file has any. */
  access?: AccessConfig;
  /** The `hints:` section, when the file has one. */
  hints?: HintsConfig;
  /** The `search:` section, when the file has one. */
  search?: SearchConfig;
  /** The `tools:` section, when the file has one. */
  tools?: ToolsConfig;
  /** Skills catalogs, their sources' paths resolved. */
  skills: SkillsSettings[];
}

export interface LoadOptions {
  /** Environment for `${NAME}`. @default process.env */
  env?: Readonly<Record<string, string | undefined>> | undefined;
  /** How to name the file in messages. @default the path as given */
  display?: string | undefined;
}

/** Reads and validates a config file; throws ConfigFileError. */
export function loadConfig(path: string, options: LoadOptions = {}): LoadedConfig {
  const display = options.display ?? path;
  const file = resolve(path);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'is a directory'
          : code === 'EACCES'
            ? 'permission denied'
            : (code ?? 'cannot be read');
    throw new ConfigFileError(file, [`${display}: cannot read the config file: ${reason}`]);
  }
  return parseConfig(text, { ...options, file, display });
}

/** Validates config text as if read from `file`. */
export function parseConfig(text: string, options: LoadOptions & { file: string }): LoadedConfig {
  const file = resolve(options.file);
  const display = options.display ?? options.file;
  const dir = dirname(file);
  const isJson = extname(file).toLowerCase() === '.json';
  const { LineCounter, parseDocument } = yaml();
  const lines = new LineCounter();
  const where = (offset: number): string => {
    const { line, col } = lines.linePos(offset);
    return `${display}:${line}:${col}`;
  };

  let raw: unknown;
  if (isJson) {
    try {
      raw = JSON.parse(text);
    } catch {
      const error = locateJsonError(text);
      lines.addNewLine(0);
      for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1))
        lines.addNewLine(i + 1);
      throw new ConfigFileError(file, [`${where(error.offset)}: invalid JSON: ${error.message}`]);
    }
  }
  // YAML documents give positions for every problem; a JSON file parses as YAML too, for those.
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (!isJson) {
    if (doc.errors.length > 0)
      throw new ConfigFileError(
        file,
        doc.errors.map((e) => `${where(e.pos[0])}: invalid YAML: ${e.message}`),
      );
    raw = doc.toJS({ maxAliasCount: 100 });
  }
  const located = isJson && doc.errors.length > 0 ? undefined : doc;
  const report = (problems: ConfigProblem[]): ConfigFileError => {
    const sorted = problems
      .map((p, index) => ({
        ...p,
        index,
        offset: located === undefined ? undefined : offsetOf(located, p.path),
      }))
      .sort((a, b) => (a.offset ?? 0) - (b.offset ?? 0) || a.index - b.index);
    return new ConfigFileError(
      file,
      sorted.map((p) => {
        const at = p.offset === undefined ? display : where(p.offset);
        return p.path.length === 0
          ? `${at}: ${p.message}`
          : `${at}: ${formatPath(p.path)}: ${p.message}`;
      }),
    );
  };

  if (raw === null || raw === undefined)
    throw report([{ path: [], message: "the file is empty; expected an object with 'sources'" }]);
  if (typeof raw !== 'object' || Array.isArray(raw))
    throw report([
      { path: [], message: `expected an object at the top level, got ${describeValue(raw)}` },
    ]);

  // Checked first and alone: such a key could change how everything after it is read.
  const forbidden = forbiddenKeyProblems(raw);
  if (forbidden.length > 0) throw report(forbidden);
  const problems: ConfigProblem[] = [];
  const interpolated = interpolateEnv(raw, options.env ?? process.env, problems);
  const parsed = ConfigSchema.safeParse(interpolated, { reportInput: true });
  if (!parsed.success)
    for (const issue of parsed.error.issues) problems.push(...problemsOf(issue, interpolated));
  if (problems.length > 0 || !parsed.success) throw report(problems);

  const data = parsed.data;
  if (data.sources === undefined && (data.skills ?? []).length === 0)
    throw report([
      { path: ['sources'], message: "required unless 'skills' is given, expected a list" },
    ]);
  const files = (data.sources ?? []).flatMap((source, index) =>
    source.type === 'files' ? [{ source, index }] : [],
  );
  const sources = resolveSources(files, dir, problems);
  // Fields the catalog marks as paths (a git repository, a SQLite file) resolve against the file's directory.
  const otherSources = (data.sources ?? []).flatMap((source, index): OtherSource[] => {
    if (source.type === 'files') return [];
    const config: Record<string, unknown> = { ...source };
    for (const field of catalogRow(source.type).pathFields)
      if (typeof config[field] === 'string') config[field] = resolve(dir, config[field]);
    return [{ index, config: config as OtherSourceConfig }];
  });
  checkPrompts(data.prompts ?? [], problems);
  if (problems.length > 0) throw report(problems);
  return {
    file,
    display,
    dir,
    sources,
    otherSources,
    server: data.server ?? {},
    prompts: data.prompts ?? [],
    skills: resolveSkills(data.skills ?? [], dir),
    ...definedProps({
      access: data.access,
      hints: data.hints,
      search: data.search,
      tools: data.tools,
    }),
  };
}

function resolveSources(
  sources: readonly { source: FilesSourceConfig; index: number }[],
  dir: string,
  problems: ConfigProblem[],
): ResolvedFilesSource[] {
  const resolved: ResolvedFilesSource[] = [];
  for (const { source, index } of sources) {
    const path = ['sources', index, 'root'];
    let root: string;
    try {
      root = canonicalRoot(resolve(dir, source.root));
    } catch (error) {
      problems.push({
        path,
        message: isReservoirError(error) ? String(error.data['reason']) : String(error),
      });
      continue;
    }
    const clash = resolved.find((other) => overlaps(other.root, root));
    if (clash !== undefined) {
      const how = clash.root === root ? 'is the same directory as' : 'overlaps';
      problems.push({
        path,
        message: `${root} ${how} ${clash.field}.root (${clash.root}); serve the outer one only`,
      });
      continue;
    }
    resolved.push({ ...source, root, field: `sources[${index}]` });
  }
  return resolved;
}

function checkPrompts(prompts: readonly PromptConfig[], problems: ConfigProblem[]): void {
  const names = new Map<string, number>();
  for (const [p, prompt] of prompts.entries()) {
    const first = names.get(prompt.name);
    if (first !== undefined)
      problems.push({
        path: ['prompts', p, 'name'],
        message: `duplicate prompt name '${prompt.name}' (also prompts[${first}].name)`,
      });
    else names.set(prompt.name, p);

    const declared = new Map<string, number>();
    for (const [a, argument] of (prompt.arguments ?? []).entries()) {
      const earlier = declared.get(argument.name);
      if (earlier !== undefined) {
        problems.push({
          path: ['prompts', p, 'arguments', a, 'name'],
          message: `duplicate argument name '${argument.name}' (also prompts[${p}].arguments[${earlier}].name)`,
        });
      } else declared.set(argument.name, a);
    }
    const known = [...declared.keys()];
    for (const [m, message] of prompt.messages.entries()) {
      const path = ['prompts', p, 'messages', m];
      if ((message.text === undefined) === (message.resource === undefined)) {
        problems.push({
          path,
          message:
            message.text === undefined
              ? "expected 'text' or 'resource'"
              : "give either 'text' or 'resource', not both",
        });
        continue;
      }
      const field = message.text === undefined ? 'resource' : 'text';
      for (const name of placeholders(message.text ?? message.resource ?? '')) {
        if (declared.has(name)) continue;
        const list =
          known.length === 0 ? 'it declares no arguments' : `declared: ${known.join(', ')}`;
        problems.push({
          path: [...path, field],
          message: `'{{${name}}}' is not an argument of prompt '${prompt.name}' (${list}; write '\\{{' for a literal '{{')`,
        });
      }
    }
  }
}

/** Offset of the key (or item) a field path names, or of the nearest enclosing node that exists. */
function offsetOf(doc: Document, path: readonly (string | number)[]): number | undefined {
  let node: unknown = doc.contents;
  let offset = (doc.contents as Node | null)?.range?.[0];
  const { isMap, isScalar, isSeq } = yaml();
  for (const segment of path) {
    if (isMap(node)) {
      const pair = node.items.find(
        (item) => isScalar(item.key) && String(item.key.value) === String(segment),
      );
      if (pair === undefined) break;
      offset = (pair.key as Node).range?.[0] ?? offset;
      node = pair.value;
    } else if (isSeq(node) && typeof segment === 'number') {
      const item = node.items[segment] as Node | undefined;
      if (item === undefined) break;
      offset = item.range?.[0] ?? offset;
      node = item;
    } else break;
  }
  return offset;
}

/** `yaml` is loaded on first use: a server started without a config file never pays for it. */
export function yaml(): typeof Yaml {
  return createRequire(import.meta.url)('yaml') as typeof Yaml;
}
