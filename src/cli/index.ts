#!/usr/bin/env node
/**
 * The `reservoir` command. It parses flags, calls the library, prints, and sets the exit code;
 * it adds no behaviour of its own.
 */
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Argument, Command, Option } from 'commander';
import { isReservoirError } from '../core/errors.js';
import { MAX_PAGE_SIZE, Registry } from '../core/registry.js';
import type { ResourceContents } from '../core/types.js';
import { SERVER_VERSION } from '../mcp/server.js';
import { sdkTemplateEngine } from '../mcp/templates.js';
import { createReservoir } from '../server/index.js';
import { createDeferredLogger, LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from '../server/logger.js';
import { builtinTools } from '../tools/index.js';
import { AccessPolicy } from '../core/access.js';
// What only some commands or configurations need (the config schema and loader, OAuth, reload,
// the git, sql and http providers) is imported where it is used, so `serve DIR` starts fast.
import { ConfigFileError, DEFAULT_CONFIG_FILE, DEFAULT_CONFIG_FILES } from '../config/basics.js';
import type { LoadedConfig } from '../config/load.js';
import { buildSources, mergeSettings, type Settings } from '../config/merge.js';
import type { ConfigReloader } from '../server/reload.js';
import { announceAfterFirstWrite } from './announce.js';
import { completionScript, SHELLS, type Shell } from './completion.js';
import { HOST_NAMES, HOSTS, printable, setupEntry, writeEntry, type Host } from './setup.js';
import {
  collect,
  commandLineOf,
  configFrom,
  filesProviders,
  findConfig,
  positiveInt,
  withConfigFlags,
  withSourceFlags,
  type ConfigFlags,
  type SourceFlags,
} from './options.js';

interface ServeFlags extends SourceFlags, ConfigFlags {
  http?: string | true;
  allowedHost: string[];
  pageSize?: number;
  maxBodyBytes?: number;
  anonymous?: boolean;
  git: string[];
  logLevel: LogLevel;
  logFormat: LogFormat;
  tools: boolean;
  tlsCert?: string;
  tlsKey?: string;
}

interface ListFlags extends SourceFlags, ConfigFlags {
  cursor?: string;
  limit?: number;
  pageSize?: number;
  json?: boolean;
}

interface ReadFlags extends SourceFlags, ConfigFlags {
  root: string[];
  json?: boolean;
}

const program = new Command()
  .name('reservoir')
  .description('Serve files, git repositories, SQL databases and HTTP APIs as MCP resources over stdio or Streamable HTTP.')
  .version(SERVER_VERSION)
  .showHelpAfterError('(run with --help for usage)');

withConfigFlags(
  withSourceFlags(
    program
      .command('serve')
      .description('serve directories, or what a config file declares, as MCP resources (stdio by default, or Streamable HTTP with --http)')
      .argument('[roots...]', 'directories to serve, after the config file\'s sources (name at least one when there is no config file; . for this one)')
      .option('--http [address]', 'serve Streamable HTTP at http://ADDRESS/mcp instead of stdio (default 127.0.0.1:7337)')
      .option('--allowed-host <name>', 'accept this Host/Origin name besides localhost (repeatable; needed when binding a non-loopback address)', collect, [])
      .option('--page-size <n>', `resources per list page, 1-${MAX_PAGE_SIZE} (default 1000)`, positiveInt)
      .option('--max-body-bytes <bytes>', 'largest HTTP request body (default 4194304 = 4 MiB)', positiveInt)
      .option('--no-tools', 'do not offer the built-in list_resources, read_resource and find_resources tools')
      .option('--anonymous', 'serve unauthenticated HTTP requests on a non-loopback address (without a config auth section)')
      .option('--git <path>', 'serve a git repository as git:// resources (repeatable)', collect, [])
      .option('--tls-cert <path>', 'serve HTTPS with this PEM certificate (with --tls-key; re-read when it changes)')
      .option('--tls-key <path>', 'the PEM private key of --tls-cert')
      .addOption(new Option('--log-level <level>', 'log level (logs go to stderr)').choices(LOG_LEVELS).default('info'))
      .addOption(new Option('--log-format <format>', 'pretty: coloured lines with local times; json: JSON lines; auto: pretty when stderr is a terminal').choices(LOG_FORMATS).default('auto')),
  ),
).action(async (roots: string[], flags: ServeFlags, command: Command) => {
  const config = await configFrom(flags);
  if (roots.length === 0 && config === undefined && flags.git.length === 0) throw new NothingToServe();
  const commandLine = commandLineOf(roots, flags, command);
  const settings = mergeSettings(config, commandLine);
  const logger = createDeferredLogger(settings.logLevel, flags.logFormat);
  const reservoir = createReservoir({
    logger,
    ...(settings.pageSize === undefined ? {} : { pageSize: settings.pageSize }),
    ...(settings.instructions === undefined ? {} : { instructions: settings.instructions }),
    ...(settings.access === undefined ? {} : { access: new AccessPolicy(settings.access) }),
    policy: {
      ...(config?.server.limits?.rateLimit === undefined ? {} : { rateLimit: config.server.limits.rateLimit }),
      // Over HTTP the per-principal caps always apply (their defaults when the config sets none);
      // over stdio the one local user is alone on its connection, and is capped only when asked.
      ...(config?.server.limits?.concurrency !== undefined
        ? { concurrency: config.server.limits.concurrency }
        : settings.http !== undefined
          ? { concurrency: {} }
          : {}),
      ...(config?.server.limits?.deadlineMs === undefined ? {} : { deadlineMs: config.server.limits.deadlineMs }),
      ...(config?.server.audit === undefined ? {} : { audit: config.server.audit }),
    },
  });
  const built = await buildSources(settings, logger);
  for (const provider of built.providers) reservoir.mount(provider);
  for (const tool of built.tools) reservoir.tools.add(tool);
  if (flags.tools) for (const tool of builtinTools(reservoir.registry)) reservoir.tools.add(tool);
  let reloader: ConfigReloader | undefined;
  if (config !== undefined) {
    const { applyPrompts, ConfigReloader } = await import('../server/reload.js');
    applyPrompts(reservoir, config);
    const setLogLevel = (level: LogLevel): void => void (logger.level = level);
    reloader = new ConfigReloader({ reservoir, config, settings, commandLine, logger, setLogLevel }).start();
  }
  const shutdown = async (why: string): Promise<void> => {
    logger.info({ why }, 'shutting down');
    reloader?.close();
    await reservoir.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));

  if (settings.http === undefined) {
    const sources = reservoir.registry.providers().map((p) => p.root);
    const announce = announceAfterFirstWrite(process.stdout, () => logger.info({ transport: 'stdio', sources }, `serving MCP over stdio: ${sources.join(', ')}`));
    const handle = reservoir.serveStdio();
    await handle.closed;
    announce();
    await shutdown('stdin closed');
    return;
  }
  const auth = settings.http.auth === undefined ? undefined : (await import('../http/auth.js')).createAuthenticator(settings.http.auth, { logger });
  const endpoint = await reservoir.listen({
    host: settings.http.host,
    port: settings.http.port,
    allowedHosts: settings.http.allowedHosts,
    ...(settings.http.maxBodyBytes === undefined ? {} : { maxBodyBytes: settings.http.maxBodyBytes }),
    ...(auth === undefined ? {} : { auth }),
    ...(settings.http.anonymous === true ? { anonymous: true } : {}),
    ...(settings.http.sessions === undefined ? {} : { sessions: settings.http.sessions }),
    ...(settings.http.tls === undefined ? {} : { tls: settings.http.tls }),
  });
  logger.info({ url: endpoint.url, roots: reservoir.registry.providers().map((p) => p.root) }, `serving MCP at ${endpoint.url}`);
});

