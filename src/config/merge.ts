/**
 * How a config file and the command line combine. The config is the base; an option given
 * explicitly on the command line replaces the matching config option (for source options, on
 * every files source); roots given on the command line are served too, as files sources after
 * the config's. Without a config, without roots and without `--git` repositories, the working
 * directory is served; `--git REPO` alone serves only the repository.
 */
import { resolve } from 'node:path';
import { ConfigError } from '../core/errors.js';
import type { LogLevel } from '../core/log.js';
import { canonicalRoot } from '../providers/utils/root.js';
import type { AuthOptions } from '../http/auth-options.js';
import type { SessionLimitOptions } from '../http/session-options.js';
import type { TlsFiles, TlsOptions } from '../http/tls.js';
import { overlaps } from './basics.js';
import { hiddenOf, reservedPaths, type ReservedPath, type ServedRoot } from './reserved.js';
import type { LoadedConfig, OtherSource } from './load.js';
import { skillsFromCommandLine, type SkillsSettings } from './skills.js';
import type { AccessConfig } from './schema.js';
import { definedProps } from '../core/defined.js';

/** Source options a command line may set (each replaces the config's value on every files source). */
export interface SourceOverrides {
  gitignore?: boolean;
  includeGitDir?: boolean;
  exclude?: string[];
  maxReadBytes?: number;
  watch?: 'native' | 'poll';
  allowHardlinks?: boolean;
  serveSecrets?: boolean;
}

/** What was given explicitly on the command line; absent means "not given". */
export interface CommandLine {
  roots: string[];
  source: SourceOverrides;
  pageSize?: number;
  logLevel?: LogLevel;
  /** `--shutdown-grace-ms`: how long a drain waits for the requests in flight. */
  shutdownGraceMs?: number;
  /** `--http` alone is `true`: serve HTTP at the config's address, else the default one. */
  http?: { host: string; port: number } | true;
  allowedHosts?: string[];
  maxBodyBytes?: number;
  /** `--anonymous`: serve anonymous requests on a non-loopback address without auth. */
  anonymous?: boolean;
  /** `--tls-cert` and `--tls-key` (given together; relative to `cwd`). */
  tls?: TlsFiles;
  /** `--no-ui`: do not serve the explorer at /ui/. */
  ui?: boolean;
  /** `--git PATH` (repeatable): repositories served after the config's sources. */
  git?: string[];
  /** `--skills DIR` (repeatable): folders of Agent Skills served after the config's catalogs. */
  skills?: string[];
  /** `--state-dir` as given (relative to `cwd`). */
  stateDir?: string;
  /** `--secret-file` as given (relative to `cwd`). */
  secretFile?: string;
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
  /** Serve files with more than one hard link. */
  allowHardlinks: boolean;
  /** Serve files that hold secrets (providers/files/secrets.ts). */
  serveSecrets: boolean;
  /** Patterns added to the secret list (gitignore syntax; `!` serves one the defaults skip). */
  secretPatterns: string[];
  /** Files never served: what Reservoir keeps (config, TLS pair, secret file, audit log), should it lie inside the root. */
  hide: string[];
  /** Directories never served, with all they hold: the state directory. */
  hideDirectories: string[];
}

export interface HttpSettings {
  host: string;
  port: number;
  allowedHosts: string[];
  maxBodyBytes?: number;
  auth?: AuthOptions;
  anonymous?: boolean;
  /** Absolute paths of the certificate and key (serve HTTPS), and the config's cipher policy. */
  tls?: TlsOptions;
  sessions?: SessionLimitOptions;
  /** Serve the explorer at /ui/. */
  ui: boolean;
  /** Serve the 2024-11-05 HTTP+SSE transport at /sse and /messages. */
  sse: boolean;
}

