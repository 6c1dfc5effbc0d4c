/**
 * What a Reservoir server is built from (ReservoirOptions, on top of the Registry's own options)
 * and what a drain reports.
 */
import type { BlobCaps } from '../core/blob-caps.js';
import type { Logger } from '../core/log.js';
import type { Prompt } from '../core/prompts.js';
import type { RegistryOptions } from '../core/registry-options.js';
import type { SubscriptionOptions } from '../core/subscriptions.js';
import type { Tool } from '../core/tools.js';
import type { Provider } from '../core/types.js';
import type { Cluster, ReservoirTracer } from '../cluster/index.js';
import type { RequestStateOptions } from '../mcp/input.js';
import type { ServerPresentation } from '../mcp/server.js';
import type { SkillsServing } from '../mcp/skills.js';
import type { SearchSettings } from '../search/lazy.js';
import type { IdleMemoryOptions } from './idle-memory.js';
import type { PolicyOptions } from './policy.js';

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
   * Answer plain `resources/read` requests (and, on a 2025-era stdio connection, plain
   * `resources/subscribe` / `resources/unsubscribe` and `tools/call` of the built-in tools) without
   * the SDK's dispatch (mcp/direct/), on stdio and HTTP. `false` sends every request through the SDK
   * — the reference the direct paths are tested against (test/mcp/direct/parity.test.ts,
   * tools-parity.test.ts). @default true
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
  /**
   * Give memory back once the server is quiet after a burst of work: when no operation has been in
   * flight or begun for `quietMs` (6 s) and the heap grew by 16 MiB or more since the last time, one
   * full garbage collection that returns the young generation and old-generation pages to the OS
   * (a 1M-file listing leaves ~60 MB otherwise). It never runs with an operation in flight, and
   * costs two counters per operation. Off unless asked: an embedder's process does work of its own
   * while Reservoir is quiet, which the reducer cannot see; `reservoir serve`, whose process is the
   * server's, turns it on. See docs/design.md. @default false
   */
  memoryReducer?: boolean | IdleMemoryOptions | undefined;
}

/** What a drain left behind. */
export interface DrainOutcome {
  /** Requests still unanswered when the grace period ran out (0: every one was answered). */
  unanswered: number;
}
