/**
 * The endpoint's part of the drain on shutdown (docs/operations.md, "Shutdown: the drain"): it
 * counts the `/mcp` requests taken until their responses end (notification streams — a 2025 GET, a
 * 2026 `subscriptions/listen` — are not waited for: close() ends them), and once draining, stops
 * accepting connections, closes idle ones, marks answers not yet begun `Connection: close`, and
 * refuses requests that still arrive on kept-alive connections with 503 `shutting_down`.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { InFlight } from '../core/in-flight.js';
import type { Logger } from '../core/log.js';
import { shuttingDownError } from '../mcp/errors.js';

export class EndpointDrain {
  private readonly answering = new InFlight<ServerResponse>();
  private server: Server | undefined;
  private stopped: Promise<void> | undefined;
  /** Set once the drain (or close) began. */
  draining = false;

  constructor(private readonly logger: Logger) {}

  /** The listening server it stops (set once it exists). */
  attach(server: Server): void {
    this.server = server;
  }

  /** Counts one `/mcp` request taken until its response ends. */
  track(req: IncomingMessage, res: ServerResponse): void {
    if (!isNotificationStream(req)) {
      this.answering.add(res);
      res.once('close', () => this.answering.delete(res));
    }
    // A response that ends while draining (a listen stream answered at shutdown) leaves its
    // keep-alive connection idle only after closeIdleConnections() ran: close it then.
    res.once('close', () => {
      if (this.draining) setImmediate(() => this.server?.closeIdleConnections());
    });
  }

  /** Answers a request that arrived during the drain: 503, the JSON-RPC `shutting_down` error, the connection closed. */
  refuse(res: ServerResponse): void {
    res
      .writeHead(503, {
        'content-type': 'application/json',
        connection: 'close',
        'retry-after': '1',
      })
      .end(JSON.stringify(shuttingDownError(null)));
  }

  /** /readyz while draining: not ready, so a load balancer sends nothing more. */
  refuseReadiness(res: ServerResponse): void {
    res
      .writeHead(503, { 'content-type': 'application/json', connection: 'close' })
      .end(JSON.stringify({ status: 'draining' }));
  }

  /** Stops accepting connections and closes idle ones; resolves when the listener has closed. */
  stopAccepting(): Promise<void> {
    this.draining = true;
    const server = this.server;
    if (server === undefined) return Promise.resolve();
    this.stopped ??= new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    return this.stopped;
  }

  /** Stops accepting, then resolves with the number of requests unanswered: 0, or those left when `signal` aborted. */
  async drain(signal?: AbortSignal): Promise<number> {
    void this.stopAccepting();
    // Answers not yet begun tell their client this connection ends with them.
    for (const res of this.answering.values())
      if (!res.headersSent) res.setHeader('connection', 'close');
    if (!(await this.answering.idle(signal)))
      this.logger.warn(
        { unanswered: this.answering.size, transport: 'http' },
        'closing with requests unanswered: the grace period ran out',
      );
    return this.answering.size;
  }
}

/**
 * A request that opens a notification stream, which lasts until the client or the server ends it:
 * a 2025-era GET, a 2026-07-28 `subscriptions/listen`. A drain does not wait for these.
 */
function isNotificationStream(req: IncomingMessage): boolean {
  return (
    req.method === 'GET' ||
    (req.method === 'POST' && req.headers['mcp-method'] === 'subscriptions/listen')
  );
}
