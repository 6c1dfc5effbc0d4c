/**
 * A Reservoir server: a Registry of mounted providers, served over stdio and/or Streamable HTTP
 * through one SDK server factory. This is what the CLI runs and what the library exports.
 */
import type { Readable, Writable } from 'node:stream';
import type { McpServerFactory } from '@modelcontextprotocol/server';
import { Catalog } from '../core/named-items.js';
import { silentLogger, type Logger } from '../core/log.js';
import type { Prompt } from '../core/prompts.js';
import { DocumentRenderer } from '../documents/index.js';
import { DocumentReads } from '../documents/reads.js';
import { Registry } from '../core/registry.js';
import { Subscriptions } from '../core/subscriptions.js';
import type { Tool } from '../core/tools.js';
import type { Provider } from '../core/types.js';
import type { Cluster, ReservoirTracer } from '../cluster/index.js';
import { ConfigError } from '../core/errors.js';
import type { HttpEndpoint, HttpOptions } from '../http/app.js';
import { explorerApp } from '../mcp/explorer-app.js';
import { ClientLogRouter } from '../mcp/client-log.js';
import { createServerFactory, type McpServerOptions } from '../mcp/server.js';
import { createDirectRead, type DirectRead } from '../mcp/direct/read.js';
import { sdkTemplateEngine } from '../mcp/templates.js';
import { LazySearch } from '../search/lazy.js';
import { IdleMemoryReducer } from './idle-memory.js';
import { buildPolicy, type BuiltPolicy } from './policy.js';
import { processHeap } from './v8-heap.js';
import { DEFAULT_SHUTDOWN_GRACE_MS, type DrainOutcome, type ReservoirOptions } from './options.js';
import { drainWithin, serveStdioConnection, type StdioHandle } from './stdio-connection.js';

export { DEFAULT_SHUTDOWN_GRACE_MS } from './options.js';
export type { DrainOutcome, ReservoirOptions } from './options.js';
export type { StdioHandle } from './stdio-connection.js';

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
  /** Plain 2025-era stdio subscribes and one-round tool calls answered without the SDK's dispatch; not when `directReads` is false. */
  private readonly directLegacy: boolean;
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
  /** Gives memory back once the server is quiet after a burst; none when `memoryReducer` is false. */
  private readonly memoryReducer: IdleMemoryReducer | undefined;

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
    this.memoryReducer =
      options.memoryReducer === undefined || options.memoryReducer === false
        ? undefined
        : new IdleMemoryReducer(
            processHeap,
            options.memoryReducer === true ? {} : options.memoryReducer,
          );
    const serving: McpServerOptions = {
      // Every operation, SDK or direct, runs through this policy: the reducer counts them there.
      policy: this.memoryReducer?.around(this.policy.policy) ?? this.policy.policy,
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
    this.directLegacy = options.directReads !== false;
  }

  /** Mounts another provider. */
  mount(provider: Provider): this {
    this.registry.mount(this.tracer?.provider(provider) ?? provider);
    return this;
  }

  /** Serves MCP over stdio (or the given streams): both protocol eras, chosen by the client's first message. */
  serveStdio(streams: { stdin?: Readable; stdout?: Writable } = {}): StdioHandle {
    const { factory, subscriptions, logger, shutdownGraceMs, directRead, directLegacy } = this;
    const serving = {
      factory,
      subscriptions,
      logger,
      shutdownGraceMs,
      directRead,
      directLegacy,
    };
    const handle = serveStdioConnection(serving, streams, () => this.stdio.delete(handle));
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
    this.memoryReducer?.close();
    this.subscriptions.close();
    await this.search?.close();
    await this.registry.close();
    await this.policy.audit?.close();
    await this.cluster?.close();
  }
}

/** Creates a Reservoir server from providers. */
export function createReservoir(options: ReservoirOptions = {}): Reservoir {
  return new Reservoir(options);
}