withConfigFlags(program.command('check'))
  .description(`validate a config file (default ./${DEFAULT_CONFIG_FILE}) without serving: a one-line summary, or every problem and exit code 1`)
  .action(async (flags: ConfigFlags) => {
    const found = findConfig(flags);
    if (found === undefined) throw new ConfigFileError(DEFAULT_CONFIG_FILE, [`${DEFAULT_CONFIG_FILES.join(', ')}: no config file here; pass --config PATH`]);
    const { loadConfig } = await import('../config/load.js');
    const config = loadConfig(found.path, { display: found.display });
    const settings = mergeSettings(config, { roots: [], source: {} });
    await write(`${checkSummary(config, settings)}\n`);
  });

program
  .command('schema')
  .description('print the JSON Schema of the config file (the package ships it as schema/reservoir.schema.json)')
  .option('--path', 'instead, print the absolute path of the schema file this install ships (for an editor\'s $schema)')
  .action(async (flags: { path?: boolean }) => {
    if (flags.path === true) {
      await write(`${fileURLToPath(new URL('../../schema/reservoir.schema.json', import.meta.url))}\n`);
      return;
    }
    const { configJsonSchemaText } = await import('../config/json-schema.js');
    await write(configJsonSchemaText());
  });

withConfigFlags(
  withSourceFlags(
    program
      .command('list')
    .description('print the resources the server would list: URI, size, MIME type, last modified (tab-separated)')
      .argument('[roots...]', 'directories to list, after the config file\'s sources (default: . when there is no config file)')
      .option('--cursor <cursor>', 'start from a cursor printed by --json')
      .option('--limit <n>', 'stop after this many resources', positiveInt)
      .option('--page-size <n>', `resources per page, 1-${MAX_PAGE_SIZE}`, positiveInt)
      .option('--json', 'print one JSON object per resource, then {"nextCursor": …} if --limit cut the list'),
  ),
).action(async (roots: string[], flags: ListFlags, command: Command) => {
  const settings = mergeSettings(await configFrom(flags), commandLineOf(roots, flags, command));
  const registry = new Registry({ templateEngine: sdkTemplateEngine, ...(settings.pageSize === undefined ? {} : { pageSize: settings.pageSize }) });
  for (const provider of (await buildSources(settings)).providers) registry.mount(provider);
  const signal = new AbortController().signal;
  let cursor = flags.cursor;
  let printed = 0;
  const limit = flags.limit ?? Number.POSITIVE_INFINITY;
  do {
    const page = await registry.listResources(cursor, { signal }, { limit: Math.min(registry.pageSize, limit - printed) });
    const lines = page.items.map((r) =>
      flags.json === true ? JSON.stringify(r) : [r.uri, r.size ?? '', r.mimeType ?? '', r.annotations?.lastModified ?? ''].join('\t'),
    );
    if (lines.length > 0) await write(`${lines.join('\n')}\n`);
    printed += page.items.length;
    cursor = page.nextCursor;
  } while (cursor !== undefined && printed < limit);
  if (cursor !== undefined && flags.json === true) await write(`${JSON.stringify({ nextCursor: cursor })}\n`);
  await registry.close();
});

