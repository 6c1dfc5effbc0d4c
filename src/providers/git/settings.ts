/**
 * The git provider's options checked and completed once, when the provider is built: parsed with
 * the same schema as the config file (options.ts), so a bad value fails the same way from code,
 * the config and the CLI; the repository named after its directory when no name is given; and
 * every default applied.
 */
import { basename, resolve as resolvePath } from 'node:path';
import { ConfigError } from '../../core/errors.js';
import { isValidRef } from './address.js';
import {
  DEFAULT_COMMAND_TIMEOUT_MS,
  DEFAULT_MAX_LOG_ENTRIES,
  DEFAULT_MAX_READ_BYTES,
  DEFAULT_POLL_INTERVAL_MS,
  gitSourceOptions,
  type GitSourceOptions,
} from './options.js';

export interface GitSettings {
  /** The repository directory, absolute. */
  dir: string;
  /** The repository name in URIs. */
  name: string;
  /** The branch listed; undefined follows HEAD. */
  branch: string | undefined;
  maxReadBytes: number;
  maxLogEntries: number;
  timeoutMs: number;
  pollIntervalMs: number;
}

/** The settings `options` describe, or ConfigError naming the first bad option. */
export function gitSettings(options: GitSourceOptions): GitSettings {
  const parsed = gitSourceOptions.safeParse(options);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(issue.path.join('.') || 'git', issue.message);
  }
  const config = parsed.data;
  if (config.branch !== undefined && !isValidRef(config.branch)) {
    throw new ConfigError('branch', 'not a valid ref name (see git check-ref-format)', {
      value: config.branch,
    });
  }
  const dir = resolvePath(config.path);
  return {
    dir,
    name: config.name ?? defaultName(dir),
    branch: config.branch,
    maxReadBytes: config.maxReadBytes ?? DEFAULT_MAX_READ_BYTES,
    maxLogEntries: config.maxLogEntries ?? DEFAULT_MAX_LOG_ENTRIES,
    timeoutMs: config.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
    pollIntervalMs: config.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS,
  };
}

/** The directory's base name as a URI authority: other characters become '-'. */
function defaultName(dir: string): string {
  const cleaned = basename(dir)
    .replace(/\.git$/, '')
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 63);
  return cleaned === '' ? 'repo' : cleaned;
}
