// The SDK client's side of a stdio connection, for tests that serve Reservoir over in-memory
// streams (`reservoir.serveStdio({ stdin, stdout })`), or over the pipes of a child they spawned
// themselves (to signal it), and drive it with the real Client.
import type { Readable, Writable } from 'node:stream';
import {
  ReadBuffer,
  serializeMessage,
  type JSONRPCMessage,
  type Transport,
} from '@modelcontextprotocol/client';

/** Newline-delimited JSON over two streams: reads the server's stdout, writes its stdin. */
export class StreamClientTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly buffer = new ReadBuffer();
  private closed = false;

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
  ) {}

  async start(): Promise<void> {
    this.input.on('data', (chunk: Buffer) => {
      this.buffer.append(chunk);
      for (;;) {
        let message: JSONRPCMessage | null;
        try {
          message = this.buffer.readMessage();
        } catch (error) {
          this.onerror?.(error as Error);
          continue;
        }
        if (message === null) break;
        this.onmessage?.(message);
      }
    });
    this.input.on('end', () => void this.close());
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) throw new Error('closed');
    this.output.write(serializeMessage(message));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.output.end();
    this.onclose?.();
  }
}
