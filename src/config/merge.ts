/**
 * How a config file and the command line combine. The config is the base; an option given
 * explicitly on the command line replaces the matching config option (for source options, on
 * every files source); roots given on the command line are served too, as files sources after
 * the config's. Without a config and without roots, the working directory is served.
 */
import { resolve } from 'node:path';
import { ConfigError } from '../core/errors.js';
import type { Logger, LogLevel } from '../core/log.js';
import type { Provider } from '../core/types.js';
import { filesProvider, type FilesOptions } from '../providers/files/index.js';
import { canonicalRoot } from '../providers/files/containment.js';
import type { AuthOptions } from '../http/auth-options.js';
import type { SessionLimitOptions } from '../http/session-options.js';
import type { TlsFiles } from '../http/tls.js';
import type { SqlProvider } from '../providers/sql/index.js';
import type { Tool } from '../core/tools.js';
import { overlaps } from './basics.js';
import type { LoadedConfig, OtherSource } from './load.js';
import type { AccessConfig, GitSourceConfig, HttpSourceConfig, OtherSourceConfig, SqlSourceConfig } from './schema.js';

/** Source options a command line may set (each replaces the config's value on every files source). */
export interface SourceOverrides {
  gitignore?: boolean;
  includeGitDir?: boolean;
  exclude?: string[];
  maxReadBytes?: number;
  watch?: 'native' | 'poll';
}

/** What was given explicitly on the command line; absent means "not given". */
export interface CommandLine {
  roots: string[];
  source: SourceOverrides;
  pageSize?: number;
  logLevel?: LogLevel;
  /** `--http` alone is `true`: serve HTTP at the config's address, else the default one. */
  http?: { host: string; port: number } | true;
  allowedHosts?: string[];
  maxBodyBytes?: number;
  /** `--anonymous`: serve anonymous requests on a non-loopback address without auth. */
  anonymous?: boolean;
  /** `--tls-cert` and `--tls-key` (given together; relative to `cwd`). */
  tls?: TlsFiles;
  /** `--git PATH` (repeatable): repositories served after the config's sources. */
  git?: string[];
  /** The working directory command-line roots resolve against. @default process.cwd() */
  cwd?: string;
}

export interface SourceSettings {
  root: string;
  /** Where it came from: `sources[1]` or `command line`. */
  origin: string;
  gitignore: boolean;
  includeGitDir: boolean;
  exclude: string[];
  maxReadBytes?: number;
  watch: 'native' | 'poll';
}

export interface HttpSettings {
  host: string;
  port: number;
  allowedHosts: string[];
  maxBodyBytes?: number;
  auth?: AuthOptions;
  anonymous?: boolean;
  /** Absolute paths of the certificate and key: serve HTTPS. */
  tls?: TlsFiles;
  sessions?: SessionLimitOptions;
}

/** Everything `reservoir serve` needs, merged. */
export interface Settings {
  sources: SourceSettings[];
  pageSize?: number;
  logLevel: LogLevel;
  instructions?: string;
  /** Present: serve Streamable HTTP; absent: stdio. */
  http?: HttpSettings;
  /** Access rules from the config file. */
  access?: AccessConfig;
  /** git and http sources, with their position among the config's sources (command line: after them). */
  otherSources: OtherSource[];
}

export const DEFAULT_HTTP_HOST = '127.0.0.1';
export const DEFAULT_HTTP_PORT = 7337;

/** Merges; throws ConfigError when a command-line root is missing or overlaps another source. */
export function mergeSettings(config: LoadedConfig | undefined, cli: CommandLine): Settings {
  const server = config?.server ?? {};
  const o = cli.source;
  const sources: SourceSettings[] = (config?.sources ?? []).map((s) => ({
    root: s.root,
    origin: s.field,
    gitignore: o.gitignore ?? s.gitignore ?? true,
    includeGitDir: o.includeGitDir ?? s.includeGitDir ?? false,
    exclude: o.exclude ?? s.exclude ?? [],
    ...(o.maxReadBytes ?? s.maxReadBytes) === undefined ? {} : { maxReadBytes: (o.maxReadBytes ?? s.maxReadBytes)! },
    watch: o.watch ?? s.watch ?? 'native',
  }));
  const roots = cli.roots.length === 0 && config === undefined ? ['.'] : cli.roots;
  for (const given of roots) {
    const root = canonicalRoot(cli.cwd === undefined ? given : resolve(cli.cwd, given));
    const clash = sources.find((s) => overlaps(s.root, root));
    if (clash !== undefined) {
      throw new ConfigError('root', `${given} (${root}) overlaps ${clash.origin === 'command line' ? clash.root : `${clash.origin}.root (${clash.root})`}; serve the outer one only`, { path: given });
    }
    sources.push({
      root,
      origin: 'command line',
      gitignore: o.gitignore ?? true,
      includeGitDir: o.includeGitDir ?? false,
      exclude: o.exclude ?? [],
      ...(o.maxReadBytes === undefined ? {} : { maxReadBytes: o.maxReadBytes }),
      watch: o.watch ?? 'native',
    });
  }

  const otherSources: OtherSource[] = [...(config?.otherSources ?? [])];
  for (const path of cli.git ?? []) otherSources.push({ index: Number.MAX_SAFE_INTEGER, config: { type: 'git', path: resolve(cli.cwd ?? process.cwd(), path) } });
  const settings: Settings = { sources, otherSources, logLevel: cli.logLevel ?? (server.logLevel as LogLevel | undefined) ?? 'info' };
  if (config?.access !== undefined) settings.access = config.access;
  const pageSize = cli.pageSize ?? server.pageSize;
  if (pageSize !== undefined) settings.pageSize = pageSize;
  if (server.instructions !== undefined) settings.instructions = server.instructions;
  if (cli.http !== undefined || server.http !== undefined) {
    const address = cli.http !== undefined && cli.http !== true ? cli.http : undefined;
    const maxBodyBytes = cli.maxBodyBytes ?? server.http?.maxBodyBytes;
    settings.http = {
      host: address?.host ?? server.http?.host ?? DEFAULT_HTTP_HOST,
      port: address?.port ?? server.http?.port ?? DEFAULT_HTTP_PORT,
      allowedHosts: cli.allowedHosts ?? server.http?.allowedHosts ?? [],
      ...(maxBodyBytes === undefined ? {} : { maxBodyBytes }),
      ...(server.http?.auth === undefined ? {} : { auth: server.http.auth }),
      ...(cli.anonymous === true || server.http?.anonymous === true ? { anonymous: true } : {}),
      ...(server.http?.sessions === undefined ? {} : { sessions: server.http.sessions }),
    };
    // The command line's pair replaces the file's; each is resolved against where it was written.
    const tls = cli.tls !== undefined ? { dir: cli.cwd ?? process.cwd(), files: cli.tls } : server.http?.tls === undefined ? undefined : { dir: config!.dir, files: server.http.tls };
    if (tls !== undefined) settings.http.tls = { cert: resolve(tls.dir, tls.files.cert), key: resolve(tls.dir, tls.files.key) };
  }
  return settings;
}

