/**
 * The SDK edge: builds SDK server instances whose handlers are Reservoir's. The SDK does framing,
 * validation, version negotiation and the era-specific wire shapes (`resultType`, `_meta`,
 * `server/discover`); the handler modules beside this one only translate between it and the core.
 *
 * One factory serves both eras: the serving entries call it per stdio connection, per 2025 HTTP
 * session and per 2026 HTTP request. Instances are cheap: a few closures over shared state.
 */
import { createRequire } from 'node:module';
// The low-level Server is the SDK's extension point for custom request handlers: McpServer's own
// registries answer every item in one response, which is what Reservoir replaces.
import {
  type CacheHint,
  type CacheScope,
  type Implementation,
  type McpRequestContext,
  type McpServerFactory,
  type Transport,
} from '@modelcontextprotocol/server';
import type { BlobCaps } from '../core/blob-caps.js';
import type { Catalog } from '../core/named-items.js';
import type { Logger } from '../core/log.js';
import type { Prompt } from '../core/prompts.js';
import type { Registry } from '../core/registry.js';
import type { Subscriptions } from '../core/subscriptions.js';
import type { Tool } from '../core/tools.js';
import { authorizeStep } from '../policy/authorize.js';
import { composePolicy, type Policy } from '../policy/index.js';
import { installCompletionHandler } from './argument-completion.js';
import type { AppResource } from './explorer-app.js';
import { SERVER_ICONS } from './inline-icons.js';
import { principalOfAuth, type Guard, type OperationTracer } from './guarded-call.js';
import { withLegacyNotFoundCode } from './errors.js';
import { createStateCodec, type RequestStateOptions } from './input.js';
import type { ClientLogRouter } from './client-log.js';
import { LoggingServer } from './logging-server.js';
import { installPromptHandlers } from './prompts.js';
import { installResourceHandlers } from './resources.js';
import {
  installDirectoryHandler,
  installSkillsHandlers,
  skillsCapability,
  type SkillsServing,
} from './skills.js';
import { installLegacySubscriptions } from './subscribe.js';
import { installTaskRefusals } from './tasks.js';
import { installToolHandlers } from './tools.js';
import { definedProps } from '../core/defined.js';

const require = createRequire(import.meta.url);
const pkg = require('../../package.json') as {
  version: string;
  description: string;
  homepage: string;
};

export const SERVER_NAME = 'reservoir';
export const SERVER_VERSION = pkg.version;

/** How the server presents itself to hosts (`serverInfo` / `server/discover`), beside its name and version. */
export interface ServerPresentation {
  /** A display name. @default 'Reservoir' */
  title?: string | undefined;
  /** What this server offers. @default the package's description */
  description?: string | undefined;
  /** Where to learn more. @default the project's home page */
  websiteUrl?: string | undefined;
}

export const DEFAULT_PRESENTATION = {
  title: 'Reservoir',
  description: pkg.description,
  websiteUrl: pkg.homepage,
} as const satisfies ServerPresentation;

export interface McpServerOptions {
  registry: Registry;
  subscriptions: Subscriptions;
  prompts: Catalog<Prompt>;
  tools: Catalog<Tool>;
  logger: Logger;
  /** A span per operation (see OperationTracer). */
  tracer?: OperationTracer | undefined;
  /** Shown to clients in `initialize` / `server/discover`. */
  instructions?: string | undefined;
  /** Title, description and website of `serverInfo`, each over its default. */
  presentation?: ServerPresentation | undefined;
  /** Cache hints for list results (2026-07-28). Reads use each provider's own freshness. */
  listCacheHint?: CacheHint | undefined;
  templatesCacheHint?: CacheHint | undefined;
  /** Declare the `logging` capability (`logging/setLevel`; log notifications from tools). */
  logging?: boolean | undefined;
  /** Where the server's own log records go to clients (with `logging`; see client-log.ts). */
  clientLog?: ClientLogRouter | undefined;
  /** How multi-round-trip `requestState` is sealed (one codec for every instance of this factory). */
  requestState?: RequestStateOptions | undefined;
  /** Resources the MCP edge serves itself (the explorer's MCP App page), to the clients each is offered to. */
  appResources?: readonly AppResource[] | undefined;
  /** The policy steps every handler runs through (audit, authorize, rate limits, concurrency, deadline). @default the authorize step alone */
  policy?: Policy | undefined;
  /** Skills catalogs: serve `skills/list`, `skills/get` and declare the skills extension. */
  skills?: SkillsServing | undefined;
  /** Smaller caps on binary content for some principals or clients (core/blob-caps.ts). */
  blobCaps?: BlobCaps | undefined;
}

