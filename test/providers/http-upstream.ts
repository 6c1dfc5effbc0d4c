/**
 * A local upstream for the HTTP provider tests: a node:http server on 127.0.0.1 (or another
 * loopback address) whose routes the tests define, recording every request it receives (raw path,
 * headers) so tests can count upstream traffic and inspect what was sent. Only loopback traffic.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { definedProps } from '../../src/core/defined.js';
import {
  httpProvider,
  type HttpProvider,
  type HttpProviderOptions,
} from '../../src/providers/http/index.js';

export interface SeenRequest {
  /** The raw request target, exactly as sent (percent-encoding intact). */
  url: string;
  headers: IncomingMessage['headers'];
}

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export class Upstream {
  readonly requests: SeenRequest[] = [];
  private readonly routes = new Map<string, Handler>();
  private readonly server: Server;
  private fallback: Handler = (_req, res) => {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('no such route');
  };

  private constructor(readonly host: string) {
    this.server = createServer((req, res) => {
      this.requests.push({ url: req.url ?? '', headers: req.headers });
      const path = (req.url ?? '').split('?')[0]!;
      (this.routes.get(path) ?? this.fallback)(req, res);
    });
  }

  static async start(host = '127.0.0.1'): Promise<Upstream> {
    const upstream = new Upstream(host);
    await new Promise<void>((resolve) => upstream.server.listen(0, host, resolve));
    return upstream;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get origin(): string {
    return `http://${this.host}:${this.port}`;
  }

  /** Serves `handler` at the raw path `path` (query ignored for routing). */
  route(path: string, handler: Handler): this {
    this.routes.set(path, handler);
    return this;
  }

  /** Serves everything else (the raw path is in req.url). */
  otherwise(handler: Handler): this {
    this.fallback = handler;
    return this;
  }

  /** Requests whose raw path (without query) is `path`. */
  hits(path: string): SeenRequest[] {
    return this.requests.filter((r) => r.url.split('?')[0] === path);
  }

  reset(): void {
    this.requests.length = 0;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A JSON handler. */
export function json(value: unknown, headers: Record<string, string> = {}, status = 200): Handler {
  const body = JSON.stringify(value);
  return (_req, res) =>
    void res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(body);
}

/** A handler answering `body` with `type`. */
export function respond(
  body: string | Buffer,
  type: string | undefined,
  headers: Record<string, string> = {},
  status = 200,
): Handler {
  return (_req, res) =>
    void res.writeHead(status, { ...definedProps({ 'content-type': type }), ...headers }).end(body);
}

/** A provider against `upstream`, private networks allowed (the upstream is on loopback). */
export function providerFor(
  upstream: Upstream,
  options: Partial<HttpProviderOptions> = {},
): HttpProvider {
  return httpProvider({
    name: 'test',
    baseUrl: options.baseUrl ?? `${upstream.origin}/`,
    allowPrivateNetworks: true,
    endpoints: [{ name: 'status', uri: 'status', upstream: 'status' }],
    ...options,
  });
}
