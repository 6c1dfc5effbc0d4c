/**
 * A Reservoir server: a Registry of mounted providers, served over stdio and/or Streamable HTTP
 * through one SDK server factory. This is what the CLI runs and what the library exports.
 */
import type { Readable, Writable } from 'node:stream';
import type { McpServerFactory, Server } from '@modelcontextprotocol/server';
import { serveStdio as sdkServeStdio } from '@modelcontextprotocol/server/stdio';
import { Catalog } from '../core/named-items.js';
import { silentLogger, type Logger } from '../core/log.js';
import type { Prompt } from '../core/prompts.js';
import { DocumentRenderer } from '../documents/index.js';
import { DocumentReads } from '../documents/reads.js';
import { Registry, type RegistryOptions } from '../core/registry.js';
import { Subscriptions, type SubscriptionOptions } from '../core/subscriptions.js';
import type { Tool } from '../core/tools.js';
import type { Provider } from '../core/types.js';
import type { Cluster, ReservoirTracer } from '../cluster/index.js';
import { ConfigError } from '../core/errors.js';
import type { HttpEndpoint, HttpOptions } from '../http/app.js';
import type { RequestStateOptions } from '../mcp/input.js';
import { explorerApp } from '../mcp/explorer-app.js';
import { ClientLogRouter } from '../mcp/client-log.js';
import {
  createServerFactory,
  type McpServerOptions,
  type ServerPresentation,
} from '../mcp/server.js';
import type { BlobCaps } from '../core/blob-caps.js';
import type { SkillsServing } from '../mcp/skills.js';
import { createDirectRead, type DirectRead } from '../mcp/direct/read.js';
import { ListenAdmittingTransport } from '../stdio/listen-transport.js';
import { StdioWire } from '../stdio/wire.js';
import { sdkTemplateEngine } from '../mcp/templates.js';
import { LazySearch, type SearchSettings } from '../search/lazy.js';
import { buildPolicy, type BuiltPolicy, type PolicyOptions } from './policy.js';

/** How long a drain waits for the requests in flight, ms (`server.shutdownGraceMs`). */
export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;

export interface ReservoirOptions extends RegistryOptions {
  /** Rate limits, concurrency caps, the deadline of every operation, and the audit log. */
  policy?: PolicyOptions | undefined;
  /** Subscription limits and list-change coalescing. */
  subscriptions?: SubscriptionOptions | undefined;
  /** Providers to mount, in order (lists merge in this order). */
  providers?: Provider[] | undefined;
  /** Prompts to offer. */
  prompts?: Prompt[] | undefined;
  /**
   * Agent Skills catalogs (see `buildSkills`): mounted at their `skill://` roots, served with
   * `skills/list` and `skills/get`, and the skills extension declared in both eras.
   */
  skills?: SkillsServing | undefined;
  /** Tools to offer. */
  tools?: Tool[] | undefined;
  /** Where logs go. @default a logger that drops everything */
  logger?: Logger | undefined;
  /** Instructions shown to clients at discovery. */
  instructions?: string | undefined;
  /** `serverInfo`'s title, description and website (each defaults to Reservoir's own). */
  presentation?: ServerPresentation | undefined;
  /**
   * Declare the `logging` capability, so 2025-era clients may call `logging/setLevel` and receive
   * the `ctx.log(...)` messages of tools at or above that level (2026-07-28 clients ask per request,
   * with `_meta["io.modelcontextprotocol/logLevel"]`), and the server's own log records (`logger`)
   * likewise: those of a request to its client, the others to every 2025-era connection that set a
   * level — to clients whose principal no access rule restricts. Logging is deprecated as of
   * 2026-07-28. @default false
   *
   * @example
   * ```ts
   * createReservoir({ logging: true, tools: [defineTool({ name: 'job', description: 'Runs a job', input: z.object({}),
   *   async call(_args, ctx) { await ctx.log('info', 'started'); return { content: [{ type: 'text', text: 'done' }] }; } })] });
   * ```
   */
  logging?: boolean | undefined;
  /**
   * How the state of multi-round-trip requests (`inputRequired({ state })`) is sealed. Servers run
   * as several processes must share one `key`, or a retry that reaches another process is refused.
   *
   * @example
   * ```ts
   * createReservoir({ requestState: { key: process.env.RESERVOIR_STATE_KEY, ttlSeconds: 300 } });
   * ```
   */
  requestState?: RequestStateOptions | undefined;
  /**
   * Offer the explorer as an MCP App: the `open_explorer` tool and its `ui://reservoir/explorer.html`
   * page, to hosts that declare the `io.modelcontextprotocol/ui` extension only. @default false
   */
  explorerApp?: boolean | undefined;
  /**
   * Answer plain `resources/read` requests without the SDK's dispatch (mcp/direct/), on stdio and
   * HTTP. `false` sends every request through the SDK — the reference the direct path is tested
   * against (test/mcp/direct/parity.test.ts). @default true
   */
  directReads?: boolean | undefined;
  /**
   * Smaller caps on binary content for some principals or clients (`new BlobCaps(rules)`; config
   * `server.limits.blobCaps`). With any, reads go through the SDK's dispatch (which knows the client).
   */
  blobCaps?: BlobCaps | undefined;
  /**
   * Full-text search over the sources (files and git by default): the index lives in
   * `search.stateDir` and is opened, built and kept live from the first search on. See
   * `builtinTools(…, { search: reservoir.search })` for the `search_resources` tool.
   */
  search?: SearchSettings | undefined;
  /**
   * The secret shared by every instance of one service (at least 32 bytes): it keys the cursor
   * HMAC and the request-state seal unless `cursorSecret` / `requestState.key` are given.
   */
  secret?: string | undefined;
  /**
   * Cluster mode (from `createCluster`): one event bus, one poller per polled source, 2025-era
   * sessions and rate limits shared through Redis. Needs `secret`. See docs/cluster.md.
   */
  cluster?: Cluster | undefined;
  /**
   * OpenTelemetry spans per operation and provider call (`createTracer`), a no-op unless an SDK is
   * registered. Cluster mode traces by itself. @default none
   */
  tracer?: ReservoirTracer | undefined;
  /**
   * How long a drain (`drain()`: on shutdown, and on a stdio connection's end of input) waits for
   * the requests already taken to be answered before closing anyway, ms. @default 10000
   */
  shutdownGraceMs?: number | undefined;
}