/** Everything `reservoir serve` needs, merged. */
export interface Settings {
  sources: SourceSettings[];
  pageSize?: number;
  /** Time one source may spend on its part of a list page, ms (`server.sourceListTimeoutMs`). */
  sourceListTimeoutMs?: number;
  /** How long a drain on shutdown waits for the requests in flight, ms (`server.shutdownGraceMs`). */
  shutdownGraceMs?: number;
  /** The idle memory reducer as the config sets it (`server.memoryReducer`); `serve` runs it unless false. */
  memoryReducer?: boolean | { quietMs?: number | undefined };
  logLevel: LogLevel;
  instructions?: string;
  /** `server.title`, `server.description`, `server.websiteUrl` (serverInfo). */
  presentation?: { title?: string; description?: string; websiteUrl?: string };
  /** Present: serve Streamable HTTP; absent: stdio. */
  http?: HttpSettings;
  /** Access rules from the config file. */
  access?: AccessConfig;
  /** Sources other than files, with their position among the config's sources (command line: after them). */
  otherSources: OtherSource[];
  /** Skills catalogs: the config's, then the command line's. */
  skills: SkillsSettings[];
  /** What Reservoir keeps (reserved.ts): hidden from every files source, named by `check` when served. */
  reserved: ReservedPath[];
}

export const DEFAULT_HTTP_HOST = '127.0.0.1';
export const DEFAULT_HTTP_PORT = 7337;

