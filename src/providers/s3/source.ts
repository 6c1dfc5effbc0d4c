/** The catalog's entry point for `type: s3` sources (loaded, with the AWS SDK, only when a config has one). */
import type { SourceBuild } from '../utils/source-build.js';
import { s3Provider } from './index.js';
import type { S3SourceOptions } from './options.js';

export const build: SourceBuild<S3SourceOptions> = (options, logger) => ({ provider: s3Provider({ ...options, logger }) });
