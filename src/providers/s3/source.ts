/** The catalog's entry point for `type: s3` sources (loaded, with the AWS SDK, only when a config has one). */
import type { SkillsSourceBase, SourceBuild } from '../utils/source-build.js';
import { encodeKey } from './address.js';
import { s3Provider } from './index.js';
import type { S3SourceOptions } from './options.js';

export const build: SourceBuild<S3SourceOptions> = (options, logger) => ({
  provider: s3Provider({ ...options, logger }),
});

/** A key prefix under the source's prefix, as an s3:// directory URI. */
export const skillsBase: SkillsSourceBase<S3SourceOptions> = (provider, _options, path) => {
  const sub = path
    .split('/')
    .filter((s) => s !== '')
    .join('/');
  return `${provider.root}${sub === '' ? '' : `${encodeKey(sub)}/`}`;
};
