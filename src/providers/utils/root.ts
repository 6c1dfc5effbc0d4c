/**
 * A configured directory root, canonicalised: the real path of a directory that exists. Shared by
 * the config (which resolves and de-duplicates roots before any provider starts) and the providers
 * that serve a directory, so neither reaches into another's internals.
 */
import { realpathSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError } from '../../core/errors.js';
import { errnoFailure } from './errors.js';

/** Canonicalises a configured root: it must exist and be a directory (a ConfigError on `root` says why not). */
export function canonicalRoot(path: string): string {
  let real: string;
  try {
    real = realpathSync.native(resolve(path));
  } catch (error) {
    const failure = errnoFailure(error, 'opened');
    const reason =
      failure?.kind === 'missing' && (error as NodeJS.ErrnoException).code === 'ENOENT'
        ? 'does not exist'
        : failure?.kind === 'denied'
          ? 'is not accessible (permission denied)'
          : `cannot be opened (${(error as NodeJS.ErrnoException).code ?? 'error'})`;
    throw new ConfigError('root', `${path} ${reason}`, { path });
  }
  if (!statSync(real).isDirectory())
    throw new ConfigError('root', `${path} is a file, not a directory`, { path });
  return real;
}
