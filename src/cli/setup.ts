/**
 * `reservoir setup HOST`: the host's MCP server entry for this install — the absolute `node` and CLI
 * script paths and the directories given, or a config file — written into the file the host reads
 * (other servers in it are kept), or printed. The hosts and their files: ./setup-hosts.ts.
 *
 * A `--config` file is validated as `serve` would; `${VAR}` references in it that are not set where
 * setup runs are passed through: the entry names each in its `env`, in the host's own variable syntax,
 * so the host sets them when it starts the server (hosts without such a syntax get a note instead).
 */
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, extname, resolve } from 'node:path';
import { ConfigFileError } from '../config/basics.js';
import { ConfigError } from '../core/errors.js';
import { HOST_FORMATS, hostConfigFile, type Host, type HostFormat } from './setup-hosts.js';
import { mergeTomlTable, tomlTable } from './setup-toml.js';

export { HOSTS, type Host } from './setup-hosts.js';

export interface SetupOptions {
  host: Host;
  /** Directories to serve (each must exist). */
  roots: string[];
  /** A config file to serve instead of (or besides) the roots. */
  config?: string | undefined;
  /** The entry's name. @default reservoir */
  name: string;
  /** Write the project's file in this directory instead of the user's (hosts that have one). */
  project?: string | undefined;
  cwd: string;
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
}

export interface SetupEntry {
  /** The file the host reads. */
  file: string;
  format: HostFormat;
  entry: Record<string, unknown>;
  /** Variables the config needs that the host must provide (and, where it can, that the entry passes). */
  passed: string[];
}

