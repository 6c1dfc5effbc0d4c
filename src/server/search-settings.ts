/** The search index's settings from the config file's `search:` section and the state directory. */
import type { LoadedConfig } from '../config/load.js';
import type { SearchSettings } from '../search/service.js';

export function searchSettingsOf(config: LoadedConfig | undefined, stateDir: string): SearchSettings {
  const section = config?.search;
  return {
    stateDir,
    ...(section?.sources === undefined ? {} : { sources: section.sources }),
    ...(section?.maxFileBytes === undefined ? {} : { maxFileBytes: section.maxFileBytes }),
    ...(section?.languages === undefined ? {} : { languages: section.languages }),
    ...(section?.queryBudgetMs === undefined ? {} : { queryBudgetMs: section.queryBudgetMs }),
  };
}
