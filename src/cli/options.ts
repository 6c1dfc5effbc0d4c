/**
 * Command-line option parsing shared by the commands: strict numbers, addresses, and the files
 * provider options every command that mounts roots accepts.
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { Logger } from '../core/log.js';
import { filesProvider, type FilesOptions } from '../providers/files/index.js';
import type { Provider } from '../core/types.js';

export interface SourceFlags {
  gitignore: boolean;
  watch?: 'native' | 'poll';
  includeGitDir?: boolean;
  exclude?: string[];
  maxReadBytes?: number;
}

/** Adds the flags that shape what a files root serves. */
export function withSourceFlags(command: Command): Command {
  return command
    .option('--exclude <pattern>', 'leave out paths matching a gitignore-style pattern (repeatable)', collect, [])
    .option('--no-gitignore', 'serve files that .gitignore files exclude')
    .option('--include-git-dir', 'serve the contents of .git directories (left out by default)')
    .option('--max-read-bytes <bytes>', 'largest file one read returns (default 7340032 = 7 MiB)', positiveInt)
    .addOption(
      new Option('--watch <mode>', 'change detection: native OS watching (falls back to polling when refused), or polling')
        .choices(['native', 'poll'])
        .default('native'),
    );
}

export function filesProviders(roots: string[], flags: SourceFlags, logger?: Logger): Provider[] {
  return roots.map((root) => {
    const options: FilesOptions = { root, gitignore: flags.gitignore };
    if (logger !== undefined) options.logger = logger;
    if (flags.watch !== undefined) options.watch = { mode: flags.watch };
    if (flags.includeGitDir === true) options.includeGitDir = true;
    if (flags.exclude !== undefined && flags.exclude.length > 0) options.exclude = flags.exclude;
    if (flags.maxReadBytes !== undefined) options.maxReadBytes = flags.maxReadBytes;
    return filesProvider(options) as Provider;
  });
}

export function positiveInt(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError(`expected a whole number, got '${value}'`);
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError(`expected a whole number of at least 1, got '${value}'`);
  return n;
}

export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

export interface Address {
  host: string;
  port: number;
}

/** Parses `HOST:PORT`, `:PORT`, `PORT` or `[IPv6]:PORT`. */
export function parseAddress(value: string): Address {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]*))?:?(\d{1,5})$/.exec(value.trim());
  if (match === null) throw new InvalidArgumentError(`expected HOST:PORT (e.g. 127.0.0.1:7337), got '${value}'`);
  const port = Number(match[3]);
  if (port > 65535) throw new InvalidArgumentError(`port ${port} is out of range (0-65535)`);
  const host = match[1] ?? (match[2] === undefined || match[2] === '' ? '127.0.0.1' : match[2]);
  return { host, port };
}
