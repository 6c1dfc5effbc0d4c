/**
 * A TCP proxy a test controls, to make a shared service (PostgreSQL, Redis) look down or hung and
 * come back without touching the service itself: `down()` closes the listener and cuts every open
 * connection (new ones are refused), `up()` listens again on the same port; `stall()` keeps every
 * connection open but stops forwarding in both directions (a black-holed network: new connections
 * are accepted and go nowhere either), `resume()` forwards again, what was held back included.
 * A test that speaks the protocol gives `clientFilter`: each connection gets a filter of its own,
 * handed every chunk the client writes (one write on loopback arrives as one chunk) and the function
 * that sends bytes on — to note, change or drop what the client says.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

/** What becomes of one connection's client chunks: `send` forwards bytes to the target. */
export type ClientFilter = (chunk: Buffer, send: (bytes: Buffer) => void) => void;

export interface TcpProxyOptions {
  /** Makes the filter of each new connection (stateful per connection: a packet may span chunks). */
  clientFilter?: () => ClientFilter;
}

export class TcpProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private stalled = false;
  /** What arrived while stalled, to forward on `resume()`. */
  private readonly held: (() => void)[] = [];
  port = 0;
  /** Connections accepted, and those still open. */
  connections = 0;
  open = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
    private readonly options: TcpProxyOptions = {},
  ) {}

  /** Listens (on a free port the first time, the same port after a `down()`). */
  async up(): Promise<void> {
    if (this.server !== undefined) return;
    const server = createServer((client) => {
      this.connections += 1;
      this.open += 1;
      client.once('close', () => (this.open -= 1));
      const upstream = createConnection({ host: this.targetHost, port: this.targetPort });
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.once('close', () => this.sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      this.forward(client, upstream, this.options.clientFilter?.());
      this.forward(upstream, client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  /** Stops listening and cuts every connection through it. */
  async down(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    if (server !== undefined) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Keeps every connection (and accepts new ones) but forwards nothing, either way, until `resume()`. */
  stall(): void {
    this.stalled = true;
  }

  /** Forwards again, starting with what was held back. */
  resume(): void {
    this.stalled = false;
    const held = [...this.held];
    this.held.length = 0;
    for (const send of held) send();
  }

  /** Copies `from` to `to` through `filter`, holding chunks back while stalled (in order, per direction). */
  private forward(from: Socket, to: Socket, filter?: ClientFilter): void {
    const write = (bytes: Buffer): void => void (to.destroyed ? undefined : to.write(bytes));
    from.on('data', (chunk: Buffer) => {
      const send = (): void => (filter === undefined ? write(chunk) : filter(chunk, write));
      if (this.stalled) this.held.push(send);
      else send();
    });
    from.on('end', () => {
      const end = (): void => void to.end();
      if (this.stalled) this.held.push(end);
      else end();
    });
  }
}

/** The host and port of a `postgres://` URL. */
export function hostPortOf(url: string): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: parsed.port === '' ? 5432 : Number(parsed.port) };
}

/** `url` with its host and port replaced by the proxy's. */
export function throughProxy(url: string, proxy: TcpProxy): string {
  const parsed = new URL(url);
  parsed.hostname = '127.0.0.1';
  parsed.port = String(proxy.port);
  return parsed.href;
}