/** What a drain left behind. */
export interface DrainOutcome {
  /** Requests still unanswered when the grace period ran out (0: every one was answered). */
  unanswered: number;
}

export interface StdioHandle {
  /**
   * Resolves when the connection is closed: after its end of input was drained (every request read
   * answered, within the grace period), or close() or drain() was called.
   */
  readonly closed: Promise<void>;
  /**
   * Refuses new requests (`shutting_down`), waits for those taken to be answered until `signal`
   * aborts, then closes. Resolves with the number left unanswered.
   */
  drain(signal?: AbortSignal): Promise<number>;
  /** Closes at once: requests in flight are not answered. */
  close(): Promise<void>;
}

export class Reservoir {
  readonly registry: Registry;
  /** Counted watches shared by every connection and both protocol eras. */
  readonly subscriptions: Subscriptions;
  /** The prompts offered; changing it sends `prompts/list_changed`. */
  readonly prompts = new Catalog<Prompt>('prompts');
  /** The tools offered; changing it sends `tools/list_changed`. */
  readonly tools = new Catalog<Tool>('tools');
  readonly logger: Logger;
  /** The SDK server factory; both transports build their instances from it. */
  readonly factory: McpServerFactory;
  /** Plain reads answered without the SDK's dispatch, on stdio and HTTP (mcp/direct/); none when `directReads` is false. */
  private readonly directRead: DirectRead | undefined;
  /** The policy steps, the metrics they feed, and the audit log. */
  readonly policy: BuiltPolicy;
  /** The search index (opened on first use), when `search` was given. */
  readonly search: LazySearch | undefined;
  private readonly endpoints = new Set<HttpEndpoint>();
  private readonly stdio = new Set<StdioHandle>();

  /** Cluster mode's membership, when the server runs as one of several. */
  readonly cluster: Cluster | undefined;
  private readonly tracer: ReservoirTracer | undefined;
  /** How long a drain waits for requests in flight, ms. */
  readonly shutdownGraceMs: number;

