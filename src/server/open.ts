/**
 * The one-shot commands' root (`list`, `read`, `search`, `index`, `check`): the sources `serve`
 * would serve, built the same way (server/sources.ts), in a Registry of their own that the caller
 * closes. `serve` composes the same sources in server/compose.ts.
 */
import type { LoadedConfig } from '../config/load.js';
import type { Settings, SourceOverrides, SourceSettings } from '../config/merge.js';
import type { Logger } from '../core/log.js';
import type { Tool } from '../core/tools.js';
import type { Provider } from '../core/types.js';
import { Registry } from '../core/registry.js';
import { DocumentRenderer } from '../documents/index.js';
import { DocumentReads } from '../documents/reads.js';
import { sdkTemplateEngine } from '../mcp/templates.js';
import type { SearchService } from '../search/service.js';
import { persistentCursorKey } from './secret.js';
import { searchSettingsOf } from './search-settings.js';
import { buildSources } from './sources.js';
import { definedProps } from '../core/defined.js';

export interface OpenOptions {
  /** Where the sources log. @default nowhere */
  logger?: Logger;
  /** Keep the cursor key in this state directory, so a printed cursor works in the next run (a failure is warned of). */
  cursors?: { stateDir: string; logger: { warn(obj: unknown, msg?: string): void } };
}

/** A Registry serving every source of the settings (page size and list budget as `serve` has them). */
export async function openRegistry(
  settings: Settings,
  options: OpenOptions = {},
): Promise<Registry> {
  const registry = new Registry({
    templateEngine: sdkTemplateEngine,
    ...definedProps({
      cursorSecret:
        options.cursors === undefined
          ? undefined
          : persistentCursorKey(options.cursors.stateDir, options.cursors.logger),
    }),
    pageSize: settings.pageSize,
    sourceListTimeoutMs: settings.sourceListTimeoutMs,
    reads: new DocumentReads(
      new DocumentRenderer(
        options.cursors === undefined ? {} : { stateDir: options.cursors.stateDir },
      ),
    ),
  });
  for (const provider of (await buildSources(settings, options.logger)).providers)
    registry.mount(provider);
  return registry;
}

/** A Registry and the search index over it, in the state directory (`reservoir search`, `index`). */
export async function openSearch(
  config: LoadedConfig | undefined,
  settings: Settings,
  stateDir: string,
  logger: Logger,
): Promise<{ registry: Registry; service: SearchService }> {
  const registry = await openRegistry(settings, { logger });
  const { SearchService } = await import('../search/service.js');
  return {
    registry,
    service: new SearchService(registry, searchSettingsOf(config, stateDir), logger),
  };
}

/**
 * Settings that serve only these directories, as the command line shapes them, and nothing the
 * config file declares (`reservoir read --root DIR`).
 */
export function rootsOnly(roots: readonly string[], overrides: SourceOverrides): Settings {
  const sources = roots.map((root): SourceSettings => ({
    root,
    origin: 'command line',
    gitignore: overrides.gitignore ?? true,
    includeGitDir: overrides.includeGitDir ?? false,
    exclude: overrides.exclude ?? [],
    // Settings keep absent keys absent, as config/merge.ts builds them.
    ...definedProps({ maxReadBytes: overrides.maxReadBytes }),
    watch: overrides.watch ?? 'native',
    allowHardlinks: overrides.allowHardlinks ?? false,
    serveSecrets: overrides.serveSecrets ?? false,
    secretPatterns: [],
    hide: [],
    hideDirectories: [],
  }));
  return { sources, otherSources: [], skills: [], reserved: [], logLevel: 'warn' };
}

/**
 * Builds every source of the settings, hands their providers and tools to `use` (never opened by
 * the build), then closes them: `reservoir check` judges access rules against their roots and
 * tools, and `--connect` asks each whether it answers.
 */
export async function withSources<T>(
  settings: Settings,
  use: (providers: Provider[], tools: Tool[]) => Promise<T>,
): Promise<T> {
  const { providers, tools } = await buildSources(settings);
  try {
    return await use(providers, tools);
  } finally {
    await Promise.allSettled(providers.map((provider) => provider.close?.()));
  }
}
