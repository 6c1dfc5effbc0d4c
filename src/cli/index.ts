#!/usr/bin/env node
/**
 * The `reservoir` command. It parses flags, calls the composition root in server/ (`serve` →
 * server/compose.ts; list, read, search, index, check → server/open.ts), prints, and sets the exit
 * code; it adds no behaviour of its own.
 */
import { fileURLToPath } from 'node:url';
import { Argument, Command, Option } from 'commander';
import { isReservoirError } from '../core/errors.js';
import { MAX_PAGE_SIZE } from '../core/registry.js';
import { SERVER_VERSION } from '../mcp/server.js';
import { serve } from '../server/compose.js';
import {
  LOG_FORMATS,
  LOG_LEVELS,
  createDeferredLogger,
  type LogFormat,
  type LogLevel,
} from '../server/logger.js';
// What only some commands or configurations need (the config schema and loader, OAuth, reload,
// the git, sql and http providers) is imported where it is used, so `serve DIR` starts fast.
import { ConfigFileError } from '../config/basics.js';
import { registerCheckCommand } from './check.js';
import { registerListCommand, registerReadCommand } from './list-read.js';
import { registerSkillsCommands } from './skills.js';
import { addSearchCommands } from './search.js';
import { completionScript, SHELLS, type Shell } from './completion.js';
import { HOSTS, printable, setupEntry, variablesNote, writeEntry, type Host } from './setup.js';
import {
  collect,
  commandLineOf,
  configFrom,
  nonNegativeInt,
  positiveInt,
  withConfigFlags,
  withSourceFlags,
  type ConfigFlags,
  type SourceFlags,
} from './options.js';
import { write } from './write.js';

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

const program = new Command()
  .name('reservoir')
  .description(
    'Serve files, git repositories, SQL databases and HTTP APIs as MCP resources over stdio or Streamable HTTP.',
  )
  .version(SERVER_VERSION)
  .showHelpAfterError('(run with --help for usage)');

withConfigFlags(
  withSourceFlags(
    program
      .command('serve')
      .description(
        'serve directories, or what a config file declares, as MCP resources (stdio by default, or Streamable HTTP with --http)',
      )
      .argument(
        '[roots...]',
        "directories to serve, after the config file's sources (name at least one when there is no config file; . for this one)",
      )
      .option(
        '--http [address]',
        'serve Streamable HTTP at http://ADDRESS/mcp instead of stdio (default 127.0.0.1:7337)',
      )
      .option(
        '--allowed-host <name>',
        'accept this Host/Origin name besides localhost (repeatable; needed when binding a non-loopback address)',
        collect,
        [],
      )
      .option(
        '--page-size <n>',
        `resources per list page, 1-${MAX_PAGE_SIZE} (default 1000)`,
        positiveInt,
      )
      .option(
        '--max-body-bytes <bytes>',
        'largest HTTP request body (default 4194304 = 4 MiB)',
        positiveInt,
      )
      .option(
        '--shutdown-grace-ms <ms>',
        'on SIGTERM/SIGINT or the end of stdin, wait this long for the requests in flight to be answered before exiting; a second signal exits at once (default 10000)',
        nonNegativeInt,
      )
      .option(
        '--no-tools',
        'do not offer the built-in list_resources, read_resource, find_resources and search_resources tools',
      )
      .option('--no-ui', 'do not serve the explorer (the browser page at /ui/) with --http')
      .option('--no-search', 'do not offer search_resources (the full-text index)')
      .option(
        '--state-dir <dir>',
        "where search indexes and the cursor key live (default: server.stateDir, else the platform's cache directory)",
      )
      .option(
        '--anonymous',
        'serve unauthenticated HTTP requests on a non-loopback address (without a config auth section)',
      )
      .option(
        '--git <path>',
        'serve a git repository as git:// resources (repeatable)',
        collect,
        [],
      )
      .option(
        '--skills <dir>',
        'serve a folder of Agent Skills (skill folders with a SKILL.md) with the skills extension (repeatable)',
        collect,
        [],
      )
      .option(
        '--tls-cert <path>',
        'serve HTTPS with this PEM certificate (with --tls-key; re-read when it changes)',
      )
      .option('--tls-key <path>', 'the PEM private key of --tls-cert')
      .option(
        '--redis <url>',
        'cluster mode: share sessions, limits, change events and source polling with other instances on this Redis (redis:// or rediss://); needs a shared secret',
      )
      .option(
        '--secret-file <path>',
        'read the secret every instance shares (cursor and request-state signing) from this file; else RESERVOIR_SECRET, else server.secret',
      )
      .addOption(
        new Option('--log-level <level>', 'log level (logs go to stderr)')
          .choices(LOG_LEVELS)
          .default('info'),
      )
      .addOption(
        new Option(
          '--log-format <format>',
          'pretty: coloured lines with local times; json: JSON lines; auto: pretty when stderr is a terminal',
        )
          .choices(LOG_FORMATS)
          .default('auto'),
      ),
  ),
).action(async (roots: string[], flags: ServeFlags, command: Command) => {
  const config = await configFrom(flags);
  if (
    roots.length === 0 &&
    config === undefined &&
    flags.git.length === 0 &&
    (flags.skills ?? []).length === 0
  )
    throw new NothingToServe();
  await serve({
    config,
    commandLine: commandLineOf(roots, flags, command),
    logFormat: flags.logFormat,
    tools: flags.tools,
    search: flags.search,
    redis: flags.redis,
    secretEnv: process.env['RESERVOIR_SECRET'],
  });
});

