/**
 * Builds the skills catalogs the settings describe: for each, the source provider it reads through
 * (files, git or S3, each with its base URI), the SDK-built catalog over it, and the
 * `skill://` provider the registry mounts. Used by `serve` (live), `check` and `skills lint`.
 */
import type { SkillWarning } from '@modelcontextprotocol/server/ext/skills';
import type { SkillsSettings } from '../config/skills.js';
import { ConfigError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import type { Provider } from '../core/types.js';
import { sourceModule, type SkillsSourceBase, type SourceBuild } from '../providers/catalog.js';
import type { SkillsServing } from '../mcp/skills.js';
import { SkillsCatalog, type DirectorySource } from '../skills/live-catalog.js';
import { skillsProvider, type SkillsProvider } from '../skills/provider.js';

export interface BuildSkillsOptions {
  logger?: Logger;
  /** Follow the sources (serve); without it the catalogs are built once (check, lint). */
  live?: boolean;
  /** Files never served from a files source: what Reservoir keeps (config/reserved.ts). */
  hide?: string[];
  /** Directories never served from a files source: the state directory. */
  hideDirectories?: string[];
}

/**
 * The source provider of one entry, built by its catalog row, and the directory URI of its skill
 * folders (the row's `skillsBase`).
 */
async function sourceOf(
  settings: SkillsSettings,
  options: BuildSkillsOptions,
): Promise<{ provider: DirectorySource; base: string }> {
  const { type, ...config } = settings.source;
  // A files source's watch mode is the files provider's `watch.mode`; what Reservoir keeps stays hidden.
  const built =
    settings.source.type === 'files'
      ? {
          ...config,
          watch: settings.source.watch === undefined ? undefined : { mode: settings.source.watch },
          hide: options.hide ?? [],
          hideDirectories: options.hideDirectories ?? [],
        }
      : config;
  const module = await sourceModule(type);
  const provider = (module.build as SourceBuild<unknown>)(
    dropUndefined(built),
    options.logger,
  ).provider;
  const base = (module.skillsBase as SkillsSourceBase<unknown>)(
    provider,
    built,
    settings.path ?? '',
  );
  return { provider: provider as DirectorySource, base };
}

function dropUndefined(options: object): object {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
}

/** One catalog: built (strict problems throw a SkillCatalogError), and live when asked. */
export async function buildSkillsProvider(
  settings: SkillsSettings,
  options: BuildSkillsOptions = {},
): Promise<SkillsProvider> {
  const { provider: source, base } = await sourceOf(settings, options);
  let catalog: SkillsCatalog;
  try {
    catalog = await SkillsCatalog.load({
      source,
      base,
      label: settings.origin,
      prefix: settings.prefix,
      strict: settings.strict,
      limits: settings.limits,
      logger: options.logger,
    });
  } catch (error) {
    await source.close?.();
    throw error;
  }
  if (options.live === true) await catalog.live();
  return skillsProvider(catalog, source as Provider);
}

/** Every catalog of the settings; their roots must differ (a prefix tells two catalogs apart). */
export async function buildSkills(
  entries: readonly SkillsSettings[],
  options: BuildSkillsOptions = {},
): Promise<SkillsServing | undefined> {
  if (entries.length === 0) return undefined;
  const providers: SkillsProvider[] = [];
  try {
    for (const entry of entries) {
      const provider = await buildSkillsProvider(entry, options);
      const clash = providers.find(
        (p) => p.root.startsWith(provider.root) || provider.root.startsWith(p.root),
      );
      providers.push(provider);
      if (clash !== undefined) {
        throw new ConfigError(
          `${entry.origin}.prefix`,
          `${provider.root} overlaps another skills catalog's ${clash.root}; give each catalog its own prefix`,
        );
      }
    }
  } catch (error) {
    await Promise.allSettled(providers.map((p) => p.close?.()));
    throw error;
  }
  const pageSize = entries.find((entry) => entry.pageSize !== undefined)?.pageSize;
  return { providers, pageSize };
}

/** A problem as `reservoir check` and `skills lint` print it: where, the skill path, the rule. */
export function describeWarning(origin: string, warning: SkillWarning): string {
  return `${origin}: ${warning.path}: ${warning.message}`;
}
