/**
 * The stdio connection's transport, seen by the SDK's `serveStdio` as the wire. It passes every
 * message through, except that a 2026-07-28 `subscriptions/listen` is admitted first (watches
 * retained, filter narrowed; see mcp/listen-admission.ts) and released when the client cancels it or the
 * connection closes. Other messages are not held back while a listen is being admitted.
 */
import type {
  JSONRPCMessage,
  MessageExtraInfo,
  Transport,
  TransportSendOptions,
} from '@modelcontextprotocol/server';
import type { Logger } from '../core/log.js';
import type { Channel } from '../core/subscriptions.js';
import { cancellationOf } from '../mcp/direct/reads-in-flight.js';
import { admitListen, isModernListen, listenError } from '../mcp/listen-admission.js';

type Id = string | number;

export class ListenAdmittingTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;

  /** Admitted listens: id → release. `undefined` while admission is still under way. */
  private readonly listens = new Map<Id, (() => void) | undefined>();
  private readonly cancelledEarly = new Set<Id>();
  private closed = false;

  constructor(
    private readonly inner: Transport,
    private readonly channel: Channel,
    private readonly maxUrisPerListen: number,
    private readonly logger: Logger,
  ) {}

  /** Listen streams currently admitted on this connection. */
  get openListens(): number {
    return this.listens.size;
  }

  async start(): Promise<void> {
    this.inner.onmessage = (message, extra) => this.inbound(message, extra);
    this.inner.onerror = (error) => this.onerror?.(error);
    this.inner.onclose = () => {
      this.closed = true;
      for (const release of this.listens.values()) release?.();
      this.listens.clear();
      this.channel.close();
      this.onclose?.();
    };
    await this.inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    // The SDK answers a listen with its completion result when it ends one (shutdown): release it.
    if ('id' in message && message.id !== undefined && ('result' in message || 'error' in message))
      this.release(message.id);
    return this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  private inbound(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    if (isModernListen(message)) {
      void this.admit(message, extra);
      return;
    }
    const cancelled = cancellationOf(message);
    if (cancelled !== undefined) {
      const id = cancelled.requestId;
      if (this.listens.has(id)) {
        if (this.listens.get(id) === undefined) this.cancelledEarly.add(id);
        else this.release(id);
      }
    }
    this.onmessage?.(message, extra);
  }

  private async admit(
    message: { id: Id; method: string; params: Record<string, unknown> },
    extra?: MessageExtraInfo,
  ): Promise<void> {
    this.listens.set(message.id, undefined);
    try {
      const admitted = await admitListen(
        this.channel,
        message.params,
        this.maxUrisPerListen,
        this.logger,
      );
      if (this.closed || this.cancelledEarly.delete(message.id)) {
        admitted.release();
        this.listens.delete(message.id);
        if (this.closed) return;
      } else {
        this.listens.set(message.id, admitted.release);
      }
      this.onmessage?.({ ...message, params: admitted.params } as JSONRPCMessage, extra);
    } catch (error) {
      this.listens.delete(message.id);
      this.cancelledEarly.delete(message.id);
      await this.inner
        .send({ jsonrpc: '2.0', id: message.id, error: listenError(error, this.logger) })
        .catch((e: unknown) => this.onerror?.(e as Error));
    }
  }

  private release(id: Id): void {
    const release = this.listens.get(id);
    if (release === undefined) return;
    this.listens.delete(id);
    release();
  }
}
