/**
 * Command-line option parsing shared by the commands: strict numbers, addresses, the flags that
 * shape what a files root serves, and finding the config file.
 */
import { existsSync } from 'node:fs';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { ConfigError } from '../core/errors.js';
import { ConfigFileError, DEFAULT_CONFIG_FILE, DEFAULT_CONFIG_FILES } from '../config/basics.js';
import type { LoadedConfig } from '../config/load.js';
import type { CommandLine } from '../config/merge.js';
import type { LogLevel } from '../server/logger.js';

export interface SourceFlags {
  gitignore: boolean;
  watch?: 'native' | 'poll';
  includeGitDir?: boolean;
  exclude?: string[];
  maxReadBytes?: number;
  allowHardlinks?: boolean;
  serveSecrets?: boolean;
}

/** Adds the flags that shape what a files root serves. */
export function withSourceFlags(command: Command): Command {
  return command
    .option(
      '--exclude <pattern>',
      'leave out paths matching a gitignore-style pattern (repeatable)',
      collect,
      [],
    )
    .option('--no-gitignore', 'serve files that .gitignore files exclude')
    .option('--include-git-dir', 'serve the contents of .git directories (left out by default)')
    .option(
      '--max-read-bytes <bytes>',
      'largest file one read returns (default 7340032 = 7 MiB)',
      positiveInt,
    )
    .option(
      '--serve-secrets',
      'serve files that hold secrets: .env, private keys, .npmrc, .netrc, cloud credentials (skipped by default)',
    )
    .option(
      '--allow-hardlinks',
      'serve files with more than one hard link (refused by default: one may be an inode outside the root)',
    )
    .addOption(
      new Option(
        '--watch <mode>',
        'change detection: native OS watching (falls back to polling when refused), or polling',
      )
        .choices(['native', 'poll'])
        .default('native'),
    );
}

export function positiveInt(value: string): number {
  if (!/^\d+$/.test(value))
    throw new InvalidArgumentError(`expected a whole number, got '${value}'`);
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1)
    throw new InvalidArgumentError(`expected a whole number of at least 1, got '${value}'`);
  return n;
}

export function nonNegativeInt(value: string): number {
  if (!/^\d+$/.test(value))
    throw new InvalidArgumentError(`expected a whole number, got '${value}'`);
  const n = Number(value);
  if (!Number.isSafeInteger(n))
    throw new InvalidArgumentError(`expected a whole number, got '${value}'`);
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
  // A bare number is a port (`--http 8080`), never a host glued to a one-digit port.
  const match = /^(?:\[([0-9a-fA-F:.]+)\]:|([^:[\]]*):|)(\d{1,5})$/.exec(value.trim());
  if (match === null)
    throw new InvalidArgumentError(`expected HOST:PORT (e.g. 127.0.0.1:7337), got '${value}'`);
  const port = Number(match[3]);
  if (port > 65535) throw new InvalidArgumentError(`port ${port} is out of range (0-65535)`);
  const host = match[1] ?? (match[2] === undefined || match[2] === '' ? '127.0.0.1' : match[2]);
  return { host, port };
}

export interface ConfigFlags {
  /** A path (--config), false (--no-config), or undefined (look for ./reservoir.yaml). */
  config?: string | false;
}

/** Adds --config and --no-config. */
export function withConfigFlags(command: Command): Command {
  return command
    .option(
      '--config <path>',
      `read sources, server options and prompts from this YAML or JSON file (default: ./${DEFAULT_CONFIG_FILE}, .yml or .json when present)`,
    )
    .option('--no-config', `ignore ./${DEFAULT_CONFIG_FILE} (and .yml, .json)`);
}

/**
 * The config file the flags name, or the one of ./reservoir.yaml, ./reservoir.yml, ./reservoir.json
 * present; undefined for none. Two of them present is refused: neither would be an obvious choice.
 */
