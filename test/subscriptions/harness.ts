/**
 * Helpers for the live-resource tests: a recorder of the change notifications one SDK client
 * receives, bounded waits, era-neutral subscribing, an in-process stdio pair (the SDK client over
 * `node:stream` PassThrough pairs into `Reservoir.serveStdio`), and a raw streaming HTTP reader for
 * 2026-07-28 listen streams (the SDK client hides the wire; `test/helpers/wire.ts` reads whole bodies).
 */
import { request as httpRequest, type ClientRequest } from 'node:http';
import { PassThrough } from 'node:stream';
import { Client, type McpSubscription } from '@modelcontextprotocol/client';
import type { Logger, LogFn } from '../../src/core/log.js';
import type { Reservoir } from '../../src/server/index.js';
import { CLIENT_INFO, MODERN_VERSION, newClient, type Era } from '../helpers/clients.js';
import { StreamClientTransport } from '../helpers/stream-client.js';
import { modernMeta, type JsonRpcResponse } from '../helpers/wire.js';
import { eventually } from '../helpers/eventually.js';

export const SUBSCRIPTION_ID_KEY = 'io.modelcontextprotocol/subscriptionId';

/** Polls `check` every `stepMs` until it returns true; fails with `what` after `timeoutMs` (see eventually()). */
export async function waitFor(
  check: () => boolean,
  what: string | (() => string),
  timeoutMs = 10_000,
  stepMs = 10,
): Promise<void> {
  await eventually(check, what, { deadlineMs: timeoutMs, stepMs });
}

/**
 * Proves that no further notification of the changes made so far is on its way, without waiting a
 * fixed time for silence: makes `change` (a change to `markerUri`, another resource every recorder
 * is subscribed to) and waits until every recorder has heard of it. A source's notifications travel
 * one ordered path (its watcher or poller, the hub, the channel, the transport), so a duplicate of
 * an earlier change would have arrived before the marker's; count after this returns.
 */
export async function afterMarker(
  recorders: Recorder[],
  markerUri: string,
  change: () => unknown,
  timeoutMs = 10_000,
): Promise<void> {
  const before = recorders.map((r) => r.updates(markerUri));
  await change();
  await waitFor(
    () => recorders.every((r, i) => r.updates(markerUri) > before[i]!),
    `every client to hear the marker change of ${markerUri}`,
    timeoutMs,
  );
}

/** The hub's least time between two list_changed (1 s) plus its first delay and a margin. */
const LIST_INTERVAL_QUIET_MS = 1_400;

/**
 * The one bounded "nothing arrives within X" wait the live-resource tests keep, and only for list
 * changes: `list_changed` names nothing, and the hub coalesces a burst into at most one per
 * interval, so no later marker can tell "no list change is pending" from "one is due at the end of
 * the interval" (a marker's own list change would merge with it). Waiting out one interval is the
 * only honest form of "settled" or "nothing was sent". With `recorders`, repeats until none of them
 * heard a list change over a whole interval (at most `deadlineMs`, then it fails).
 */
export async function listChangesSettle(
  recorders: Recorder[] = [],
  deadlineMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const before = recorders.map((r) => r.listChanges());
    await new Promise((done) => setTimeout(done, LIST_INTERVAL_QUIET_MS));
    if (recorders.every((r, i) => r.listChanges() === before[i])) return;
    if (Date.now() > deadline)
      throw new Error(`list changes still arriving after ${deadlineMs} ms`);
  }
}

export interface Received {
  method: 'updated' | 'list_changed';
  uri?: string;
  subscriptionId?: unknown;
}

/** Every resource change notification one client receives, in order. */
export class Recorder {
  readonly events: Received[] = [];

  constructor(client: Client) {
    client.setNotificationHandler('notifications/resources/updated', (n) => {
      this.events.push({
        method: 'updated',
        uri: n.params.uri,
        subscriptionId: n.params._meta?.[SUBSCRIPTION_ID_KEY],
      });
    });
    client.setNotificationHandler('notifications/resources/list_changed', (n) => {
      this.events.push({
        method: 'list_changed',
        subscriptionId: n.params?._meta?.[SUBSCRIPTION_ID_KEY],
      });
    });
  }

  updates(uri?: string): number {
    return this.events.filter((e) => e.method === 'updated' && (uri === undefined || e.uri === uri))
      .length;
  }

  listChanges(subscriptionId?: unknown): number {
    return this.events.filter(
      (e) =>
        e.method === 'list_changed' &&
        (subscriptionId === undefined || e.subscriptionId === subscriptionId),
    ).length;
  }

  /** The URIs of updates received, with repeats. */
  updatedUris(): string[] {
    return this.events.filter((e) => e.method === 'updated').map((e) => e.uri ?? '');
  }

  clear(): void {
    this.events.length = 0;
  }
}

/** A subscription opened in either era: 2025 `resources/subscribe` per URI, or one 2026 listen. */
export interface Watching {
  /** 2026 only: the acknowledgement's honoured filter. */
  subscription?: McpSubscription;
  stop(): Promise<void>;
}

/**
 * Subscribes `client` to `uris`. In the 2025 era list changes reach every connected client; in the
 * 2026 era they are asked for with `list`.
 */
