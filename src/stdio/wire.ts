/**
 * The stdio wire: newline-delimited JSON-RPC over a readable and a writable stream (the process's
 * stdin and stdout), as the Transport the SDK's `serveStdio` entry drives. It does what the SDK's
 * `StdioServerTransport` does, with these differences:
 *
 * - Outbound messages written in one turn of the event loop go out in one write: a burst of 16
 *   answers costs one system call, not 16. The base64 of a blob this process read is made piece by
 *   piece as stdout takes it (outbound.ts): a 7 MiB range never becomes a 9.3 MiB string.
 * - A message larger than the limit is answered with an error naming the limit (when its `id` can
 *   be read from its first bytes) and skipped; the connection stays up. The SDK closes it.
 * - An invalid message shaped like a request (a `method` and an `id`) is answered with -32600, as
 *   the HTTP endpoint answers it; the SDK only reports it.
 * - JSON-RPC batches are answered on connections at revision 2025-03-26 (`batch.ts`).
 * - A plain `resources/read`, `resources/subscribe`, `resources/unsubscribe` or one-round `tools/call`
 *   on a 2025-era connection is answered without the SDK's dispatch, through the direct read and the
 *   connection's subscriber and tool caller when the server passes them (`mcp/direct/stdio.ts`).
 * - End of input drains instead of closing at once (the SDK aborts what is in flight): every line
 *   read is processed and every request taken is answered, then the wire closes. `drain()` does the
 *   same on shutdown, answering requests that arrive meanwhile with a `shutting_down` error.
 */
import type { Readable, Writable } from 'node:stream';
import {
  STDIO_DEFAULT_MAX_BUFFER_SIZE,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type RequestId,
  type Transport,
} from '@modelcontextprotocol/server';
import { InFlight } from '../core/in-flight.js';
import type { DirectRead } from '../mcp/direct/read.js';
import { Base64Run, type EncodedLine, type EncodedPiece } from '../mcp/direct/base64-run.js';
import { encodeMessage } from '../mcp/direct/encode.js';
import { shuttingDownError } from '../mcp/errors.js';
import { headId, toJsonRpcMessage } from './jsonrpc.js';
import { encodeBatch, invalidRequest, requestIdOf, StdioBatches } from './batch.js';
import { cancellationOf } from '../mcp/direct/reads-in-flight.js';
import { StdioDirectAnswers } from '../mcp/direct/stdio.js';
import type { LegacyToolCaller } from '../mcp/direct-tools.js';
import type { LegacySubscriber } from '../mcp/subscribe.js';
import { writeCorked, writeStreaming } from './outbound.js';

const NEWLINE = 0x0a;
/** How much of an oversized message is kept to find its id. */
const HEAD_BYTES = 4096;
const INVALID_REQUEST = -32600;

export interface StdioWireOptions {
  /** Largest inbound message, in bytes. @default 10485760 (10 MiB, the SDK's own limit) */
  maxMessageBytes?: number | undefined;
  /** Answers plain `resources/read` requests without the SDK's dispatch (mcp/direct/stdio.ts). */
  directRead?: DirectRead | undefined;
  /**
   * The connection's 2025-era subscriber once its server instance is made: plain subscribes and
   * unsubscribes are answered through it without the SDK's dispatch (mcp/direct/stdio.ts).
   */
  subscriber?: (() => LegacySubscriber | undefined) | undefined;
  /** The connection's 2025-era tool caller, as `subscriber` is, for plain `tools/call` requests. */
  tools?: (() => LegacyToolCaller | undefined) | undefined;
  /**
   * Called at the end of input, instead of the wire draining and closing by itself: the owner
   * drains (`drain(signal)`, bounded by its grace period) and closes.
   */
  onInputEnd?: (() => void) | undefined;
}

