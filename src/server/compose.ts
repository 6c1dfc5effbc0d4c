/**
 * The composition root of `reservoir serve`: from the config file and the command line it builds
 * the logger, the skills catalogs, the cluster and secret, the policy, the Reservoir (Registry,
 * search, tools), every source (server/sources.ts, through the provider catalog), prompts and
 * reload, the drain on shutdown, and the transport. The CLI parses flags into a ServeRequest and
 * calls `serve`; the one-shot commands build the same sources through server/open.ts.
 */
import { DocumentRenderer } from '../documents/index.js';
import { DocumentReads } from '../documents/reads.js';
import type { LoadedConfig } from '../config/load.js';
import { announceAfterFirstWrite } from './announce.js';
import { mergeSettings, type CommandLine, type Settings } from '../config/merge.js';
import { hiddenOf, stateDirFor } from '../config/reserved.js';
import { AccessPolicy } from '../core/access.js';
import { ResourceHints } from '../core/hints.js';
import type { LogLevel } from '../core/log.js';
import { builtinTools, whoAmITool } from '../tools/index.js';
import { offerTemplateTools } from './template-tools.js';
import { createReservoir, type Reservoir, type ReservoirOptions } from './index.js';
import { createDeferredLogger, type LevelledLogger, type LogFormat } from './logger.js';
import type { PolicyOptions } from './policy.js';
import type { ConfigReloader } from './reload.js';
import { searchSettingsOf } from './search-settings.js';
import { persistentCursorKey, secretAndCluster } from './secret.js';
import { definedProps } from '../core/defined.js';
import { Shutdown } from './shutdown.js';
import { buildSources } from './sources.js';

/** What `reservoir serve` was asked for. */
export interface ServeRequest {
  /** The config file, loaded; absent without one. */
  config: LoadedConfig | undefined;
  /** What the command line gave explicitly. */
  commandLine: CommandLine;
  logFormat: LogFormat;
  /** Offer the built-in tools (`--no-tools` turns them off). */
  tools: boolean;
  /** Offer search (`--no-search` turns it off; so does `search.enabled: false`). */
  search: boolean;
  /** `--redis URL`. */
  redis?: string | undefined;
  /** RESERVOIR_SECRET. */
  secretEnv?: string | undefined;
}

/** A composed server, not yet serving. */
export interface ComposedServer {
  reservoir: Reservoir;
  settings: Settings;
  logger: LevelledLogger;
  reloader: ConfigReloader | undefined;
  shutdown: Shutdown;
}

