/** The catalog's entry point for `type: http` sources (loaded only when a config has one). */
import type { SourceBuild } from '../utils/source-build.js';
import { httpProvider } from './index.js';
import type { HttpSourceOptions } from './options.js';

export const build: SourceBuild<HttpSourceOptions> = (options, logger) => ({
  provider: httpProvider({ ...options, logger }),
});
