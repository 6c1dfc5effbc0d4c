/**
 * Plain requests on a stdio connection answered by the wire rather than the SDK's dispatch, on a
 * connection that negotiated a 2025-era revision: `resources/read` through the direct read
 * (read.ts; plain-read.ts says what is plain), `resources/subscribe` / `resources/unsubscribe`
 * through the connection's server instance's subscriber (subscribe.ts), and `tools/call` of a
 * one-round tool through that instance's tool caller (tools.ts), once the instance exists.
 * Everything else — other methods, a request with `_meta`, a reused id, any request before
 * `initialize` was answered, a tool that may ask for input, every 2026-07-28 request — goes to the
 * SDK as before.
 *
 * Cancellation is the SDK's: `notifications/cancelled` for a request in flight aborts it, and its
 * answer is never written. Closing the connection aborts every request in flight (reads-in-flight.ts).
 */
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/server';
import { LEGACY_REVISIONS } from '../revisions.js';
import type { LegacyToolCaller } from '../direct-tools.js';
import type { LegacySubscriber } from '../subscribe.js';
import type { EncodedLine } from './base64-run.js';
import { plainReadOf } from './plain-read.js';
import type { DirectRead } from './read.js';
import { ReadsInFlight, type RunningRead } from './reads-in-flight.js';
import { answerSubscribe, plainSubscribeOf } from './subscribe.js';
import { answerToolCall, plainToolCallOf } from './tools.js';

export interface StdioDirectOptions {
  /** Answers plain reads; none leaves them to the SDK. */
  read?: DirectRead | undefined;
  /** The connection's 2025-era subscriber, once its server instance is made; none leaves subscribes to the SDK. */
  subscriber?: (() => LegacySubscriber | undefined) | undefined;
  /** The connection's 2025-era tool caller, once its server instance is made; none leaves tool calls to the SDK. */
  tools?: (() => LegacyToolCaller | undefined) | undefined;
}

export class StdioDirectAnswers {
  private readonly running = new ReadsInFlight();
  private readonly read: DirectRead | undefined;
  private readonly subscriber: (() => LegacySubscriber | undefined) | undefined;
  private readonly tools: (() => LegacyToolCaller | undefined) | undefined;

  constructor(
    options: StdioDirectOptions,
    /** Writes an encoded answer (one line's content, without its newline). */
    private readonly write: (encoded: EncodedLine, id: RequestId) => void,
  ) {
    this.read = options.read;
    this.subscriber = options.subscriber;
    this.tools = options.tools;
  }

  /** Takes `message` when it is a plain request this connection answers directly; true when taken. */
  take(message: JSONRPCMessage, revision: string | undefined): boolean {
    if (revision === undefined || !LEGACY_REVISIONS.has(revision)) return false;
    if (!('method' in message)) return false;
    if (message.method === 'resources/read') {
      const read = this.read;
      const plain = read === undefined ? undefined : plainReadOf(message, 'legacy');
      if (read === undefined || plain === undefined) return false;
      return this.answer(plain.id, (running) =>
        read(plain.id, plain.uri, undefined, running.cancel, 'legacy'),
      );
    }
    if (message.method === 'tools/call') {
      const call = plainToolCallOf(message);
      const tools = call === undefined ? undefined : this.tools?.();
      if (call === undefined || tools === undefined || !tools.takes(call.name)) return false;
      return this.answer(call.id, (running) => answerToolCall(tools, call, running.cancel));
    }
    const plain = plainSubscribeOf(message);
    const subscriber = plain === undefined ? undefined : this.subscriber?.();
    if (plain === undefined || subscriber === undefined) return false;
    return this.answer(plain.id, (running) => answerSubscribe(subscriber, plain, running.cancel));
  }

  /** Notes a notification on its way to the SDK: a cancellation of a direct request aborts it. */
  notified(message: JSONRPCMessage): void {
    this.running.cancelNamedIn(message);
  }

  /** The connection closed: every request in flight is aborted and none is answered. */
  close(): void {
    this.running.close();
  }

  /** Runs `work` as request `id` unless one of that id runs here already; true when taken. */
  private answer(
    id: RequestId,
    work: (running: RunningRead) => Promise<EncodedLine> | undefined,
  ): boolean {
    const running = this.running.start(id);
    if (running === undefined) return false;
    const pending = work(running);
    if (pending === undefined) {
      running.done();
      return false;
    }
    // Both paths answer every failure in-band; a rejection here would be a bug, not the caller's.
    void pending.then((encoded) => {
      const cancelled = running.cancelled();
      running.done();
      if (!cancelled) this.write(encoded, id);
    });
    return true;
  }
}