export class StdioWire implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;

  private readonly maxMessageBytes: number;
  /** Pieces of the line being received (it has not reached its newline yet). */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Set while the rest of an oversized line is being skipped. */
  private skipping: { head: string; bytes: number } | undefined;
  /** Encoded lines waiting for this turn's write (with their newlines), and the promise they share. */
  private outbox: EncodedPiece[] = [];
  private flushed: Promise<void> | undefined;
  /** The last write handed to stdout (settles when it is done). */
  private writing: Promise<void> | undefined;
  /** Set while a write of base64 runs streams (outbound.ts): the next flush waits for it. */
  private streaming = false;
  private settle: { resolve: () => void; reject: (error: Error) => void } | undefined;
  private started = false;
  private closed = false;
  private inputEnded = false;
  /** Set by drain(): requests read from now on are answered `shutting_down`. */
  private refusing = false;
  /** Requests taken and not yet answered (a 2026 listen is not counted: it is ended at close). */
  private readonly inFlight = new InFlight<RequestId>();
  private readonly onEnd: (() => void) | undefined;
  private readonly batches = new StdioBatches();
  private readonly direct: StdioDirectAnswers | undefined;

  constructor(
    private readonly stdin: Readable,
    private readonly stdout: Writable,
    options: StdioWireOptions = {},
  ) {
    this.maxMessageBytes = options.maxMessageBytes ?? STDIO_DEFAULT_MAX_BUFFER_SIZE;
    if ([options.directRead, options.subscriber, options.tools].some((o) => o !== undefined)) {
      this.direct = new StdioDirectAnswers(
        { read: options.directRead, subscriber: options.subscriber, tools: options.tools },
        (encoded, id) => {
          this.writeAnswer(encoded);
          this.inFlight.delete(id);
        },
      );
    }
    this.onEnd = options.onInputEnd;
  }

  /** Requests read and not yet answered. */
  get pendingRequests(): number {
    return this.inFlight.size;
  }

  /**
   * Drains for shutdown: requests read from now on are refused with a `shutting_down` error, and
   * this resolves once every request taken before has its answer written (true), or when `signal`
   * aborts first (false). Notifications (cancellations) still pass. The wire stays open.
   */
  async drain(signal?: AbortSignal): Promise<boolean> {
    this.refusing = true;
    const idle = await this.inFlight.idle(signal);
    // The last answers may still wait for this turn's write, or for the write under way.
    for (;;) {
      const write = this.flushed ?? this.writing;
      if (write === undefined || this.closed) break;
      await write.catch(() => undefined);
      if (this.flushed === undefined) break;
    }
    return idle;
  }

  start(): Promise<void> {
    if (this.started) return Promise.reject(new Error('StdioWire already started'));
    this.started = true;
    this.stdin.on('data', this.onData);
    this.stdin.on('error', this.onInputError);
    this.stdin.on('end', this.onInputEnd);
    this.stdin.on('close', this.onInputEnd);
    // Stays attached after close: a late EPIPE must not become an uncaught exception.
    this.stdout.on('error', this.onOutputError);
    if (this.stdin.readableEnded || this.stdin.destroyed) setImmediate(this.onInputEnd);
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (!('method' in message) && 'id' in message && message.id !== undefined)
      this.inFlight.delete(message.id);
    if (this.closed) return Promise.reject(new Error('stdio connection is closed'));
    const batch = this.batches.outbound(message);
    if (batch === undefined) this.enqueue(encodeMessage(message));
    else if (batch.length === 0)
      return Promise.resolve(); // held until the rest of its batch is answered
    else this.enqueue(encodeBatch(batch));
    return this.scheduled();
  }

  /** Writes an answer encoded elsewhere (a direct read's); dropped once the connection closed. */
  private writeAnswer(encoded: EncodedLine): void {
    if (this.closed) return;
    this.enqueue(encoded);
    this.scheduled().catch((error: unknown) => this.onerror?.(error as Error));
  }

  private enqueue(line: EncodedLine): void {
    if (typeof line === 'string') this.outbox.push(`${line}\n`);
    else this.outbox.push(...line, '\n');
  }

  /** The promise of this turn's write, scheduling it if it is the first. */
  private scheduled(): Promise<void> {
    if (this.flushed === undefined) {
      this.flushed = new Promise<void>((resolve, reject) => (this.settle = { resolve, reject }));
      setImmediate(this.flush);
    }
    return this.flushed;
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    this.stdin.off('data', this.onData);
    this.stdin.off('error', this.onInputError);
    this.stdin.off('end', this.onInputEnd);
    this.stdin.off('close', this.onInputEnd);
    if (this.stdin.listenerCount('data') === 0) this.stdin.pause();
    this.pending = [];
    this.direct?.close();
    this.onclose?.();
    return Promise.resolve();
  }

  private readonly flush = (): void => {
    // A streaming write is under way: its end flushes again, so lines never interleave.
    if (this.streaming) return;
    const { outbox, settle } = this;
    this.writing = this.flushed;
    this.outbox = [];
    this.flushed = undefined;
    this.settle = undefined;
    if (settle === undefined) return;
    if (this.closed) {
      settle.reject(new Error('stdio connection is closed'));
      return;
    }
    // Text alone is written as text (no copy into bytes first). Kept encodings and blob bytes go
    // out as they are, between runs of text, in one corked write (writev): never copied together.
    // A blob read here goes out as its base64 is made, piece by piece as stdout takes it.
    const done = (error: Error | null | undefined): void =>
      error ? settle.reject(error) : settle.resolve();
    if (!outbox.some((part) => typeof part !== 'string')) {
      this.stdout.write(outbox.join(''), done);
      return;
    }
    if (outbox.some((part) => part instanceof Base64Run)) {
      this.streaming = true;
      void writeStreaming(this.stdout, outbox, () => this.closed).then(
        () => this.streamed(done),
        (error: Error) => this.streamed(done, error),
      );
      return;
    }
    writeCorked(this.stdout, outbox as Array<string | Buffer>, done);
  };

  /** A streaming write ended: settles its senders, then writes what queued meanwhile. */
  private streamed(done: (error?: Error) => void, error?: Error): void {
    this.streaming = false;
    done(error);
    if (this.flushed !== undefined) this.flush();
  }

  private readonly onData = (chunk: Buffer | string): void => {
    const data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    let start = 0;
    let newline: number;
    while ((newline = data.indexOf(NEWLINE, start)) !== -1) {
      this.take(data.subarray(start, newline));
      this.endLine();
      start = newline + 1;
    }
    if (start < data.length) this.take(data.subarray(start));
  };

  /** Adds a piece of the current line, or switches to skipping it once it is over the limit. */
  private take(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.skipping !== undefined) {
      this.skipping.bytes += piece.length;
      return;
    }
    this.pendingBytes += piece.length;
    if (this.pendingBytes <= this.maxMessageBytes) {
      this.pending.push(piece);
      return;
    }
    this.skipping = { head: headOf([...this.pending, piece]), bytes: this.pendingBytes };
    this.pending = [];
    this.pendingBytes = 0;
  }

  private endLine(): void {
    if (this.skipping !== undefined) {
      const { head, bytes } = this.skipping;
      this.skipping = undefined;
      this.refuseOversized(head, bytes);
      return;
    }
    const pieces = this.pending;
    if (pieces.length === 0) return;
    this.pending = [];
    this.pendingBytes = 0;
    const line =
      pieces.length === 1 ? pieces[0]!.toString('utf8') : Buffer.concat(pieces).toString('utf8');
    this.deliver(line.endsWith('\r') ? line.slice(0, -1) : line);
  }

  private deliver(line: string): void {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      this.onerror?.(
        new Error(
          `Discarded a stdio line that is not a JSON-RPC message: ${(error as Error).message}`,
        ),
      );
      return;
    }
    if (Array.isArray(value)) return this.deliverBatch(value);
    let message: JSONRPCMessage;
    try {
      message = toJsonRpcMessage(value);
    } catch (error) {
      this.onerror?.(
        new Error(
          `Discarded a stdio line that is not a JSON-RPC message: ${(error as Error).message}`,
        ),
      );
      const id = requestIdOf(value);
      if (id !== undefined) this.answer(invalidRequest(id));
      return;
    }
    if (!this.admit(message)) return;
    this.batches.inbound(message);
    if (this.direct !== undefined) {
      if (this.direct.take(message, this.batches.negotiated)) return;
      this.direct.notified(message);
    }
    this.onmessage?.(message);
  }

  private deliverBatch(items: unknown[]): void {
    const plan = this.batches.plan(items);
    if (plan.answer !== undefined && !Array.isArray(plan.answer))
      this.onerror?.(
        new Error(
          `Refused a stdio batch: ${(plan.answer as { error: { message: string } }).error.message}`,
        ),
      );
    for (const message of plan.deliver) if (this.admit(message)) this.onmessage?.(message);
    if (plan.answer === undefined) return;
    if (Array.isArray(plan.answer)) {
      this.enqueue(encodeBatch(plan.answer));
      this.scheduled().catch((error: unknown) => this.onerror?.(error as Error));
    } else this.answer(plan.answer);
  }

  /**
   * Counts a request taken (or, while draining, refuses it: false) and forgets one the client
   * cancelled, which is never answered.
   */
  private admit(message: JSONRPCMessage): boolean {
    if (!('method' in message)) return true;
    if ('id' in message && message.id !== undefined) {
      if (this.refusing) {
        this.answer(shuttingDownError(message.id));
        return false;
      }
      if (message.method !== 'subscriptions/listen') this.inFlight.add(message.id);
      return true;
    }
    const cancelled = cancellationOf(message);
    if (cancelled !== undefined) this.inFlight.delete(cancelled.requestId);
    return true;
  }

  /** Writes an answer the wire itself gives (not the server). */
  private answer(message: JSONRPCMessage): void {
    this.send(message).catch((error: unknown) => this.onerror?.(error as Error));
  }

  private refuseOversized(head: string, bytes: number): void {
    const message = `Message of ${bytes} bytes exceeds the ${this.maxMessageBytes}-byte limit of this stdio connection`;
    this.onerror?.(new Error(message));
    const id = headId(head);
    if (id === undefined) return;
    this.answer({
      jsonrpc: '2.0',
      id,
      error: { code: INVALID_REQUEST, message, data: { bytes, limit: this.maxMessageBytes } },
    });
  }

  private readonly onInputError = (error: Error): void => {
    this.onerror?.(error);
  };

  private readonly onInputEnd = (): void => {
    if (this.inputEnded || this.closed) return;
    this.inputEnded = true;
    this.stdin.off('data', this.onData);
    if (this.onEnd !== undefined) this.onEnd();
    else void this.drain().then(() => this.close());
  };

  private readonly onOutputError = (error: Error): void => {
    if (this.closed) return;
    this.onerror?.(error);
    void this.close();
  };
}

/** The first HEAD_BYTES of a line held in pieces, decoded: only as many pieces as that takes are copied. */
function headOf(pieces: readonly Buffer[]): string {
  const taken: Buffer[] = [];
  let bytes = 0;
  for (const piece of pieces) {
    if (bytes >= HEAD_BYTES) break;
    taken.push(piece);
    bytes += piece.length;
  }
  return Buffer.concat(taken).toString('utf8', 0, HEAD_BYTES);
}