const REFERENCE = /(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Validates the config as `serve` would; returns the variables it uses that are not set here. */
async function checkConfig(path: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  // Loaded here, not at the top: every command imports this module, and the validator is heavy.
  const { loadConfig, yaml } = await import('../config/load.js');
  const text = readFileSync(path, 'utf8');
  const lines = text.split('\n');
  const unset = [
    ...new Set(lines.flatMap((line) => [...line.matchAll(REFERENCE)].map((m) => m[1]!))),
  ].filter((name) => env[name] === undefined);
  // A problem on a line that uses an unset variable (its absence, or what the field looks like
  // without it) is the host's to settle; any other problem is the file's.
  const usesUnset = (line: number): boolean =>
    unset.some((name) => lines[line - 1]?.includes(`\${${name}}`) === true);
  let servesHttp: boolean;
  try {
    servesHttp = loadConfig(path, { env }).server.http !== undefined;
  } catch (error) {
    if (!(error instanceof ConfigFileError)) throw error;
    const real = error.problems.filter((problem) => {
      const at = /^.*?:(\d+):\d+: /.exec(problem);
      return at === null
        ? !unset.some((name) => problem.includes(`environment variable '${name}' is not set`))
        : !usesUnset(Number(at[1]));
    });
    if (real.length > 0)
      throw new ConfigError('--config', `${path} is not a valid config:\n${real.join('\n')}`);
    // Stopped by a variable the host provides: the file read again as the loader reads it (a
    // file that does not parse without the variable cannot tell, and is let through).
    servesHttp = false;
    try {
      const data = (
        extname(path).toLowerCase() === '.json'
          ? JSON.parse(text)
          : yaml().parse(text, { uniqueKeys: false })
      ) as { server?: { http?: unknown } } | null;
      servesHttp = data?.server?.http !== undefined && data.server.http !== null;
    } catch {
      // as above
    }
  }
  if (servesHttp)
    throw new ConfigError(
      '--config',
      `${path} serves Streamable HTTP (server.http), but a host entry starts Reservoir over stdio, which that config would not answer: remove server.http from the file, or run the server yourself and give the host its URL (http://HOST:PORT/mcp)`,
    );
  return unset;
}

/** The entry for this install: absolute node and script, absolute roots and config. */
export async function setupEntry(options: SetupOptions): Promise<SetupEntry> {
  const format = HOST_FORMATS[options.host];
  if (options.roots.length === 0 && options.config === undefined) {
    throw new ConfigError(
      'roots',
      `name the directories the host may read (e.g. reservoir setup ${options.host} ~/notes ~/src), or --config FILE`,
    );
  }
  const file = hostConfigFile(options.host, options);
  const args = [fileURLToPath(new URL('./index.js', import.meta.url)), 'serve'];
  let passed: string[] = [];
  if (options.config !== undefined) {
    const config = resolve(options.cwd, options.config);
    if (!existsSync(config)) throw new ConfigError('--config', `${config} does not exist`);
    passed = await checkConfig(config, options.env);
    args.push('--config', config);
  }
  for (const root of options.roots) {
    const path = resolve(options.cwd, root);
    const stat = statSync(path, { throwIfNoEntry: false });
    if (stat === undefined) throw new ConfigError('root', `${path} does not exist`);
    if (!stat.isDirectory()) throw new ConfigError('root', `${path} is not a directory`);
    args.push(path);
  }
  const variable = format.variable;
  const env =
    variable === undefined || passed.length === 0
      ? {}
      : { env: Object.fromEntries(passed.map((name) => [name, variable(name)])) };
  return {
    file,
    format,
    entry: { ...format.extra, command: process.execPath, args, ...env },
    passed,
  };
}

/** What to tell the user about variables the host must provide; empty when there are none. */
export function variablesNote(setup: SetupEntry): string {
  if (setup.passed.length === 0) return '';
  const names = setup.passed.join(', ');
  if (setup.format.variable !== undefined) {
    return `# the config uses ${names}, not set here: the entry passes ${setup.passed.length === 1 ? 'it' : 'them'} from the environment ${setup.format.title} starts it in\n`;
  }
  return `# the config uses ${names}, not set here, and ${setup.format.title} expands no variables: add ${setup.passed.length === 1 ? 'it' : 'them'} to the entry's "env" yourself\n`;
}

function readJsonObject(file: string): Record<string, unknown> {
  if (!existsSync(file)) return {};
  const text = readFileSync(file, 'utf8');
  let parsed: unknown;
  try {
    parsed = text.trim() === '' ? {} : JSON.parse(text);
  } catch (error) {
    throw new ConfigError(
      file,
      `is not plain JSON (${(error as Error).message}); it was left as it is — add the entry printed by --print yourself`,
    );
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new ConfigError(file, 'does not hold a JSON object; it was left as it is');
  return parsed as Record<string, unknown>;
}

/** Writes the entry into its file, keeping everything else; returns whether it replaced one. */
export function writeEntry(setup: SetupEntry, name: string): { replaced: boolean } {
  const { file, format } = setup;
  let text: string;
  let replaced: boolean;
  if (format.format === 'toml') {
    ({ text, replaced } = mergeTomlTable(
      existsSync(file) ? readFileSync(file, 'utf8') : '',
      format.key,
      name,
      tomlTable(format.key, name, setup.entry),
      file,
    ));
  } else {
    const document = readJsonObject(file);
    const servers = document[format.key] ?? {};
    if (servers === null || typeof servers !== 'object' || Array.isArray(servers))
      throw new ConfigError(file, `its "${format.key}" is not an object; it was left as it is`);
    replaced = Object.hasOwn(servers, name);
    document[format.key] = { ...(servers as Record<string, unknown>), [name]: setup.entry };
    text = `${JSON.stringify(document, null, 2)}\n`;
  }
  mkdirSync(dirname(file), { recursive: true });
  // Written beside it and renamed over it: the host never reads half a file.
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, file);
  return { replaced };
}

/** What `--print` shows: the document fragment to put in the host's file. */
export function printable(setup: SetupEntry, name: string): string {
  if (setup.format.format === 'toml') return tomlTable(setup.format.key, name, setup.entry);
  return `${JSON.stringify({ [setup.format.key]: { [name]: setup.entry } }, null, 2)}\n`;
}
