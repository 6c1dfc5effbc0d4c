/** The catalog's entry point for `type: git` sources (loaded only when a config has one). */
import type { SourceBuild } from '../utils/source-build.js';
import { gitProvider } from './index.js';
import type { GitSourceOptions } from './options.js';

export const build: SourceBuild<GitSourceOptions> = (options, logger) => ({ provider: gitProvider({ ...options, logger }) });