  constructor(options: ReservoirOptions = {}) {
    // With logging on, the server's records also go to the clients that ask (mcp/client-log.ts),
    // where no access rule is in force for the client's principal.
    const clientLog =
      options.logging === true
        ? new ClientLogRouter((principal) => this.registry.access.rulesFor(principal) === undefined)
        : undefined;
    this.logger = clientLog?.tee(options.logger ?? silentLogger) ?? options.logger ?? silentLogger;
    this.shutdownGraceMs = options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS;
    if (!(Number.isSafeInteger(this.shutdownGraceMs) && this.shutdownGraceMs >= 0)) {
      throw new ConfigError(
        'server.shutdownGraceMs',
        `expected a whole number of milliseconds, 0 or more, got ${this.shutdownGraceMs}`,
      );
    }
    this.cluster = options.cluster;
    this.tracer = options.tracer ?? options.cluster?.tracer;
    if (this.cluster !== undefined && options.secret === undefined) {
      throw new ConfigError(
        'server.secret',
        `cluster mode (--redis / server.redis) needs a secret shared by every instance: ${this.cluster.secretHowto}`,
      );
    }
    const secret = options.secret;
    this.registry = new Registry({
      templateEngine: sdkTemplateEngine,
      cursorSecret: secret,
      ...options,
      // Documents read as Markdown from every source; renditions cached in memory unless the
      // composition root gives a layer with the state directory's cache.
      reads: options.reads ?? new DocumentReads(new DocumentRenderer()),
      logger: this.logger,
    });
    for (const provider of options.providers ?? [])
      this.registry.mount(this.tracer?.provider(provider) ?? provider);
    for (const provider of options.skills?.providers ?? [])
      this.registry.mount(this.tracer?.provider(provider) ?? provider);
    this.subscriptions = new Subscriptions(this.registry, this.logger, options.subscriptions);
    for (const prompt of options.prompts ?? []) this.prompts.add(prompt);
    for (const tool of options.tools ?? []) this.tools.add(tool);
    this.prompts.onChange(() => this.subscriptions.broadcast('prompts'));
    this.tools.onChange(() => this.subscriptions.broadcast('tools'));
    this.cluster?.attach(this.subscriptions);
    this.policy = buildPolicy(
      options.policy ?? {},
      this.subscriptions,
      this.logger,
      this.cluster === undefined
        ? {}
        : {
            rateLimitStore: this.cluster.rateLimitStore('requests'),
            labels: { instance: this.cluster.instance },
          },
      this.registry.access,
    );
    this.cluster?.instrument(this.policy.metrics);
    const requestState =
      secret === undefined || options.requestState?.key !== undefined
        ? options.requestState
        : { ...options.requestState, key: secret };
    const app = options.explorerApp === true ? explorerApp() : undefined;
    if (app !== undefined) this.tools.add(app.tool);
    this.search =
      options.search === undefined
        ? undefined
        : new LazySearch(this.registry, options.search, this.logger);
    const blobCaps =
      options.blobCaps === undefined || options.blobCaps.size === 0 ? undefined : options.blobCaps;
    const serving: McpServerOptions = {
      policy: this.policy.policy,
      registry: this.registry,
      subscriptions: this.subscriptions,
      prompts: this.prompts,
      tools: this.tools,
      logger: this.logger,
      tracer: this.tracer,
      instructions: options.instructions,
      presentation: options.presentation,
      logging: options.logging,
      clientLog,
      requestState,
      appResources: app === undefined ? undefined : [app.resource],
      skills: options.skills,
      blobCaps,
    };
    this.factory = createServerFactory(serving);
    // The direct path does not know the client: with blob caps, every read goes through the SDK.
    this.directRead =
      options.directReads === false || blobCaps !== undefined
        ? undefined
        : createDirectRead(serving);
  }

  /** Mounts another provider. */
  mount(provider: Provider): this {
    this.registry.mount(this.tracer?.provider(provider) ?? provider);
    return this;
  }