withConfigFlags(
  withSourceFlags(
    program
      .command('read')
      .description('print one resource: text as is, binary as raw bytes, a directory as a JSON listing')
      .argument('<uri>', 'the resource URI, e.g. file:///abs/path/to/file.md or db://app/schema')
      .option('--root <dir>', 'serve this root (repeatable; default: the config file\'s sources, else the directory holding the file)', collect, [])
      .option('--json', 'print the MCP read result as JSON'),
  ),
).action(async (uri: string, flags: ReadFlags) => {
  const registry = new Registry({ templateEngine: sdkTemplateEngine });
  // --root wins; else the config file's sources (every kind); else the file's own directory.
  const config = flags.root.length > 0 ? undefined : await configFrom(flags);
  const providers =
    config !== undefined
      ? (await buildSources(mergeSettings(config, { roots: [], source: {} }))).providers
      : filesProviders(flags.root.length > 0 ? flags.root : [defaultRootFor(uri)], flags);
  for (const provider of providers) registry.mount(provider);
  try {
    const result = await registry.read(uri, { signal: new AbortController().signal });
    if (flags.json === true) await write(`${JSON.stringify(result, null, 2)}\n`);
    else for (const content of result.contents) await write(render(content));
  } finally {
    await registry.close();
  }
});

program
  .command('setup')
  .description('write this install into an MCP host\'s config (Claude Desktop, VS Code, Cursor), serving the directories given')
  .addArgument(new Argument('<host>', 'the host').choices(HOSTS))
  .argument('[roots...]', 'directories the host may read')
  .option('--config <path>', 'serve this config file')
  .option('--name <name>', 'the server\'s name in the host', 'reservoir')
  .option('--project <dir>', 'Cursor, VS Code: write DIR/.cursor/mcp.json or DIR/.vscode/mcp.json instead of the user\'s file')
  .option('--print', 'print the entry and the file it belongs in, and write nothing')
  .action(async (host: Host, roots: string[], flags: { config?: string; name: string; project?: string; print?: boolean }) => {
    const setup = setupEntry({
      host,
      roots,
      name: flags.name,
      cwd: process.cwd(),
      env: process.env,
      platform: process.platform,
      ...(flags.config === undefined ? {} : { config: flags.config }),
      ...(flags.project === undefined ? {} : { project: flags.project }),
    });
    if (flags.print === true) {
      process.stderr.write(`# ${HOST_NAMES[host]} reads ${setup.file}; merge this into it:\n`);
      await write(printable(setup, flags.name));
      return;
    }
    const { replaced } = writeEntry(setup, flags.name);
    await write(`${replaced ? 'replaced' : 'added'} "${flags.name}" in ${setup.file}; restart ${HOST_NAMES[host]} to load it\n`);
  });

