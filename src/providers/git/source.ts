/** The catalog's entry point for `type: git` sources (loaded only when a config has one). */
import type { SkillsSourceBase, SourceBuild } from '../utils/source-build.js';
import { gitProvider } from './index.js';
import type { GitSourceOptions } from './options.js';

export const build: SourceBuild<GitSourceOptions> = (options, logger) => ({
  provider: gitProvider({ ...options, logger }),
});

/** A folder of the source's branch (HEAD when none is named), as a git:// directory URI. */
export const skillsBase: SkillsSourceBase<GitSourceOptions> = (provider, options, path) => {
  const ref = encodeURIComponent(options.branch ?? 'HEAD');
  const sub =
    path === ''
      ? ''
      : `${path
          .split('/')
          .filter((s) => s !== '')
          .map(encodeURIComponent)
          .join('/')}/`;
  return `${provider.root}${ref}/${sub}`;
};
