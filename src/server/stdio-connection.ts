/**
 * One MCP connection over stdio (or the given streams): both protocol eras, chosen by the client's
 * first message, on the wire that answers plain reads directly; its end of input drains it within
 * the grace period rather than dropping what is in flight.
 */
import type { Readable, Writable } from 'node:stream';
import type { McpServerFactory, Server } from '@modelcontextprotocol/server';
import { serveStdio as sdkServeStdio } from '@modelcontextprotocol/server/stdio';
import type { Logger } from '../core/log.js';
import type { Subscriptions } from '../core/subscriptions.js';
import type { DirectRead } from '../mcp/direct/read.js';
import { legacyToolCaller } from '../mcp/direct-tools.js';
import { legacySubscriber } from '../mcp/subscribe.js';
import { ListenAdmittingTransport } from '../stdio/listen-transport.js';
import { StdioWire } from '../stdio/wire.js';

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

/** What a stdio connection is served from (the Reservoir's parts). */
export interface StdioServing {
  readonly factory: McpServerFactory;
  readonly subscriptions: Subscriptions;
  readonly logger: Logger;
  /** How long a drain on end of input waits for requests in flight, ms. */
  readonly shutdownGraceMs: number;
  /** Plain reads answered without the SDK's dispatch; none sends every read through it. */
  readonly directRead: DirectRead | undefined;
  /**
   * Plain 2025-era subscribes, unsubscribes and one-round tool calls answered without the SDK's
   * dispatch (mcp/direct/stdio.ts).
   */
  readonly directLegacy: boolean;
}

/** Serves one stdio connection; `onClose` runs when it closes (by drain, close() or end of input). */
export function serveStdioConnection(
  serving: StdioServing,
  streams: { stdin?: Readable; stdout?: Writable },
  onClose: () => void,
): StdioHandle {
  const stdin = streams.stdin ?? process.stdin;
  // 2026-07-28 listen streams on this connection deliver through the instance the SDK pins.
  let pinned: Server | undefined;
  // A 2025-era connection's instance: its subscriber and tool caller answer plain requests on the wire.
  let legacy: Server | undefined;
  const report = (error: unknown): void =>
    serving.logger.debug({ err: error }, 'could not deliver a notification');
  const channel = serving.subscriptions.channel({
    updated: (uri) => void pinned?.sendResourceUpdated({ uri }).catch(report),
    listChanged: () => void pinned?.sendResourceListChanged().catch(report),
    promptsChanged: () => void pinned?.sendPromptListChanged().catch(report),
    toolsChanged: () => void pinned?.sendToolListChanged().catch(report),
  });
  // End of input drains the connection (bounded by the grace period) rather than dropping what is in flight.
  const wire = new StdioWire(stdin, streams.stdout ?? process.stdout, {
    directRead: serving.directRead,
    subscriber: serving.directLegacy
      ? () => (legacy === undefined ? undefined : legacySubscriber(legacy))
      : undefined,
    tools: serving.directLegacy
      ? () => (legacy === undefined ? undefined : legacyToolCaller(legacy))
      : undefined,
    onInputEnd: () => void drainWithin(serving.shutdownGraceMs, (signal) => handle.drain(signal)),
  });
  const transport = new ListenAdmittingTransport(
    wire,
    channel,
    serving.subscriptions.maxPerChannel,
    serving.logger,
  );
  const sdk = sdkServeStdio(
    async (ctx) => {
      const server = (await serving.factory(ctx)) as Server;
      if (ctx.era === 'modern') pinned = server;
      else legacy = server;
      return server;
    },
    { transport, onerror: (error) => serving.logger.debug({ err: error }, 'stdio protocol error') },
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
          serving.logger.warn(
            { unanswered, transport: 'stdio' },
            'closing the stdio connection with requests unanswered: the grace period ran out',
          );
        await handle.close();
        return unanswered;
      })()),
    close: async () => {
      onClose();
      await sdk.close();
      channel.close();
      resolveClosed();
    },
  };
  return handle;
}

/** Runs `work` with a signal that aborts after `graceMs` (its timer cleared when the work ends). */
export async function drainWithin<T>(
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
