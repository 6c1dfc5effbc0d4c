/**
 * Every source, described and built: each provider `serve` (server/compose.ts), the one-shot
 * commands (server/open.ts) or a reload serves is described here as a SourceSpec and built
 * through its provider-catalog row — files sources too. A spec's `key` says
 * what it serves: two specs with the same key build the same thing, so a reload keeps that source
 * running; any other difference replaces it.
 */
import type { Logger } from '../core/log.js';
import type { Tool } from '../core/tools.js';
import type { Provider } from '../core/types.js';
import { configIndex, type Settings, type SourceSettings } from '../config/merge.js';
import type { OtherSourceConfig } from '../config/schema.js';
import { sourceModule, type BuiltSource, type SourceModule } from '../providers/catalog.js';
import type { FilesOptions } from '../providers/files/index.js';

/** One source to serve, in serving order. */
export interface SourceSpec {
  /** Its source type (a catalog row). */
  type: string;
  /** Its position among the config's sources; command-line sources come after them. */
  index: number;
  /** Where it came from, for logs: `sources[2]`, `command line`. */
  origin: string;
  /** What it serves, as text: equal keys build equal sources. */
  key: string;
  /** A files source: its merged settings. */
  files?: SourceSettings;
  /** Any other source: its config (without changes). */
  config?: OtherSourceConfig;
}

/** A source that is being served: its spec, its provider and the tools it offers. */
export interface RunningSource {
  spec: SourceSpec;
  provider: Provider;
  tools: Tool[];
}

/** The sources the settings describe: the config's in its order (every type interleaved), then the command line's. */
export function sourceSpecs(settings: Settings): SourceSpec[] {
  const specs: SourceSpec[] = [
    ...settings.sources.map((files, position) =>
      filesSpec(
        files,
        configIndex(files.origin) ?? Number.MAX_SAFE_INTEGER - settings.sources.length + position,
      ),
    ),
    ...settings.otherSources.map((other) => ({
      type: other.config.type,
      index: other.index,
      origin: other.index === Number.MAX_SAFE_INTEGER ? 'command line' : `sources[${other.index}]`,
      key: `${other.config.type}:${JSON.stringify(other.config)}`,
      config: other.config,
    })),
  ];
  return specs.sort((a, b) => a.index - b.index);
}

/** The files provider a source's settings describe, built by its catalog row. */
export async function buildProvider(source: SourceSettings, logger?: Logger): Promise<Provider> {
  const build = await sourceBuilder([filesSpec(source, 0)]);
  return build(filesSpec(source, 0), logger).provider;
}

function filesSpec(files: SourceSettings, index: number): SourceSpec {
  return {
    type: 'files',
    index,
    origin: files.origin,
    key: `files:${JSON.stringify({ ...files, origin: undefined })}`,
    files,
  };
}

/** The files provider's options from a source's merged settings. */
function filesOptions(source: SourceSettings): FilesOptions {
  const options: FilesOptions = {
    root: source.root,
    gitignore: source.gitignore,
    includeGitDir: source.includeGitDir,
    exclude: source.exclude,
    watch: { mode: source.watch },
    hide: source.hide,
    hideDirectories: source.hideDirectories,
  };
  if (source.allowHardlinks) options.allowHardlinks = true;
  if (source.serveSecrets) options.serveSecrets = true;
  if (source.secretPatterns.length > 0) options.secretPatterns = source.secretPatterns;
  if (source.maxReadBytes !== undefined) options.maxReadBytes = source.maxReadBytes;
  return options;
}

/**
 * Loads the catalog modules the specs need (a server that serves only files never loads the git,
 * sql, http or s3 providers, nor their drivers), then returns what builds one spec.
 */
export async function sourceBuilder(
  specs: readonly SourceSpec[],
): Promise<(spec: SourceSpec, logger?: Logger) => BuiltSource> {
  const types = [...new Set(specs.map((spec) => spec.type))];
  const modules = new Map<string, SourceModule>(
    await Promise.all(types.map(async (type) => [type, await sourceModule(type)] as const)),
  );
  return (spec, logger) => {
    const build = modules.get(spec.type)!.build as (
      options: unknown,
      logger?: Logger,
    ) => BuiltSource;
    if (spec.files !== undefined) return build(filesOptions(spec.files), logger);
    const { type: _type, ...options } = spec.config!;
    return build(options, logger);
  };
}

/** Builds every source the settings describe, in serving order. */
export async function buildRunningSources(
  settings: Settings,
  logger?: Logger,
): Promise<RunningSource[]> {
  const specs = sourceSpecs(settings);
  const build = await sourceBuilder(specs);
  return specs.map((spec) => {
    const built = build(spec, logger);
    return { spec, provider: built.provider, tools: built.tools ?? [] };
  });
}

/** Every provider the settings describe, in serving order, and the tools those sources offer. */
export async function buildSources(
  settings: Settings,
  logger?: Logger,
): Promise<{ providers: Provider[]; tools: Tool[]; running: RunningSource[] }> {
  const running = await buildRunningSources(settings, logger);
  return {
    providers: running.map((source) => source.provider),
    tools: running.flatMap((source) => source.tools),
    running,
  };
}