/** Returns the factory both serving entries (stdio, HTTP) build their instances with. */
export function createServerFactory(options: McpServerOptions): McpServerFactory {
  const { registry, subscriptions, prompts, tools, logger } = options;
  const skills =
    options.skills !== undefined && options.skills.providers.length > 0
      ? options.skills
      : undefined;
  const guard: Guard = {
    policy: options.policy ?? composePolicy([authorizeStep(registry.access)]),
    logger,
    tracer: options.tracer,
  };
  // One codec for every instance: a retry may reach another instance than the round that minted it.
  const codec = createStateCodec(options.requestState);
  const identity = serverIdentity(options.presentation);

  return (ctx: McpRequestContext) => {
    const kind = principalOfAuth(ctx.authInfo)?.kind;
    const cacheScope = cacheScopeFor(registry.restricted, kind);
    const listHint: CacheHint = { ttlMs: 0, cacheScope, ...options.listCacheHint };
    const templatesHint: CacheHint = { ttlMs: 60_000, cacheScope, ...options.templatesCacheHint };
    const catalogHint: CacheHint = { ttlMs: 60_000, cacheScope };
    const server = new LoggingServer(
      identity,
      {
        capabilities: {
          // A capability the server lacks is left out, never declared false.
          resources: definedProps({
            subscribe: subscriptions.canSubscribe ? true : undefined,
            listChanged: subscriptions.canListChange ? true : undefined,
          }),
          prompts: { listChanged: true },
          tools: { listChanged: true },
          completions: {},
          ...definedProps({
            logging: options.logging === true ? {} : undefined,
            extensions: skills === undefined ? undefined : skillsCapability(),
          }),
        },
        ...definedProps({ instructions: options.instructions }),
        cacheHints: {
          'resources/list': listHint,
          'resources/templates/list': templatesHint,
          'resources/read': { ttlMs: 0, cacheScope },
          'prompts/list': catalogHint,
          'tools/list': catalogHint,
          'server/discover': { ttlMs: 60_000, cacheScope },
        },
        requestState: { verify: codec.verify },
      },
      options.logging === true ? options.clientLog : undefined,
      ctx.era,
    );
    server.logger = logger;
    server.onerror = (error) => logger.debug({ err: error }, 'protocol error');
    installResourceHandlers(server, ctx, registry, guard, options.appResources, options.blobCaps);
    installPromptHandlers(server, prompts, registry, guard, codec);
    installToolHandlers(server, tools, registry, guard, codec, options.blobCaps, ctx.era);
    installCompletionHandler(server, prompts, registry, guard);
    const skillsHint: CacheHint = { ttlMs: 0, cacheScope };
    installDirectoryHandler(
      server,
      ctx,
      registry,
      guard,
      skillsHint,
      skills?.pageSize ?? registry.pageSize,
    );
    if (skills !== undefined)
      installSkillsHandlers(server, ctx, registry, guard, skills, skillsHint);
    if (ctx.era === 'modern') installTaskRefusals(server, guard);
    if (ctx.era === 'legacy') {
      const connect = server.connect.bind(server);
      server.connect = (transport: Transport) => connect(withLegacyNotFoundCode(transport));
      installLegacySubscriptions(server, subscriptions, guard);
    }
    return server;
  };
}

/** The server's whole `Implementation`: name, version, presentation (defaults filled in), icons. */
export function serverIdentity(presentation: ServerPresentation = {}): Implementation {
  return {
    name: SERVER_NAME,
    version: SERVER_VERSION,
    title: presentation.title ?? DEFAULT_PRESENTATION.title,
    description: presentation.description ?? DEFAULT_PRESENTATION.description,
    websiteUrl: presentation.websiteUrl ?? DEFAULT_PRESENTATION.websiteUrl,
    icons: SERVER_ICONS,
  };
}

/**
 * The cache scope of answers to a caller of this `kind`: answers that depend on who asks (access
 * rules in force), or that only an authenticated caller may see, must not be shared by caches —
 * private. Otherwise the data is the same for everyone: public.
 */
export function cacheScopeFor(restricted: boolean, kind: string | undefined): CacheScope {
  return restricted || kind === 'token' || kind === 'oauth' ? 'private' : 'public';
}
