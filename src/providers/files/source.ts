/** The catalog's entry point for `type: files` sources (options already merged with the command line). */
import type { SourceBuild } from '../utils/source-build.js';
import { filesProvider, type FilesOptions } from './index.js';

export const build: SourceBuild<FilesOptions> = (options, logger) => ({ provider: filesProvider({ ...options, logger }) });
