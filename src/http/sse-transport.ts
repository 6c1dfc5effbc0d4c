/**
 * One session of the 2024-11-05 HTTP+SSE transport, as an SDK `Transport`: the server's messages go
 * out as `message` events on the client's `GET /sse` response, whose first event is `endpoint`
 * (where to POST); the client's messages arrive by `POST /messages?sessionId=…` and are handed in
 * with `receive`. A client that does not read its stream cannot make the server hold its answers
 * without bound: past `maxBufferedBytes` of unsent events the session is closed.
 */
import type { ServerResponse } from 'node:http';
import type {
  AuthInfo,
  JSONRPCMessage,
  MessageExtraInfo,
  Transport,
} from '@modelcontextprotocol/server';

export class SseTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?:
    (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined;
  private closed = false;

  constructor(
    readonly sessionId: string,
    private readonly res: ServerResponse,
    /** Where the client POSTs its messages (the `endpoint` event's data). */
    private readonly endpoint: string,
    private readonly maxBufferedBytes: number,
    /** Called when the client outruns `maxBufferedBytes` (before the session closes). */
    private readonly onOverflow: (buffered: number) => void,
  ) {
    res.once('close', () => void this.close());
  }

  /** Writes the stream's head and its `endpoint` event. */
  start(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      // Proxies that buffer responses (nginx) would hold every event back.
      'x-accel-buffering': 'no',
    });
    this.res.write(`event: endpoint\ndata: ${this.endpoint}\n\n`);
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return Promise.resolve();
    // JSON.stringify escapes every newline, so one `data:` line carries the whole message.
    this.res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
    const buffered = this.res.writableLength;
    if (buffered > this.maxBufferedBytes) {
      this.onOverflow(buffered);
      void this.close();
    }
    return Promise.resolve();
  }

  /** A comment line, so proxies and clients see the stream alive while nothing happens. */
  keepAlive(): void {
    if (!this.closed && this.res.headersSent) this.res.write(': keep-alive\n\n');
  }

  /** Hands one message the client POSTed to the server. */
  receive(message: JSONRPCMessage, authInfo: AuthInfo, request: Request): void {
    this.onmessage?.(message, { authInfo, request });
  }

  get isClosed(): boolean {
    return this.closed;
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    // A client gone leaves its unsent events behind: drop them with the socket.
    if (this.res.writableLength > this.maxBufferedBytes) this.res.destroy();
    else this.res.end();
    this.onclose?.();
    return Promise.resolve();
  }
}