export function findConfig(flags: ConfigFlags): { path: string; display: string } | undefined {
  if (flags.config === false) return undefined;
  if (typeof flags.config === 'string') return { path: flags.config, display: flags.config };
  const present = DEFAULT_CONFIG_FILES.filter((name) => existsSync(name));
  if (present.length > 1) {
    throw new ConfigFileError(present[0]!, [
      `${present.join(' and ')} are both here; keep one, or pass --config PATH (or --no-config)`,
    ]);
  }
  return present[0] === undefined ? undefined : { path: present[0], display: present[0] };
}

/**
 * Loads the config the flags name (throws ConfigFileError), or undefined for none. The loader (and
 * the config schema with it) is imported only when there is a file to load.
 */
export async function configFrom(flags: ConfigFlags): Promise<LoadedConfig | undefined> {
  const found = findConfig(flags);
  if (found === undefined) return undefined;
  const { loadConfig } = await import('../config/load.js');
  return loadConfig(found.path, { display: found.display });
}

interface CommandLineFlags extends SourceFlags {
  http?: string | true;
  allowedHost?: string[];
  pageSize?: number;
  maxBodyBytes?: number;
  shutdownGraceMs?: number;
  logLevel?: LogLevel;
  anonymous?: boolean;
  git?: string[];
  skills?: string[];
  tlsCert?: string;
  tlsKey?: string;
  ui?: boolean;
  stateDir?: string;
  secretFile?: string;
}

/** What the user gave explicitly (not commander defaults), for merging with a config file. */
export function commandLineOf(
  roots: string[],
  flags: CommandLineFlags,
  command: Command,
): CommandLine {
  const given = (key: string): boolean => command.getOptionValueSource(key) === 'cli';
  const source: CommandLine['source'] = {};
  if (given('gitignore')) source.gitignore = flags.gitignore;
  if (given('includeGitDir')) source.includeGitDir = flags.includeGitDir === true;
  if (given('exclude') && flags.exclude !== undefined) source.exclude = flags.exclude;
  if (given('maxReadBytes') && flags.maxReadBytes !== undefined)
    source.maxReadBytes = flags.maxReadBytes;
  if (given('watch') && flags.watch !== undefined) source.watch = flags.watch;
  if (given('allowHardlinks') && flags.allowHardlinks === true) source.allowHardlinks = true;
  if (given('serveSecrets') && flags.serveSecrets === true) source.serveSecrets = true;
  const cli: CommandLine = { roots, source };
  if (given('pageSize') && flags.pageSize !== undefined) cli.pageSize = flags.pageSize;
  if (given('logLevel') && flags.logLevel !== undefined) cli.logLevel = flags.logLevel;
  if (given('shutdownGraceMs') && flags.shutdownGraceMs !== undefined)
    cli.shutdownGraceMs = flags.shutdownGraceMs;
  if (given('http') && flags.http !== undefined)
    cli.http = flags.http === true ? true : parseAddress(flags.http);
  if (given('allowedHost') && flags.allowedHost !== undefined) cli.allowedHosts = flags.allowedHost;
  if (given('maxBodyBytes') && flags.maxBodyBytes !== undefined)
    cli.maxBodyBytes = flags.maxBodyBytes;
  if (given('anonymous') && flags.anonymous === true) cli.anonymous = true;
  if (given('ui') && flags.ui === false) cli.ui = false;
  if (given('git') && flags.git !== undefined && flags.git.length > 0) cli.git = flags.git;
  if (given('skills') && flags.skills !== undefined && flags.skills.length > 0)
    cli.skills = flags.skills;
  if (flags.stateDir !== undefined) cli.stateDir = flags.stateDir;
  if (flags.secretFile !== undefined) cli.secretFile = flags.secretFile;
  if (flags.tlsCert !== undefined || flags.tlsKey !== undefined) {
    if (flags.tlsCert === undefined)
      throw new ConfigError(
        '--tls-cert',
        'missing: --tls-key was given, and HTTPS needs the certificate too',
      );
    if (flags.tlsKey === undefined)
      throw new ConfigError(
        '--tls-key',
        'missing: --tls-cert was given, and HTTPS needs the private key too',
      );
    cli.tls = { cert: flags.tlsCert, key: flags.tlsKey };
  }
  return cli;
}
