/** The catalog's entry point for `type: files` sources (options already merged with the command line). */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { SkillsSourceBase, SourceBuild } from '../utils/source-build.js';
import { filesProvider, type FilesOptions } from './index.js';

export const build: SourceBuild<FilesOptions> = (options, logger) => ({
  provider: filesProvider({ ...options, logger }),
});

/** A folder under the root, as a file:// directory URI. */
export const skillsBase: SkillsSourceBase<FilesOptions> = (provider, _options, path) => {
  const href = pathToFileURL(
    join(
      provider.root === 'file:///' ? '/' : decodeURIComponent(new URL(provider.root).pathname),
      path,
    ),
  ).href;
  return href.endsWith('/') ? href : `${href}/`;
};
