/** The search index's settings from the config file's `search:` section and the state directory. */
import type { LoadedConfig } from '../config/load.js';
import type { SearchSettings } from '../search/service.js';

export function searchSettingsOf(
  config: LoadedConfig | undefined,
  stateDir: string,
): SearchSettings {
  const section = config?.search;
  return {
    stateDir,
    sources: section?.sources,
    maxFileBytes: section?.maxFileBytes,
    languages: section?.languages,
    queryBudgetMs: section?.queryBudgetMs,
    postgres: section?.postgres,
  };
}
