/**
 * The MCP hosts `reservoir setup` knows: where each keeps its servers, in what shape, and how a value
 * in its file names an environment variable. From the hosts' docs:
 * - Claude Desktop: claude_desktop_config.json in ~/Library/Application Support/Claude (macOS),
 *   %APPDATA%\Claude (Windows), $XDG_CONFIG_HOME/Claude or ~/.config/Claude (Linux); `mcpServers`.
 *   No variable expansion.
 * - Claude Code: ~/.claude.json (user scope) or PROJECT/.mcp.json; `mcpServers`, each with
 *   `type: "stdio"`; `${VAR}` expands.
 * - Cursor: ~/.cursor/mcp.json (every project) or PROJECT/.cursor/mcp.json; `mcpServers`;
 *   `${env:VAR}` expands.
 * - VS Code: mcp.json in the user profile — ~/Library/Application Support/Code/User (macOS),
 *   %APPDATA%\Code\User (Windows), $XDG_CONFIG_HOME/Code/User or ~/.config/Code/User (Linux) — or
 *   PROJECT/.vscode/mcp.json; `servers`, each with `type: "stdio"`; `${env:VAR}` expands.
 * - Gemini CLI: ~/.gemini/settings.json or PROJECT/.gemini/settings.json; `mcpServers`; `$VAR`
 *   and `${VAR}` expand.
 * - Codex CLI: $CODEX_HOME/config.toml (default ~/.codex) or PROJECT/.codex/config.toml (trusted
 *   projects); TOML tables `[mcp_servers.NAME]`. No variable expansion.
 */
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { ConfigError } from '../core/errors.js';

export const HOSTS = ['claude', 'claude-code', 'vscode', 'cursor', 'gemini', 'codex'] as const;
export type Host = (typeof HOSTS)[number];

export interface HostPlace {
  project?: string | undefined;
  cwd: string;
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
}

export interface HostFormat {
  /** The name people know it by. */
  title: string;
  /** The file's format: JSON (other keys kept) or TOML (other tables kept). */
  format: 'json' | 'toml';
  /** JSON: the top-level key holding the servers; TOML: the table prefix. */
  key: 'mcpServers' | 'servers' | 'mcp_servers';
  /** Fields the entry carries besides command and args. */
  extra: Readonly<Record<string, string>>;
  /** How a value in the host's file names an environment variable; undefined: it cannot. */
  variable: ((name: string) => string) | undefined;
  /** The user's file. */
  userFile(place: HostPlace): string;
  /** The project's file in `dir`; undefined: the host has none. */
  projectFile: ((dir: string) => string) | undefined;
}

function configBase(place: HostPlace): string {
  const home = homedir();
  if (place.platform === 'darwin') return join(home, 'Library', 'Application Support');
  if (place.platform === 'win32') {
    const value = place.env['APPDATA'];
    if (value === undefined || value === '')
      throw new ConfigError(
        'APPDATA',
        'not set; it names the folder Windows apps keep their settings in',
      );
    return value;
  }
  const xdg = place.env['XDG_CONFIG_HOME'];
  return xdg !== undefined && xdg !== '' ? xdg : join(home, '.config');
}

export const HOST_FORMATS: Readonly<Record<Host, HostFormat>> = {
  claude: {
    title: 'Claude Desktop',
    format: 'json',
    key: 'mcpServers',
    extra: {},
    variable: undefined,
    userFile: (place) => join(configBase(place), 'Claude', 'claude_desktop_config.json'),
    projectFile: undefined,
  },
  'claude-code': {
    title: 'Claude Code',
    format: 'json',
    key: 'mcpServers',
    extra: { type: 'stdio' },
    variable: (name) => `\${${name}}`,
    userFile: () => join(homedir(), '.claude.json'),
    projectFile: (dir) => join(dir, '.mcp.json'),
  },
  vscode: {
    title: 'VS Code',
    format: 'json',
    key: 'servers',
    extra: { type: 'stdio' },
    variable: (name) => `\${env:${name}}`,
    userFile: (place) => join(configBase(place), 'Code', 'User', 'mcp.json'),
    projectFile: (dir) => join(dir, '.vscode', 'mcp.json'),
  },
  cursor: {
    title: 'Cursor',
    format: 'json',
    key: 'mcpServers',
    extra: {},
    variable: (name) => `\${env:${name}}`,
    userFile: () => join(homedir(), '.cursor', 'mcp.json'),
    projectFile: (dir) => join(dir, '.cursor', 'mcp.json'),
  },
  gemini: {
    title: 'Gemini CLI',
    format: 'json',
    key: 'mcpServers',
    extra: {},
    variable: (name) => `\${${name}}`,
    userFile: () => join(homedir(), '.gemini', 'settings.json'),
    projectFile: (dir) => join(dir, '.gemini', 'settings.json'),
  },
  codex: {
    title: 'Codex CLI',
    format: 'toml',
    key: 'mcp_servers',
    extra: {},
    variable: undefined,
    userFile: (place) => {
      const home = place.env['CODEX_HOME'];
      return join(
        home !== undefined && home !== '' ? resolve(place.cwd, home) : join(homedir(), '.codex'),
        'config.toml',
      );
    },
    projectFile: (dir) => join(dir, '.codex', 'config.toml'),
  },
};

/** The file `host` reads its servers from: the project's with `place.project`, else the user's. */
export function hostConfigFile(host: Host, place: HostPlace): string {
  const format = HOST_FORMATS[host];
  if (place.project === undefined) return format.userFile(place);
  if (format.projectFile === undefined)
    throw new ConfigError(
      '--project',
      `${format.title} has no per-project file; leave --project out`,
    );
  return format.projectFile(resolve(place.cwd, place.project));
}
