/**
 * Cluster-mode test kit: several in-process Reservoir instances on one Redis (a unique key prefix
 * per test), a polled in-memory source standing in for a database all instances share, and a plain
 * round-robin HTTP balancer (each request to the next instance, streams piped through).
 */
import { randomUUID } from 'node:crypto';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { Redis } from 'ioredis';
import type { AddressInfo } from 'node:net';
import { createCluster, type LeaseOptions } from '../../src/cluster/index.js';
import { NotFoundError } from '../../src/core/errors.js';
import type { Logger } from '../../src/core/log.js';
import type { Provider, ResourceInfo } from '../../src/core/types.js';
import type { HttpEndpoint, HttpOptions } from '../../src/http/app.js';
import { createReservoir, type Reservoir, type ReservoirOptions } from '../../src/server/index.js';
import { LEGACY_VERSION } from '../helpers/clients.js';
import { eventually } from '../helpers/eventually.js';
import { MemoryLogger } from '../subscriptions/harness.js';

export const REDIS_URL = process.env['RESERVOIR_TEST_REDIS'];
export const SECRET = 'cluster-test-secret-0123456789abcdef0123456789';
export const FAST_LEASES: LeaseOptions = { leaseMs: 1_000, tickMs: 200, interestMs: 5_000 };

/** The shared state of a polled source (a database, say): values by key, and who is polling it. */
export class Backend {
  readonly values = new Map<string, string>();
  /** Active watches by instance name. */
  readonly watching = new Map<string, number>();
  /** Active list-change listening by instance name. */
  readonly listWatching = new Map<string, number>();
  /** While set, every read and watch start waits for it (a source slow to answer); `held` counts them. */
  gate: Promise<void> | undefined;
  held = 0;

  /** Waits for the gate, if one is set. */
  async pass(): Promise<void> {
    if (this.gate === undefined) return;
    this.held += 1;
    await this.gate;
    this.held -= 1;
  }

  pollers(): string[] {
    return [...this.watching].filter(([, n]) => n > 0).map(([name]) => name);
  }

  /** Watches running, across all instances. */
  watches(): number {
    return [...this.watching.values()].reduce((sum, n) => sum + n, 0);
  }
}

export const MEM_ROOT = 'mem://data/';

/** A polled source over `backend`, as instance `instance` sees it: each watch polls every 10 ms. */
export function memProvider(backend: Backend, instance: string): Provider {
  return {
    name: 'mem',
    root: MEM_ROOT,
    async list(after, limit) {
      const keys = [...backend.values.keys()]
        .sort()
        .filter((k) => after === undefined || k > after);
      const items: ResourceInfo[] = keys
        .slice(0, limit)
        .map((k) => ({ uri: `${MEM_ROOT}${k}`, name: k, mimeType: 'text/plain' }));
      return keys.length > limit ? { items, last: keys[limit - 1]! } : { items };
    },
    async read(uri) {
      await backend.pass();
      const value = backend.values.get(uri.slice(MEM_ROOT.length));
      if (value === undefined) throw new NotFoundError(uri);
      return { contents: [{ uri, mimeType: 'text/plain', text: value }] };
    },
    async watch(uri, onChange) {
      await backend.pass();
      const key = uri.slice(MEM_ROOT.length);
      if (!backend.values.has(key)) throw new NotFoundError(uri);
      let last = backend.values.get(key);
      backend.watching.set(instance, (backend.watching.get(instance) ?? 0) + 1);
      const timer = setInterval(() => {
        const now = backend.values.get(key);
        if (now !== last) {
          last = now;
          onChange();
        }
      }, 10);
      return () => {
        clearInterval(timer);
        backend.watching.set(instance, (backend.watching.get(instance) ?? 1) - 1);
      };
    },
    onListChanged(listener) {
      let last = [...backend.values.keys()].sort().join('\n');
      backend.listWatching.set(instance, (backend.listWatching.get(instance) ?? 0) + 1);
      const timer = setInterval(() => {
        const now = [...backend.values.keys()].sort().join('\n');
        if (now !== last) {
          last = now;
          listener();
        }
      }, 10);
      return () => {
        clearInterval(timer);
        backend.listWatching.set(instance, (backend.listWatching.get(instance) ?? 1) - 1);
      };
    },
  };
}