  /** Serves MCP over stdio (or the given streams): both protocol eras, chosen by the client's first message. */
  serveStdio(streams: { stdin?: Readable; stdout?: Writable } = {}): StdioHandle {
    const stdin = streams.stdin ?? process.stdin;
    // 2026-07-28 listen streams on this connection deliver through the instance the SDK pins.
    let pinned: Server | undefined;
    const report = (error: unknown): void =>
      this.logger.debug({ err: error }, 'could not deliver a notification');
    const channel = this.subscriptions.channel({
      updated: (uri) => void pinned?.sendResourceUpdated({ uri }).catch(report),
      listChanged: () => void pinned?.sendResourceListChanged().catch(report),
      promptsChanged: () => void pinned?.sendPromptListChanged().catch(report),
      toolsChanged: () => void pinned?.sendToolListChanged().catch(report),
    });
    // End of input drains the connection (bounded by the grace period) rather than dropping what is in flight.
    const wire = new StdioWire(stdin, streams.stdout ?? process.stdout, {
      directRead: this.directRead,
      onInputEnd: () => void drainWithin(this.shutdownGraceMs, (signal) => handle.drain(signal)),
    });
    const transport = new ListenAdmittingTransport(
      wire,
      channel,
      this.subscriptions.maxPerChannel,
      this.logger,
    );
    const sdk = sdkServeStdio(
      async (ctx) => {
        const server = (await this.factory(ctx)) as Server;
        if (ctx.era === 'modern') pinned = server;
        return server;
      },
      { transport, onerror: (error) => this.logger.debug({ err: error }, 'stdio protocol error') },
    );
    let resolveClosed!: () => void;
    const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
    let draining: Promise<number> | undefined;
    const handle: StdioHandle = {
      closed,
      drain: (signal) =>
        (draining ??= (async () => {
          await wire.drain(signal);
          const unanswered = wire.pendingRequests;
          if (unanswered > 0)
            this.logger.warn(
              { unanswered, transport: 'stdio' },
              'closing the stdio connection with requests unanswered: the grace period ran out',
            );
          await handle.close();
          return unanswered;
        })()),
      close: async () => {
        this.stdio.delete(handle);
        await sdk.close();
        channel.close();
        resolveClosed();
      },
    };
    this.stdio.add(handle);
    return handle;
  }

  /** Serves MCP over Streamable HTTP at `/mcp`. */
  async listen(options: HttpOptions = {}): Promise<HttpEndpoint> {
    // Loaded on first use: a stdio server never pays for the HTTP stack at start-up.
    const { listenHttp } = await import('../http/app.js');
    const endpoint = await listenHttp(this.factory, this.subscriptions, this.logger, {
      ...options,
      metrics: this.policy.metrics,
      audit: this.policy.audit,
      registry: this.registry,
      directRead: this.directRead,
      // The explorer's page loading means a search is likely soon: open (build or catch up) the
      // index then, not on the first keystroke. The feeder yields between slices meanwhile.
      onPageOpened: this.search === undefined ? undefined : () => void this.openSearchAhead(),
      concurrency: this.policy.concurrency,
      cluster: this.cluster,
    });
    this.endpoints.add(endpoint);
    return endpoint;
  }

  private async openSearchAhead(): Promise<void> {
    if (this.search === undefined || this.search.isOpen) return;
    await this.search
      .open()
      .catch((error: unknown) =>
        this.logger.warn(
          { err: error },
          'the search index could not be opened ahead of the first search',
        ),
      );
  }

  /**
   * Drains for shutdown (docs/operations.md): every transport stops taking requests (HTTP stops
   * accepting connections and answers new requests 503; stdio answers them `shutting_down`), the
   * requests already taken are answered — within `graceMs`, else left unanswered and counted — then
   * everything closes as `close()` does: 2025 sessions and their GET streams end, 2026 listen
   * streams get their final result, sources close.
   */
  async drain(graceMs = this.shutdownGraceMs): Promise<DrainOutcome> {
    const left = await drainWithin(graceMs, (signal) =>
      Promise.all([
        ...[...this.stdio].map((h) => h.drain(signal)),
        ...[...this.endpoints].map((e) => e.drain(signal)),
      ]),
    );
    await this.close();
    return { unanswered: left.reduce((sum, n) => sum + n, 0) };
  }

  /** Closes every transport, then every provider: requests in flight are not answered (see drain()). */
  async close(): Promise<void> {
    await Promise.allSettled([...this.stdio].map((h) => h.close()));
    await Promise.allSettled([...this.endpoints].map((e) => e.close()));
    this.endpoints.clear();
    this.subscriptions.close();
    await this.search?.close();
    await this.registry.close();
    await this.policy.audit?.close();
    await this.cluster?.close();
  }
}

/** Runs `work` with a signal that aborts after `graceMs` (its timer cleared when the work ends). */
async function drainWithin<T>(
  graceMs: number,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const grace = new AbortController();
  const timer = setTimeout(() => grace.abort(), graceMs);
  try {
    return await work(grace.signal);
  } finally {
    clearTimeout(timer);
  }
}

/** Creates a Reservoir server from providers. */
export function createReservoir(options: ReservoirOptions = {}): Reservoir {
  return new Reservoir(options);
}