/** Builds everything the request describes; the caller starts the transport (`serveComposed`). */
export async function composeServer(request: ServeRequest): Promise<ComposedServer> {
  const { config, commandLine } = request;
  const settings = mergeSettings(config, commandLine);
  const logger = createDeferredLogger(settings.logLevel, request.logFormat);
  const skills =
    settings.skills.length === 0
      ? undefined
      : await (
          await import('./skills.js')
        ).buildSkills(settings.skills, { logger, live: true, ...hiddenOf(settings.reserved) });
  const stateDir = stateDirFor(commandLine.stateDir, config);
  const searchOn = request.search && config?.search?.enabled !== false;
  const { secret, cluster } = await secretAndCluster(
    { redis: request.redis, secretFile: commandLine.secretFile, env: request.secretEnv },
    config,
    logger,
  );
  const options: ReservoirOptions = {
    logger,
    // logging/setLevel (2025 era) and per-request log levels (2026-07-28): the server's records go
    // to the clients that ask, as well as to stderr.
    logging: true,
    skills,
    explorerApp: true,
    // The process is the server's own: memory a burst left goes back once it is quiet (unless the
    // config's server.memoryReducer says otherwise).
    memoryReducer: settings.memoryReducer ?? true,
    // A shared secret keys cursors alike on every instance; without one, the state directory keeps a key.
    ...definedProps({
      secret,
      cursorSecret: secret === undefined ? persistentCursorKey(stateDir, logger) : undefined,
    }),
    cluster,
    search: searchOn ? searchSettingsOf(config, stateDir) : undefined,
    pageSize: settings.pageSize,
    sourceListTimeoutMs: settings.sourceListTimeoutMs,
    instructions: settings.instructions,
    presentation: settings.presentation,
    hints: new ResourceHints(config?.hints),
    shutdownGraceMs: settings.shutdownGraceMs,
    access: settings.access === undefined ? undefined : new AccessPolicy(settings.access),
    policy: policyOf(config, settings),
    // Loaded only when the config sets caps: serving without them reads none of it.
    blobCaps:
      config?.server.limits?.blobCaps === undefined
        ? undefined
        : new (await import('../core/blob-caps.js')).BlobCaps(config.server.limits.blobCaps),
    reads: new DocumentReads(new DocumentRenderer({ stateDir })),
  };
  const reservoir = createReservoir(options);
  // From here on, records go through the Reservoir's logger: to stderr and to the clients that ask.
  const built = await buildSources(settings, reservoir.logger);
  for (const provider of built.providers) reservoir.mount(provider);
  for (const tool of built.tools) reservoir.tools.add(tool);
  // A source its own checks reject (a SQL role sql_query refuses) is logged now, not at its first query.
  void (await import('./startup-checks.js')).reportMisconfiguredSources(
    built.providers,
    reservoir.logger,
  );
  const search = reservoir.search;
  if (request.tools)
    for (const tool of builtinTools(
      reservoir.registry,
      search === undefined ? {} : { search: { open: () => search.open() } },
    ))
      reservoir.tools.add(tool);
  // The explorer's "who am I" panel asks the server itself, like any client would.
  if (settings.http?.ui === true) reservoir.tools.add(whoAmITool(reservoir.registry));
  const fromTemplates =
    config?.tools?.fromTemplates === true
      ? await offerTemplateTools(reservoir, config.tools)
      : undefined;
  let reloader: ConfigReloader | undefined;
  if (config !== undefined) {
    const { applyPrompts, ConfigReloader } = await import('./reload.js');
    applyPrompts(reservoir, config);
    const setLogLevel = (level: LogLevel): void => void (logger.level = level);
    reloader = new ConfigReloader({
      reservoir,
      config,
      settings,
      commandLine,
      logger,
      setLogLevel,
      running: built.running,
      onSourcesChanged: fromTemplates,
    }).start();
  }
  // The first SIGTERM/SIGINT drains (the requests taken are answered within the grace period) and exits 0; a second exits at once.
  const shutdown = new Shutdown({
    server: reservoir,
    logger,
    onDrainStart: () => reloader?.close(),
  }).install();
  return { reservoir, settings, logger, reloader, shutdown };
}

/**
 * Serves what the request describes until it is drained: over stdio until the end of input (every
 * line read is answered, then the server shuts down), or over HTTP until a signal drains it.
 */
export async function serve(request: ServeRequest): Promise<void> {
  const { reservoir, settings, logger, shutdown } = await composeServer(request);
  if (settings.http === undefined) {
    const sources = reservoir.registry.providers().map((p) => p.root);
    const announce = announceAfterFirstWrite(process.stdout, () =>
      logger.info({ transport: 'stdio', sources }, `serving MCP over stdio: ${sources.join(', ')}`),
    );
    const handle = reservoir.serveStdio();
    await handle.closed;
    announce();
    await shutdown.run('stdin closed');
    return;
  }
  const auth =
    settings.http.auth === undefined
      ? undefined
      : (await import('../http/auth.js')).createAuthenticator(settings.http.auth, { logger });
  const endpoint = await reservoir.listen({
    host: settings.http.host,
    port: settings.http.port,
    allowedHosts: settings.http.allowedHosts,
    maxBodyBytes: settings.http.maxBodyBytes,
    auth,
    anonymous: settings.http.anonymous,
    sessions: settings.http.sessions,
    tls: settings.http.tls,
    ui: settings.http.ui,
    sse: settings.http.sse,
  });
  logger.info(
    { url: endpoint.url, roots: reservoir.registry.providers().map((p) => p.root) },
    `serving MCP at ${endpoint.url}`,
  );
}

/** The policy's slots from the config file. */
function policyOf(config: LoadedConfig | undefined, settings: Settings): PolicyOptions {
  const limits = config?.server.limits;
  return {
    rateLimit: limits?.rateLimit,
    // Over HTTP the per-principal caps always apply (their defaults when the config sets none);
    // over stdio the one local user is alone on its connection, and is capped only when asked.
    concurrency: limits?.concurrency ?? (settings.http === undefined ? undefined : {}),
    deadlineMs: limits?.deadlineMs,
    audit: config?.server.audit,
  };
}