export interface Member {
  name: string;
  reservoir: Reservoir;
  endpoint: HttpEndpoint;
  url: string;
  logger: MemoryLogger;
  close(): Promise<void>;
}

/** Each Redis outage logs one line as it starts and one as it ends. */
const OUTAGE_STARTED = /^Redis is unreachable/;
const OUTAGE_ENDED = /^Redis is back/;

/**
 * The Redis outages `member` has logged the start of and not yet the end. A test about the outage it
 * makes counts these, not the starts: on a loaded machine a stalled event loop can leave a health
 * PING unanswered past a short timeout, an outage of its own that begins and ends (two lines) before
 * the one under test.
 */
export function openOutages(member: Member): number {
  return member.logger.count('warn', OUTAGE_STARTED) - member.logger.count('warn', OUTAGE_ENDED);
}

/** Why the latest outage began, as logged. */
export function outageReason(member: Member): unknown {
  return member.logger.entries.findLast((e) => OUTAGE_STARTED.test(e.msg))?.fields['reason'];
}

/** Starts one cluster member serving `backend` over HTTP. */
export async function startMember(
  name: string,
  keyPrefix: string,
  backend: Backend,
  options: {
    redisUrl?: string;
    redisTimeoutMs?: number;
    reservoir?: ReservoirOptions;
    http?: HttpOptions;
    logger?: Logger;
    providers?: Provider[];
  } = {},
): Promise<Member> {
  const logger = new MemoryLogger();
  const cluster = createCluster({
    url: options.redisUrl ?? REDIS_URL!,
    keyPrefix,
    secret: SECRET,
    instance: name,
    leases: FAST_LEASES,
    logger,
    ...(options.redisTimeoutMs === undefined ? {} : { timeoutMs: options.redisTimeoutMs }),
  });
  const reservoir = createReservoir({
    secret: SECRET,
    logger,
    cluster,
    providers: options.providers ?? [memProvider(backend, name)],
    ...options.reservoir,
  });
  await cluster.ready().catch(() => undefined);
  const endpoint = await reservoir.listen({ port: 0, ...options.http });
  let closed = false;
  return {
    name,
    reservoir,
    endpoint,
    url: endpoint.url,
    logger,
    close: async () => {
      if (closed) return;
      closed = true;
      await reservoir.close();
    },
  };
}

/**
 * Resolves once a GET stream of 2025-era session `id` is marked open on some member in Redis (under
 * `keyPrefix`): from then on an edit of its subscriptions elsewhere waits for that member to follow.
 */
export async function streamMarked(keyPrefix: string, id: string): Promise<void> {
  const redis = new Redis(REDIS_URL!);
  try {
    await eventually(async () => {
      for (const marks of await redis.keys(`${keyPrefix}streaming:*`))
        if ((await redis.zscore(marks, id)) !== null) return true;
      return false;
    }, `a GET stream of session ${id} to be marked open`);
  } finally {
    redis.disconnect();
  }
}

export function uniquePrefix(): string {
  return `test:${randomUUID()}:`;
}

/** A plain round-robin balancer: each request (and each stream) goes to the next instance. */
export async function roundRobin(
  urls: string[],
): Promise<{ url: string; hits: number[]; close(): Promise<void> }> {
  const targets = urls.map((u) => new URL(u));
  const hits = targets.map(() => 0);
  let next = 0;
  const server: Server = createServer((req, res) => {
    const index = next;
    next = (next + 1) % targets.length;
    hits[index]! += 1;
    const target = targets[index]!;
    const upstream = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: req.url,
        method: req.method,
        headers: { ...req.headers, host: target.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** POSTs the JSON-RPC `message` to the member at `url` on 2025-era session `id`. */
export function sessionPost(url: string, id: string, message: unknown): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': id,
      'mcp-protocol-version': LEGACY_VERSION,
    },
    body: JSON.stringify(message),
  });
}

/**
 * The HTTP status the member at `url` answers a 2025-era request on session `id` with: 200 where
 * the session is served, 404 where it is unknown or ended.
 */
export async function sessionStatus(url: string, id: string): Promise<number> {
  const answer = await sessionPost(url, id, {
    jsonrpc: '2.0',
    id: 9,
    method: 'resources/list',
    params: {},
  });
  await answer.body?.cancel();
  return answer.status;
}
