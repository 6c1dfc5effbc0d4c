#!/usr/bin/env node
/**
 * The `reservoir` command. It parses flags, calls the library, prints, and sets the exit code;
 * it adds no behaviour of its own.
 */
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Argument, Command, Option } from 'commander';
import type { Cluster } from '../cluster/index.js';
import { ConfigError, isReservoirError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { MAX_PAGE_SIZE, Registry } from '../core/registry.js';
import type { ResourceContents } from '../core/types.js';
import { SERVER_VERSION } from '../mcp/server.js';
import { sdkTemplateEngine } from '../mcp/templates.js';
import { createReservoir } from '../server/index.js';
import { Shutdown } from '../server/shutdown.js';
import { createDeferredLogger, LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from '../server/logger.js';
import { builtinTools, whoAmITool } from '../tools/index.js';
import { AccessPolicy } from '../core/access.js';
// What only some commands or configurations need (the config schema and loader, OAuth, reload,
// the git, sql and http providers) is imported where it is used, so `serve DIR` starts fast.
import { ConfigFileError, DEFAULT_CONFIG_FILE, DEFAULT_CONFIG_FILES } from '../config/basics.js';
import type { LoadedConfig } from '../config/load.js';
import { mergeSettings, type Settings } from '../config/merge.js';
import { hiddenOf, reservedUnderRoots, servedRoots } from '../config/reserved.js';
import { buildSources } from '../server/sources.js';
import { checkSkills, registerSkillsCommands } from './skills.js';
import type { ConfigReloader } from '../server/reload.js';
import { cursorKey } from '../search/state-dir.js';
import { addSearchCommands, searchSettingsOf, stateDirOf } from './search.js';
import { announceAfterFirstWrite } from './announce.js';
import { completionScript, SHELLS, type Shell } from './completion.js';
import { HOSTS, printable, setupEntry, variablesNote, writeEntry, type Host } from './setup.js';
import {
  collect,
  commandLineOf,
  configFrom,
  filesProviders,
  findConfig,
  nonNegativeInt,
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
  shutdownGraceMs?: number;
  anonymous?: boolean;
  git: string[];
  skills: string[];
  logLevel: LogLevel;
  logFormat: LogFormat;
  tools: boolean;
  tlsCert?: string;
  tlsKey?: string;
  ui: boolean;
  search: boolean;
  stateDir?: string;
  redis?: string;
  secretFile?: string;
}

interface ListFlags extends SourceFlags, ConfigFlags {
  cursor?: string;
  limit?: number;
  pageSize?: number;
  json?: boolean;
  stateDir?: string;
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
      .option('--shutdown-grace-ms <ms>', 'on SIGTERM/SIGINT or the end of stdin, wait this long for the requests in flight to be answered before exiting; a second signal exits at once (default 10000)', nonNegativeInt)
      .option('--no-tools', 'do not offer the built-in list_resources, read_resource, find_resources and search_resources tools')
      .option('--no-ui', 'do not serve the explorer (the browser page at /ui/) with --http')
      .option('--no-search', 'do not offer search_resources (the full-text index)')
      .option('--state-dir <dir>', "where search indexes and the cursor key live (default: server.stateDir, else the platform's cache directory)")
      .option('--anonymous', 'serve unauthenticated HTTP requests on a non-loopback address (without a config auth section)')
      .option('--git <path>', 'serve a git repository as git:// resources (repeatable)', collect, [])
      .option('--skills <dir>', 'serve a folder of Agent Skills (skill folders with a SKILL.md) with the skills extension (repeatable)', collect, [])
      .option('--tls-cert <path>', 'serve HTTPS with this PEM certificate (with --tls-key; re-read when it changes)')
      .option('--tls-key <path>', 'the PEM private key of --tls-cert')
      .option('--redis <url>', 'cluster mode: share sessions, limits, change events and source polling with other instances on this Redis (redis:// or rediss://); needs a shared secret')
      .option('--secret-file <path>', 'read the secret every instance shares (cursor and request-state signing) from this file; else RESERVOIR_SECRET, else server.secret')
      .addOption(new Option('--log-level <level>', 'log level (logs go to stderr)').choices(LOG_LEVELS).default('info'))
      .addOption(new Option('--log-format <format>', 'pretty: coloured lines with local times; json: JSON lines; auto: pretty when stderr is a terminal').choices(LOG_FORMATS).default('auto')),
  ),
).action(async (roots: string[], flags: ServeFlags, command: Command) => {
  const config = await configFrom(flags);
  if (roots.length === 0 && config === undefined && flags.git.length === 0 && (flags.skills ?? []).length === 0) throw new NothingToServe();
  const commandLine = commandLineOf(roots, flags, command);
  const settings = mergeSettings(config, commandLine);
  const logger = createDeferredLogger(settings.logLevel, flags.logFormat);
  const skills = settings.skills.length === 0 ? undefined : await (await import('../server/skills.js')).buildSkills(settings.skills, { logger, live: true, ...hiddenOf(settings.reserved) });
  const stateDir = stateDirOf(flags, config);
  const searchOn = flags.search && config?.search?.enabled !== false;
  const { secret, cluster } = await clusterFrom(flags, config, logger);
  const reservoir = createReservoir({
    logger,
    ...(skills === undefined ? {} : { skills }),
    explorerApp: true,
    // A shared secret keys cursors alike on every instance; without one, the state directory keeps a key.
    ...(secret === undefined ? persistentCursors(stateDir, logger) : { secret }),
    ...(cluster === undefined ? {} : { cluster }),
    ...(searchOn ? { search: searchSettingsOf(config, stateDir) } : {}),
    ...(settings.pageSize === undefined ? {} : { pageSize: settings.pageSize }),
    ...(settings.sourceListTimeoutMs === undefined ? {} : { sourceListTimeoutMs: settings.sourceListTimeoutMs }),
    ...(settings.instructions === undefined ? {} : { instructions: settings.instructions }),
    ...(settings.shutdownGraceMs === undefined ? {} : { shutdownGraceMs: settings.shutdownGraceMs }),
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
  // A source its own checks reject (a SQL role sql_query refuses) is logged now, not at its first query.
  void (await import('../server/startup-checks.js')).reportMisconfiguredSources(built.providers, logger);
  const search = reservoir.search;
  if (flags.tools) for (const tool of builtinTools(reservoir.registry, search === undefined ? {} : { search: { open: () => search.open() } })) reservoir.tools.add(tool);
  // The explorer's "who am I" panel asks the server itself, like any client would.
  if (settings.http?.ui === true) reservoir.tools.add(whoAmITool(reservoir.registry));
  let reloader: ConfigReloader | undefined;
  if (config !== undefined) {
    const { applyPrompts, ConfigReloader } = await import('../server/reload.js');
    applyPrompts(reservoir, config);
    const setLogLevel = (level: LogLevel): void => void (logger.level = level);
    reloader = new ConfigReloader({ reservoir, config, settings, commandLine, logger, setLogLevel, running: built.running }).start();
  }
  // The first SIGTERM/SIGINT drains (the requests taken are answered within the grace period) and exits 0; a second exits at once.
  const shutdown = new Shutdown({ server: reservoir, logger, onDrainStart: () => reloader?.close() }).install();

  if (settings.http === undefined) {
    const sources = reservoir.registry.providers().map((p) => p.root);
    const announce = announceAfterFirstWrite(process.stdout, () => logger.info({ transport: 'stdio', sources }, `serving MCP over stdio: ${sources.join(', ')}`));
    const handle = reservoir.serveStdio();
    // The end of input drains the connection (every line read is answered), then the server shuts down.
    await handle.closed;
    announce();
    await shutdown.run('stdin closed');
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
    ui: settings.http.ui,
  });
  logger.info({ url: endpoint.url, roots: reservoir.registry.providers().map((p) => p.root) }, `serving MCP at ${endpoint.url}`);
});

// `reservoir serve …`, the command every MCP host spawns, needs no other command defined: the rest
// are defined only for the other commands (and for `--help`, completion and unknown commands), so a
// host's server answers sooner.
if (process.argv[2] !== 'serve') defineOtherCommands();

/** Every command but `serve`. */
function defineOtherCommands(): void {
  withConfigFlags(program.command('check'))
    .description(`validate a config file (default ./${DEFAULT_CONFIG_FILE}) without serving: a one-line summary, or every problem and exit code 1`)
    .option('--connect', 'also connect to every source and report each: its latency, or why it cannot answer (exit code 1 if any cannot)')
    .action(async (flags: ConfigFlags & { connect?: boolean }) => {
      const found = findConfig(flags);
      if (found === undefined) throw new ConfigFileError(DEFAULT_CONFIG_FILE, [`${DEFAULT_CONFIG_FILES.join(', ')}: no config file here; pass --config PATH`]);
      const { loadConfig } = await import('../config/load.js');
      const config = loadConfig(found.path, { display: found.display });
      const settings = mergeSettings(config, { roots: [], source: {} });
      const skills = config.skills.length === 0 ? undefined : await checkSkills(config);
      for (const line of skills?.lines ?? []) process.stderr.write(`${line}\n`);
      if (skills?.failed === true) {
        process.exitCode = 1;
        return;
      }
      for (const line of config.access === undefined ? [] : await checkAccess(config, settings)) process.stderr.write(`warning: ${line}\n`);
      for (const line of reservedUnderRoots(settings.reserved, servedRoots(settings))) process.stderr.write(`${line}\n`);
      await write(`${checkSummary(config, settings)}\n`);
      if (flags.connect === true) {
        const { connectEverySource, connectLines } = await import('./check-connect.js');
        const reports = await connectEverySource(settings);
        await write(`${connectLines(reports).join('\n')}\n`);
        if (reports.some((report) => !report.ok)) process.exitCode = 1;
      }
    });

  registerSkillsCommands(program, write);

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
        .option('--json', 'print one JSON object per resource, then {"nextCursor": …} if --limit cut the list')
        .option('--state-dir <dir>', "where the cursor key lives, so a cursor works in the next run (default: server.stateDir, else the platform's cache directory)"),
    ),
  ).action(async (roots: string[], flags: ListFlags, command: Command) => {
    const config = await configFrom(flags);
    const settings = mergeSettings(config, commandLineOf(roots, flags, command));
    const registry = new Registry({
      templateEngine: sdkTemplateEngine,
      ...persistentCursors(stateDirOf(flags, config), createDeferredLogger('warn')),
      ...(settings.pageSize === undefined ? {} : { pageSize: settings.pageSize }),
      ...(settings.sourceListTimeoutMs === undefined ? {} : { sourceListTimeoutMs: settings.sourceListTimeoutMs }),
    });
    for (const provider of (await buildSources(settings)).providers) registry.mount(provider);
    const signal = new AbortController().signal;
    let cursor = flags.cursor;
    let printed = 0;
    const limit = flags.limit ?? Number.POSITIVE_INFINITY;
    const skipped = new Map<string, string>();
    do {
      const page = await registry.listResources(cursor, { signal }, { limit: Math.min(registry.pageSize, limit - printed) });
      for (const source of page.skipped ?? []) skipped.set(source.source, source.reason);
      const lines = page.items.map((r) =>
        flags.json === true ? JSON.stringify(r) : [r.uri, r.size ?? '', r.mimeType ?? '', r.annotations?.lastModified ?? ''].join('\t'),
      );
      if (lines.length > 0) await write(`${lines.join('\n')}\n`);
      printed += page.items.length;
      cursor = page.nextCursor;
    } while (cursor !== undefined && printed < limit);
    if (cursor !== undefined && flags.json === true) await write(`${JSON.stringify({ nextCursor: cursor })}\n`);
    for (const [source, reason] of skipped) {
      // The operator runs this: name the source's own failure (credentials removed), as /readyz and the log do.
      const why = registry.health.outage(source)?.message ?? reason;
      process.stderr.write(`reservoir list: left out ${source}: ${why} (${reason}); its resources are missing\n`);
    }
    if (skipped.size > 0) process.exitCode = 1;
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
    .description('write this install into an MCP host\'s config (Claude Desktop, Claude Code, VS Code, Cursor, Gemini CLI, Codex CLI), serving the directories given')
    .addArgument(new Argument('<host>', 'the host').choices(HOSTS))
    .argument('[roots...]', 'directories the host may read')
    .option('--config <path>', 'serve this config file (validated; ${VAR} references not set here are passed through to the host)')
    .option('--name <name>', 'the server\'s name in the host', 'reservoir')
    .option('--project <dir>', 'write the project\'s file in DIR (.mcp.json, .vscode/mcp.json, .cursor/mcp.json, .gemini/settings.json, .codex/config.toml) instead of the user\'s')
    .option('--print', 'print the entry and the file it belongs in, and write nothing')
    .action(async (host: Host, roots: string[], flags: { config?: string; name: string; project?: string; print?: boolean }) => {
      const setup = await setupEntry({
        host,
        roots,
        name: flags.name,
        cwd: process.cwd(),
        env: process.env,
        platform: process.platform,
        ...(flags.config === undefined ? {} : { config: flags.config }),
        ...(flags.project === undefined ? {} : { project: flags.project }),
      });
      process.stderr.write(variablesNote(setup));
      if (flags.print === true) {
        process.stderr.write(`# ${setup.format.title} reads ${setup.file}; merge this into it:\n`);
        await write(printable(setup, flags.name));
        return;
      }
      const { replaced } = writeEntry(setup, flags.name);
      await write(`${replaced ? 'replaced' : 'added'} "${flags.name}" in ${setup.file}; restart ${setup.format.title} to load it\n`);
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
    .description('print a new random bearer token and its sha256 digest (put the digest in server.http.auth.tokens); a token also serves as the shared secret of cluster mode (RESERVOIR_SECRET)')
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

  addSearchCommands(program, write, () => createDeferredLogger('warn'));
}

/**
 * The cursor key kept in the state directory, so a cursor printed by one run (`list --json`, a
 * client across a restart) works in the next. When the directory cannot be written, cursors fall
 * back to a per-process key, with one warning.
 */
function persistentCursors(stateDir: string, logger: { warn(obj: unknown, msg?: string): void }): { cursorSecret?: Uint8Array } {
  try {
    return { cursorSecret: cursorKey(stateDir) };
  } catch (error) {
    logger.warn({ err: error, stateDir }, 'cannot keep the cursor key in the state directory; cursors will not outlive this process');
    return {};
  }
}

/**
 * The shared secret and cluster membership the flags, environment and config ask for. The cluster
 * code (and the Redis client) is loaded only when one is asked for.
 */
async function clusterFrom(flags: ServeFlags, config: LoadedConfig | undefined, logger: Logger): Promise<{ secret?: string; cluster?: Cluster }> {
  const env = process.env['RESERVOIR_SECRET'];
  const redis = flags.redis !== undefined ? { url: flags.redis } : config?.server.redis;
  const secretGiven = flags.secretFile !== undefined || (env !== undefined && env !== '') || config?.server.secret !== undefined;
  if (!secretGiven && redis === undefined) return {};
  const { redisOptions, requireSecret, resolveSecret } = await import('../cluster/options.js');
  const secret = resolveSecret({
    ...(flags.secretFile === undefined ? {} : { file: flags.secretFile }),
    ...(env === undefined ? {} : { env }),
    ...(config?.server.secret === undefined ? {} : { config: config.server.secret }),
  });
  if (redis === undefined) return secret === undefined ? {} : { secret };
  const parsed = redisOptions.safeParse(redis);
  if (!parsed.success) throw new ConfigError(flags.redis !== undefined ? '--redis' : 'server.redis', parsed.error.issues.map((i) => i.message).join('; '));
  requireSecret(secret);
  const { createCluster } = await import('../cluster/index.js');
  return { secret: secret!, cluster: createCluster({ ...parsed.data, secret: secret!, logger }) };
}

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
        '       reservoir serve --skills DIR        serve a folder of Agent Skills',
        '',
      ].join('\n'),
    );
    this.name = 'NothingToServe';
  }
}