export async function watchUris(
  client: Client,
  era: Era,
  uris: string[],
  list = false,
): Promise<Watching> {
  if (era === '2025') {
    for (const uri of uris) await client.subscribeResource({ uri });
    return {
      stop: async () =>
        void (await Promise.all(uris.map((uri) => client.unsubscribeResource({ uri })))),
    };
  }
  const subscription = await client.listen({
    resourceSubscriptions: uris,
    resourcesListChanged: list,
  });
  return { subscription, stop: () => subscription.close() };
}

/** Collects warnings (and everything else) logged, for the degradation tests. */
export class MemoryLogger implements Logger {
  readonly entries: { level: string; msg: string; fields: Record<string, unknown> }[] = [];
  error = this.at('error');
  warn = this.at('warn');
  info = this.at('info');
  debug = this.at('debug');

  count(level: string, pattern: RegExp): number {
    return this.entries.filter((e) => e.level === level && pattern.test(e.msg)).length;
  }

  private at(level: string): LogFn {
    return ((a: string | Record<string, unknown>, b?: string) => {
      if (typeof a === 'string') this.entries.push({ level, msg: a, fields: {} });
      else this.entries.push({ level, msg: b ?? '', fields: a });
    }) as LogFn;
  }
}

export interface InProcessStdio {
  client: Client;
  /** Ends the client's side (stdin of the server) without a protocol goodbye. */
  hangUp(): void;
  close(): Promise<void>;
}

/** Connects an SDK client in `era` to `reservoir.serveStdio` over PassThrough streams. */
export async function connectInProcess(reservoir: Reservoir, era: Era): Promise<InProcessStdio> {
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  reservoir.serveStdio({ stdin: toServer, stdout: toClient });
  const client = newClient(era);
  await client.connect(new StreamClientTransport(toClient, toServer));
  return {
    client,
    hangUp: () => toServer.end(),
    close: () => client.close(),
  };
}

/** A raw 2026-07-28 listen over HTTP, read incrementally as SSE. */
export class RawHttpListen {
  readonly messages: JsonRpcResponse[] = [];
  status = 0;
  ended = false;
  private readonly req: ClientRequest;
  private text = '';

  constructor(url: string, id: number | string, notifications: Record<string, unknown>) {
    const target = new URL(url);
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'subscriptions/listen',
      params: { _meta: modernMeta(), notifications },
    });
    this.req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        agent: false,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': MODERN_VERSION,
          'mcp-method': 'subscriptions/listen',
          'content-length': String(Buffer.byteLength(body)),
        },
      },
      (res) => {
        this.status = res.statusCode ?? 0;
        res.on('data', (chunk: Buffer) =>
          this.onData(chunk.toString('utf8'), res.headers['content-type'] ?? ''),
        );
        res.on('end', () => (this.ended = true));
        res.on('close', () => (this.ended = true));
        res.on('error', () => (this.ended = true));
      },
    );
    this.req.on('error', () => (this.ended = true));
    this.req.end(body);
  }

  /** Notifications received with `method`. */
  notifications(method: string): JsonRpcResponse[] {
    return this.messages.filter((m) => (m as { method?: string }).method === method);
  }

  get acknowledged(): boolean {
    return this.notifications('notifications/subscriptions/acknowledged').length > 0;
  }

  /** Destroys the socket without any goodbye: the client vanished. */
  destroy(): void {
    this.req.destroy();
  }

  private onData(chunk: string, type: string): void {
    this.text += chunk;
    if (type.includes('application/json')) {
      try {
        this.messages.push(JSON.parse(this.text) as JsonRpcResponse);
        this.text = '';
      } catch {
        // incomplete
      }
      return;
    }
    let end: number;
    while ((end = this.text.indexOf('\n\n')) >= 0) {
      const event = this.text.slice(0, end);
      this.text = this.text.slice(end + 2);
      const data = event
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trim())
        .join('');
      if (data !== '') this.messages.push(JSON.parse(data) as JsonRpcResponse);
    }
  }
}

/** A raw stdio 2026-07-28 listen request message. */
export function listenMessage(
  id: number | string,
  notifications: Record<string, unknown>,
): Record<string, unknown> {
  return {
    jsonrpc: '2.0',
    id,
    method: 'subscriptions/listen',
    params: {
      _meta: {
        'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
        'io.modelcontextprotocol/clientCapabilities': {},
        'io.modelcontextprotocol/clientInfo': CLIENT_INFO,
      },
      notifications,
    },
  };
}

/** Parsed JSON lines (unparseable ones skipped). */
export function parsedLines(lines: string[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of lines) {
    try {
      out.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // not JSON
    }
  }
  return out;
}

export { Client };

/** A raw newline-delimited JSON-RPC connection to `reservoir.serveStdio`, in process. */
export class RawInProcessStdio {
  readonly lines: string[] = [];
  private readonly toServer = new PassThrough();
  private readonly toClient = new PassThrough();
  private buffer = '';

  constructor(reservoir: Reservoir) {
    reservoir.serveStdio({ stdin: this.toServer, stdout: this.toClient });
    this.toClient.on('data', (chunk: Buffer) => {
      this.buffer += chunk.toString('utf8');
      let newline: number;
      while ((newline = this.buffer.indexOf('\n')) >= 0) {
        this.lines.push(this.buffer.slice(0, newline));
        this.buffer = this.buffer.slice(newline + 1);
      }
    });
  }

  send(message: unknown): void {
    this.toServer.write(`${JSON.stringify(message)}\n`);
  }

  messages(): Record<string, unknown>[] {
    return parsedLines(this.lines);
  }

  /** The client hangs up. */
  end(): void {
    this.toServer.end();
  }
}