/** The files provider a source's settings describe. */
export function buildProvider(source: SourceSettings, logger?: Logger): Provider {
  const options: FilesOptions = {
    root: source.root,
    gitignore: source.gitignore,
    includeGitDir: source.includeGitDir,
    exclude: source.exclude,
    watch: { mode: source.watch },
  };
  if (source.maxReadBytes !== undefined) options.maxReadBytes = source.maxReadBytes;
  if (logger !== undefined) options.logger = logger;
  return filesProvider(options) as Provider;
}

/** Builds the provider a git, http or sql source describes, and the tool it offers, if any. */
type OtherBuilder = (source: OtherSourceConfig, logger?: Logger) => { provider: Provider; tool?: Tool };

/**
 * Loads the modules the given sources need and returns what builds them: a server that serves
 * only files never loads the git, sql or http providers (nor their drivers).
 */
async function otherBuilder(sources: readonly OtherSourceConfig[]): Promise<OtherBuilder> {
  const needs = (type: OtherSourceConfig['type']): boolean => sources.some((source) => source.type === type);
  const [git, sql, http, sqlTool] = await Promise.all([
    needs('git') ? import('../providers/git/index.js') : undefined,
    needs('sql') ? import('../providers/sql/index.js') : undefined,
    needs('http') ? import('../providers/http/index.js') : undefined,
    sources.some((source) => source.type === 'sql' && source.queryTool === true) ? import('../providers/sql/tool.js') : undefined,
  ]);
  return (source, logger) => {
    const { type: _type, ...options } = source;
    const log = logger === undefined ? {} : { logger };
    if (source.type === 'git') return { provider: git!.gitProvider({ ...(options as Omit<GitSourceConfig, 'type'>), ...log }) };
    if (source.type === 'http') return { provider: http!.httpProvider({ ...(options as Omit<HttpSourceConfig, 'type'>), ...log }) };
    const provider: SqlProvider = sql!.sqlProvider({ ...(options as Omit<SqlSourceConfig, 'type'>), ...log });
    return source.queryTool === true ? { provider, tool: sqlTool!.sqlQueryTool(provider) } : { provider };
  };
}

/**
 * Every provider the settings describe, in the config's order (files and other sources interleaved
 * as written), then the command line's; and the tools those sources offer (a sql source's
 * `sql_query_NAME` when `queryTool` is on).
 */
export async function buildSources(settings: Settings, logger?: Logger): Promise<{ providers: Provider[]; tools: Tool[] }> {
  const buildOther = await otherBuilder(settings.otherSources.map((other) => other.config));
  if (settings.otherSources.some((other) => other.config.type === 'sql')) {
    const { requireSqlDrivers } = await import('../providers/sql/drivers.js');
    for (const { index, config } of settings.otherSources) {
      if (config.type === 'sql') requireSqlDrivers(config.url === undefined ? 'sqlite' : 'postgres', `sources[${index}]`);
    }
  }
  const tools: Tool[] = [];
  const ordered: { index: number; build: () => Provider }[] = [
    ...settings.sources.map((source, position) => ({
      index: configIndex(source.origin) ?? Number.MAX_SAFE_INTEGER - settings.sources.length + position,
      build: () => buildProvider(source, logger),
    })),
    ...settings.otherSources.map((other) => ({
      index: other.index,
      build: () => {
        const { provider, tool } = buildOther(other.config, logger);
        if (tool !== undefined) tools.push(tool);
        return provider;
      },
    })),
  ];
  const providers = ordered.sort((a, b) => a.index - b.index).map((entry) => entry.build());
  return { providers, tools };
}

function configIndex(origin: string): number | undefined {
  const match = /^sources\[(\d+)\]$/.exec(origin);
  return match === null ? undefined : Number(match[1]);
}

/** Whether two sources would serve the same thing (a reload keeps such a provider running). */
export function sameSource(a: SourceSettings, b: SourceSettings): boolean {
  return (
    a.root === b.root &&
    a.gitignore === b.gitignore &&
    a.includeGitDir === b.includeGitDir &&
    a.maxReadBytes === b.maxReadBytes &&
    a.watch === b.watch &&
    a.exclude.length === b.exclude.length &&
    a.exclude.every((pattern, i) => pattern === b.exclude[i])
  );
}