function write(chunk: string | Buffer): Promise<void> {
  return new Promise((resolve, reject) => process.stdout.write(chunk, (error) => (error ? reject(error) : resolve())));
}

/**
 * `reservoir check`'s warnings about access rules that can match nothing, judged against the roots
 * the sources would mount (built, never opened, then closed; without them, only the patterns).
 */
async function checkAccess(config: LoadedConfig, settings: Settings): Promise<string[]> {
  const { accessWarnings } = await import('../config/access-lint.js');
  let roots: string[] | undefined;
  try {
    const { providers } = await buildSources(settings);
    roots = providers.map((p) => p.root);
    await Promise.allSettled(providers.map((p) => p.close?.()));
    for (const entry of config.skills) roots.push(entry.prefix === undefined ? 'skill://' : `skill://${entry.prefix}/`);
  } catch {
    roots = undefined;
  }
  return accessWarnings(config.access!, roots);
}

/** `reservoir check`'s line: what the file declares and how it would serve. */
function checkSummary(config: LoadedConfig, settings: Settings): string {
  const count = (n: number, what: string): string => `${n} ${what}${n === 1 ? '' : 's'}`;
  const serving = settings.http === undefined ? 'stdio' : `${settings.http.tls === undefined ? 'http' : 'https'}://${settings.http.host}:${settings.http.port}/mcp`;
  const skills = config.skills.length === 0 ? '' : `, ${count(config.skills.length, 'skills catalog')}`;
  return `${config.display}: valid (${count(config.sources.length + config.otherSources.length, 'source')}, ${count(config.prompts.length, 'prompt')}${skills}; serves ${serving})`;
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