program
  .command('completion')
  .description('print a shell completion script (bash: source it; zsh: save as _reservoir on $fpath; fish: save in ~/.config/fish/completions)')
  .addArgument(new Argument('<shell>', 'the shell').choices(SHELLS))
  .action(async (shell: Shell) => {
    await write(completionScript(program, shell));
  });

program
  .command('token')
  .description('print a new random bearer token and its sha256 digest (put the digest in server.http.auth.tokens)')
  .option('--hash', 'instead, read a token from stdin and print only its sha256 digest')
  .action(async (flags: { hash?: boolean }) => {
    const { generateToken, hashToken } = await import('../http/auth.js');
    if (flags.hash !== true) {
      const { token, sha256 } = generateToken();
      await write(`token:  ${token}\nsha256: ${sha256}\n`);
      return;
    }
    // From stdin, so the token stays out of shell history and process listings.
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    await write(`${hashToken(Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, ''))}\n`);
  });

function render(content: ResourceContents): string | Buffer {
  if ('blob' in content) return Buffer.from(content.blob, 'base64');
  if (content.mimeType === 'inode/directory') return `${JSON.stringify(JSON.parse(content.text), null, 2)}\n`;
  return content.text;
}

/** For `read` without --root: the file's own directory (or the directory itself). */
function defaultRootFor(uri: string): string {
  let path: string;
  try {
    path = fileURLToPath(uri);
  } catch {
    return '.';
  }
  return uri.endsWith('/') ? path : dirname(path);
}

/**
 * `reservoir serve` with no directory, no config file and no repository: serving the working
 * directory by default would serve whatever the host started it in (often `/` or the home
 * directory), so it refuses and shows how to name one, as the reference filesystem server does.
 */
class NothingToServe extends Error {
  constructor() {
    super(
      [
        'reservoir serve: nothing to serve: name the directories to serve, or write a reservoir.yaml here.',
        'Usage: reservoir serve DIR [DIR...]        e.g. reservoir serve ~/notes ~/src/project',
        '       reservoir serve .                   serve the current directory (' + process.cwd() + ')',
        '       reservoir serve --config FILE       serve what a config file declares',
        '       reservoir serve --git REPO          serve a git repository',
        '',
      ].join('\n'),
    );
    this.name = 'NothingToServe';
  }
}

function write(chunk: string | Buffer): Promise<void> {
  return new Promise((resolve, reject) => process.stdout.write(chunk, (error) => (error ? reject(error) : resolve())));
}

/** `reservoir check`'s line: what the file declares and how it would serve. */
function checkSummary(config: LoadedConfig, settings: Settings): string {
  const count = (n: number, what: string): string => `${n} ${what}${n === 1 ? '' : 's'}`;
  const serving = settings.http === undefined ? 'stdio' : `${settings.http.tls === undefined ? 'http' : 'https'}://${settings.http.host}:${settings.http.port}/mcp`;
  return `${config.display}: valid (${count(config.sources.length + config.otherSources.length, 'source')}, ${count(config.prompts.length, 'prompt')}; serves ${serving})`;
}

program.parseAsync(process.argv).catch((error: unknown) => {
  if (error instanceof NothingToServe) {
    process.stderr.write(error.message);
    process.exitCode = 1;
    return;
  }
  if (error instanceof ConfigFileError) {
    process.stderr.write(`${error.problems.join('\n')}\n`);
  } else {
    const message = isReservoirError(error) || error instanceof Error ? error.message : String(error);
    process.stderr.write(`reservoir: ${message}\n`);
  }
  process.exitCode = 1;
});
