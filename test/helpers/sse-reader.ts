/**
 * An SSE response read event by event as it arrives, over a raw node:http request, so a test can
 * stop reading in the middle of a stream (drop the connection) and resume it with `Last-Event-ID`.
 */
import { request as httpRequest, type ClientRequest } from 'node:http';

export interface SseEvent {
  id?: string;
  retry?: number;
  /** The `data:` lines joined; empty for a priming event. */
  data: string;
}

export class SseReader {
  readonly status: Promise<number>;
  private readonly req: ClientRequest;
  private buffer = '';
  private readonly events: SseEvent[] = [];
  private waiting: (() => void) | undefined;
  private ended = false;
  private failure: Error | undefined;

  constructor(
    url: string,
    init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string },
  ) {
    const target = new URL(url);
    const headers = {
      ...init.headers,
      ...(init.body === undefined
        ? {}
        : { 'content-length': String(Buffer.byteLength(init.body)) }),
    };
    let setStatus!: (status: number) => void;
    this.status = new Promise((resolve) => (setStatus = resolve));
    this.req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: init.method,
        headers,
        agent: false,
      },
      (res) => {
        setStatus(res.statusCode ?? 0);
        res.setEncoding('utf8');
        res.on('data', (text: string) => this.take(text));
        res.on('end', () => this.finish());
        res.on('error', (error) => this.finish(error));
      },
    );
    this.req.on('error', (error) => this.finish(error));
    if (init.body !== undefined) this.req.write(init.body);
    this.req.end();
  }

  /** The next event; rejects when the stream ends first. */
  async next(): Promise<SseEvent> {
    while (this.events.length === 0) {
      if (this.failure !== undefined) throw this.failure;
      if (this.ended) throw new Error('the stream ended');
      await new Promise<void>((resolve) => (this.waiting = resolve));
    }
    return this.events.shift()!;
  }

  /** Every event until the server ends the stream. */
  async rest(): Promise<SseEvent[]> {
    const all: SseEvent[] = [];
    for (;;) {
      try {
        all.push(await this.next());
      } catch (error) {
        if (this.ended && this.failure === undefined) return all;
        throw error;
      }
    }
  }

  /** Drops the connection, as a client whose network failed. */
  drop(): void {
    this.req.destroy();
  }

  private take(text: string): void {
    this.buffer += text;
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const event: SseEvent = { data: '' };
      const data: string[] = [];
      let isEvent = false;
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue; // a comment (keep-alive)
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        isEvent = true;
        if (field === 'id') event.id = value;
        else if (field === 'retry') event.retry = Number(value);
        else if (field === 'data') data.push(value);
      }
      if (!isEvent) continue;
      event.data = data.join('\n');
      this.events.push(event);
    }
    this.wake();
  }

  private finish(error?: Error): void {
    this.ended = true;
    if (error !== undefined && this.failure === undefined) this.failure = error;
    this.wake();
  }

  private wake(): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.();
  }
}