// `reservoir serve …`, the command every MCP host spawns, needs no other command defined: the rest
// are defined only for the other commands (and for `--help`, completion and unknown commands), so a
// host's server answers sooner.
if (process.argv[2] !== 'serve') defineOtherCommands();

/** Every command but `serve`. */
function defineOtherCommands(): void {
  registerCheckCommand(program);

  registerSkillsCommands(program, write);

  program
    .command('schema')
    .description(
      'print the JSON Schema of the config file (the package ships it as schema/reservoir.schema.json)',
    )
    .option(
      '--path',
      "instead, print the absolute path of the schema file this install ships (for an editor's $schema)",
    )
    .action(async (flags: { path?: boolean }) => {
      if (flags.path === true) {
        await write(
          `${fileURLToPath(new URL('../../schema/reservoir.schema.json', import.meta.url))}\n`,
        );
        return;
      }
      const { configJsonSchemaText } = await import('../config/json-schema.js');
      await write(configJsonSchemaText());
    });

  registerListCommand(program);
  registerReadCommand(program);

  program
    .command('setup')
    .description(
      "write this install into an MCP host's config (Claude Desktop, Claude Code, VS Code, Cursor, Gemini CLI, Codex CLI), serving the directories given",
    )
    .addArgument(new Argument('<host>', 'the host').choices(HOSTS))
    .argument('[roots...]', 'directories the host may read')
    .option(
      '--config <path>',
      'serve this config file (validated; ${VAR} references not set here are passed through to the host)',
    )
    .option('--name <name>', "the server's name in the host", 'reservoir')
    .option(
      '--project <dir>',
      "write the project's file in DIR (.mcp.json, .vscode/mcp.json, .cursor/mcp.json, .gemini/settings.json, .codex/config.toml) instead of the user's",
    )
    .option('--print', 'print the entry and the file it belongs in, and write nothing')
    .action(
      async (
        host: Host,
        roots: string[],
        flags: { config?: string; name: string; project?: string; print?: boolean },
      ) => {
        const setup = await setupEntry({
          host,
          roots,
          name: flags.name,
          cwd: process.cwd(),
          env: process.env,
          platform: process.platform,
          config: flags.config,
          project: flags.project,
        });
        process.stderr.write(variablesNote(setup));
        if (flags.print === true) {
          process.stderr.write(
            `# ${setup.format.title} reads ${setup.file}; merge this into it:\n`,
          );
          await write(printable(setup, flags.name));
          return;
        }
        const { replaced } = writeEntry(setup, flags.name);
        await write(
          `${replaced ? 'replaced' : 'added'} "${flags.name}" in ${setup.file}; restart ${setup.format.title} to load it\n`,
        );
      },
    );

  program
    .command('completion')
    .description(
      'print a shell completion script (bash: source it; zsh: save as _reservoir on $fpath; fish: save in ~/.config/fish/completions)',
    )
    .addArgument(new Argument('<shell>', 'the shell').choices(SHELLS))
    .action(async (shell: Shell) => {
      await write(completionScript(program, shell));
    });

  program
    .command('token')
    .description(
      'print a new random bearer token and its sha256 digest (put the digest in server.http.auth.tokens); a token also serves as the shared secret of cluster mode (RESERVOIR_SECRET)',
    )
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
      await write(
        `${hashToken(
          Buffer.concat(chunks)
            .toString('utf8')
            .replace(/\r?\n$/, ''),
        )}\n`,
      );
    });

  addSearchCommands(program, write, () => createDeferredLogger('warn'));
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
        '       reservoir serve .                   serve the current directory (' +
          process.cwd() +
          ')',
        '       reservoir serve --config FILE       serve what a config file declares',
        '       reservoir serve --git REPO          serve a git repository',
        '       reservoir serve --skills DIR        serve a folder of Agent Skills',
        '',
      ].join('\n'),
    );
    this.name = 'NothingToServe';
  }
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
    const message =
      isReservoirError(error) || error instanceof Error ? error.message : String(error);
    process.stderr.write(`reservoir: ${message}\n`);
  }
  process.exitCode = 1;
});