/** Merges; throws ConfigError when a command-line root is missing or overlaps another source. */
export function mergeSettings(config: LoadedConfig | undefined, cli: CommandLine): Settings {
  const server = config?.server ?? {};
  const o = cli.source;
  const cwd = cli.cwd ?? process.cwd();
  // The command line's TLS pair replaces the file's; each is resolved against where it was written.
  const tlsGiven =
    cli.tls !== undefined
      ? { dir: cwd, files: cli.tls }
      : server.http?.tls === undefined
        ? undefined
        : { dir: config!.dir, files: server.http.tls };
  const tls =
    tlsGiven === undefined
      ? undefined
      : {
          cert: resolve(tlsGiven.dir, tlsGiven.files.cert),
          key: resolve(tlsGiven.dir, tlsGiven.files.key),
        };
  // What Reservoir keeps is never served, whatever root it lies in and however it is spelled.
  const reserved = reservedPaths({
    config,
    stateDir: cli.stateDir,
    secretFile: cli.secretFile,
    tls,
    cwd,
  });
  const { hide, hideDirectories } = hiddenOf(reserved);
  const sources: SourceSettings[] = (config?.sources ?? []).map((s) => ({
    root: s.root,
    origin: s.field,
    gitignore: o.gitignore ?? s.gitignore ?? true,
    includeGitDir: o.includeGitDir ?? s.includeGitDir ?? false,
    exclude: o.exclude ?? s.exclude ?? [],
    ...definedProps({ maxReadBytes: o.maxReadBytes ?? s.maxReadBytes }),
    watch: o.watch ?? s.watch ?? 'native',
    allowHardlinks: o.allowHardlinks ?? s.allowHardlinks ?? false,
    serveSecrets: o.serveSecrets ?? s.serveSecrets ?? false,
    secretPatterns: s.secretPatterns ?? [],
    hide,
    hideDirectories,
  }));
  const skillDirs = cli.skills ?? [];
  const roots =
    cli.roots.length === 0 &&
    config === undefined &&
    (cli.git ?? []).length === 0 &&
    skillDirs.length === 0
      ? ['.']
      : cli.roots;
  for (const given of roots) {
    const root = canonicalRoot(cli.cwd === undefined ? given : resolve(cli.cwd, given));
    const clash = sources.find((s) => overlaps(s.root, root));
    if (clash !== undefined) {
      throw new ConfigError(
        'root',
        `${given} (${root}) overlaps ${clash.origin === 'command line' ? clash.root : `${clash.origin}.root (${clash.root})`}; serve the outer one only`,
        { path: given },
      );
    }
    sources.push({
      root,
      origin: 'command line',
      gitignore: o.gitignore ?? true,
      includeGitDir: o.includeGitDir ?? false,
      exclude: o.exclude ?? [],
      ...definedProps({ maxReadBytes: o.maxReadBytes }),
      watch: o.watch ?? 'native',
      allowHardlinks: o.allowHardlinks ?? false,
      serveSecrets: o.serveSecrets ?? false,
      secretPatterns: [],
      hide,
      hideDirectories,
    });
  }

  const otherSources: OtherSource[] = [...(config?.otherSources ?? [])];
  for (const path of cli.git ?? [])
    otherSources.push({
      index: Number.MAX_SAFE_INTEGER,
      config: { type: 'git', path: resolve(cli.cwd ?? process.cwd(), path) },
    });
  const skills = [
    ...(config?.skills ?? []),
    ...skillsFromCommandLine(skillDirs, cli.cwd ?? process.cwd()),
  ];
  const settings: Settings = {
    sources,
    otherSources,
    skills,
    reserved,
    logLevel: cli.logLevel ?? (server.logLevel as LogLevel | undefined) ?? 'info',
  };
  if (config?.access !== undefined) settings.access = config.access;
  const pageSize = cli.pageSize ?? server.pageSize;
  if (pageSize !== undefined) settings.pageSize = pageSize;
  if (server.sourceListTimeoutMs !== undefined)
    settings.sourceListTimeoutMs = server.sourceListTimeoutMs;
  const shutdownGraceMs = cli.shutdownGraceMs ?? server.shutdownGraceMs;
  if (shutdownGraceMs !== undefined) settings.shutdownGraceMs = shutdownGraceMs;
  if (server.memoryReducer !== undefined) settings.memoryReducer = server.memoryReducer;
  if (server.instructions !== undefined) settings.instructions = server.instructions;
  const { title, description, websiteUrl } = server;
  if (title !== undefined || description !== undefined || websiteUrl !== undefined)
    settings.presentation = definedProps({ title, description, websiteUrl });
  if (cli.http !== undefined || server.http !== undefined) {
    const address = cli.http !== undefined && cli.http !== true ? cli.http : undefined;
    const maxBodyBytes = cli.maxBodyBytes ?? server.http?.maxBodyBytes;
    settings.http = {
      host: address?.host ?? server.http?.host ?? DEFAULT_HTTP_HOST,
      port: address?.port ?? server.http?.port ?? DEFAULT_HTTP_PORT,
      allowedHosts: cli.allowedHosts ?? server.http?.allowedHosts ?? [],
      ...definedProps({
        maxBodyBytes,
        auth: server.http?.auth,
        // Only ever `true`: anonymous access is off unless a flag or the file turns it on.
        anonymous: cli.anonymous === true || server.http?.anonymous === true ? true : undefined,
        sessions: server.http?.sessions,
      }),
      ui: cli.ui ?? server.http?.ui ?? true,
      sse: server.http?.sse ?? true,
    };
    const policy = server.http?.tls;
    if (tls !== undefined) {
      settings.http.tls = {
        ...tls,
        // The cipher policy is the config file's, whichever pair is served.
        ...definedProps({ ciphers: policy?.ciphers, minVersion: policy?.minVersion }),
      };
    }
  }
  return settings;
}

export function configIndex(origin: string): number | undefined {
  const match = /^sources\[(\d+)\]$/.exec(origin);
  return match === null ? undefined : Number(match[1]);
}

/** Every local directory the settings serve from, for `check`'s reserved-path warnings. */
export function servedRoots(settings: Settings): ServedRoot[] {
  const roots: ServedRoot[] = settings.sources.map((s) => ({
    origin: s.origin === 'command line' ? 'command line' : `${s.origin}.root`,
    path: s.root,
  }));
  for (const other of settings.otherSources) {
    const config = other.config as { type: string; path?: unknown; root?: unknown };
    const origin =
      other.index === Number.MAX_SAFE_INTEGER ? 'command line' : `sources[${other.index}]`;
    if (config.type === 'git' && typeof config.path === 'string')
      roots.push({ origin: `${origin}.path`, path: config.path, git: true });
  }
  for (const entry of settings.skills) {
    if (entry.source.type === 'files')
      roots.push({ origin: `${entry.origin}.source.root`, path: entry.source.root });
    else if (entry.source.type === 'git')
      roots.push({ origin: `${entry.origin}.source.path`, path: entry.source.path, git: true });
  }
  return roots;
}
