/**
 * `reservoir setup claude|vscode|cursor`: the host's MCP server entry for this install — the
 * absolute `node` and CLI script paths and the directories given — written into the file the host
 * reads (other servers in it are kept), or printed. Where each host keeps it, from the hosts' docs:
 * - Claude Desktop: claude_desktop_config.json in ~/Library/Application Support/Claude (macOS),
 *   %APPDATA%\Claude (Windows), $XDG_CONFIG_HOME/Claude or ~/.config/Claude (Linux); `mcpServers`.
 * - Cursor: ~/.cursor/mcp.json (every project) or PROJECT/.cursor/mcp.json; `mcpServers`.
 * - VS Code: mcp.json in the user profile — ~/Library/Application Support/Code/User (macOS),
 *   %APPDATA%\Code\User (Windows), $XDG_CONFIG_HOME/Code/User or ~/.config/Code/User (Linux) — or
 *   PROJECT/.vscode/mcp.json; `servers`, each with `type: "stdio"`.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../core/errors.js';

export const HOSTS = ['claude', 'vscode', 'cursor'] as const;
export type Host = (typeof HOSTS)[number];

export interface SetupOptions {
  host: Host;
  /** Directories to serve (each must exist). */
  roots: string[];
  /** A config file to serve instead of (or besides) the roots. */
  config?: string;
  /** The entry's name. @default reservoir */
  name: string;
  /** Cursor and VS Code: write the project's file in this directory instead of the user's. */
  project?: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
}

export interface SetupEntry {
  /** The file the host reads. */
  file: string;
  /** The top-level key holding the servers. */
  key: 'mcpServers' | 'servers';
  entry: Record<string, unknown>;
}

/** The file `host` reads its servers from. */
export function hostConfigFile(host: Host, options: Pick<SetupOptions, 'project' | 'cwd' | 'env' | 'platform'>): string {
  const { env, platform } = options;
  if (options.project !== undefined) {
    if (host === 'claude') throw new ConfigError('--project', 'Claude Desktop has no per-project file; leave --project out');
    return join(resolve(options.cwd, options.project), host === 'cursor' ? '.cursor' : '.vscode', 'mcp.json');
  }
  const home = homedir();
  if (host === 'cursor') return join(home, '.cursor', 'mcp.json');
  const appData = (): string => {
    const value = env['APPDATA'];
    if (value === undefined || value === '') throw new ConfigError('APPDATA', 'not set; it names the folder Windows apps keep their settings in');
    return value;
  };
  const xdg = env['XDG_CONFIG_HOME'] !== undefined && env['XDG_CONFIG_HOME'] !== '' ? env['XDG_CONFIG_HOME'] : join(home, '.config');
  const base = platform === 'darwin' ? join(home, 'Library', 'Application Support') : platform === 'win32' ? appData() : xdg;
  return host === 'claude' ? join(base, 'Claude', 'claude_desktop_config.json') : join(base, 'Code', 'User', 'mcp.json');
}

/** The entry for this install: absolute node and script, absolute roots and config. */
export function setupEntry(options: SetupOptions): SetupEntry {
  if (options.roots.length === 0 && options.config === undefined) {
    throw new ConfigError('roots', 'name the directories the host may read (e.g. reservoir setup claude ~/notes ~/src), or --config FILE');
  }
  const args = [fileURLToPath(new URL('./index.js', import.meta.url)), 'serve'];
  if (options.config !== undefined) {
    const config = resolve(options.cwd, options.config);
    if (!existsSync(config)) throw new ConfigError('--config', `${config} does not exist`);
    args.push('--config', config);
  }
  for (const root of options.roots) {
    const path = resolve(options.cwd, root);
    const stat = statSync(path, { throwIfNoEntry: false });
    if (stat === undefined) throw new ConfigError('root', `${path} does not exist`);
    if (!stat.isDirectory()) throw new ConfigError('root', `${path} is not a directory`);
    args.push(path);
  }
  const key = options.host === 'vscode' ? 'servers' : 'mcpServers';
  const entry = { ...(options.host === 'vscode' ? { type: 'stdio' } : {}), command: process.execPath, args };
  return { file: hostConfigFile(options.host, options), key, entry };
}

/** Writes the entry into its file, keeping everything else; returns whether it replaced one. */
export function writeEntry(setup: SetupEntry, name: string): { replaced: boolean } {
  let document: Record<string, unknown> = {};
  if (existsSync(setup.file)) {
    const text = readFileSync(setup.file, 'utf8');
    let parsed: unknown;
    try {
      parsed = text.trim() === '' ? {} : JSON.parse(text);
    } catch (error) {
      throw new ConfigError(setup.file, `is not plain JSON (${(error as Error).message}); it was left as it is — add the entry printed by --print yourself`);
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new ConfigError(setup.file, 'does not hold a JSON object; it was left as it is');
    document = parsed as Record<string, unknown>;
  }
  const servers = document[setup.key] ?? {};
  if (servers === null || typeof servers !== 'object' || Array.isArray(servers)) throw new ConfigError(setup.file, `its "${setup.key}" is not an object; it was left as it is`);
  const replaced = Object.hasOwn(servers, name);
  document[setup.key] = { ...(servers as Record<string, unknown>), [name]: setup.entry };
  mkdirSync(dirname(setup.file), { recursive: true });
  // Written beside it and renamed over it: the host never reads half a file.
  const temporary = `${setup.file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(document, null, 2)}\n`);
  renameSync(temporary, setup.file);
  return { replaced };
}

/** What `--print` shows: the file and the document fragment to put in it. */
export function printable(setup: SetupEntry, name: string): string {
  return `${JSON.stringify({ [setup.key]: { [name]: setup.entry } }, null, 2)}\n`;
}

export const HOST_NAMES: Readonly<Record<Host, string>> = { claude: 'Claude Desktop', vscode: 'VS Code', cursor: 'Cursor' };
