/**
 * Plain JSON answers for 2025-era POSTs that need no stream. The SDK's session transport answers
 * every POST as an SSE stream; some clients (Python's `mcp` 2.x, FastMCP) refuse any SSE event over
 * 1 MiB, so a large read never reached them. Here, as the SDK's own 2026-07-28 path does
 * ("auto" response mode), the answer is decided by what the server actually sends: when the first
 * message for the request is its response, it goes out as `application/json`; when something comes
 * first (progress, a log message, a server request such as elicitation or sampling), the SDK's SSE
 * stream is answered as it is, from its first event.
 *
 * The shaper sits between the server and the SDK transport (it sees every outbound message before
 * the transport frames it), so a JSON answer is never framed as SSE nor kept in the event store.
 */
import {
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type RequestId,
  type Transport,
} from '@modelcontextprotocol/server';
import type { SessionEventStore } from './event-store.js';

type Decision = { kind: 'json'; message: JSONRPCMessage } | { kind: 'stream' } | { kind: 'gone' };

interface Pending {
  decide(decision: Decision): void;
  /** Set once the SDK has answered the POST (its SSE stream): cancelled when JSON wins. */
  stream?: ReadableStream<Uint8Array> | null;
  /** The client does not accept SSE: messages before the response are dropped, not streamed. */
  jsonOnly: boolean;
}

export class PlainAnswers {
  private readonly pending = new Map<RequestId, Pending>();

  constructor(private readonly store: SessionEventStore) {}

  /** The transport to connect the session's server to: the SDK transport, seen through the shaper. */
  wrap(transport: Transport): Transport {
    const send = (message: JSONRPCMessage, options?: Parameters<Transport['send']>[1]): Promise<void> => {
      const response = isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message);
      const related = response ? (message.id ?? undefined) : options?.relatedRequestId;
      this.observe(message, response, related);
      // The transport stores the event synchronously inside `send`: tell the store whose it is.
      this.store.relate(related);
      try {
        return transport.send(message, options);
      } finally {
        this.store.relate(undefined);
      }
    };
    return new Proxy(transport, {
      get(target, key, receiver) {
        if (key === 'send') return send;
        const value: unknown = Reflect.get(target, key, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
      set(target, key, value) {
        return Reflect.set(target, key, value);
      },
    });
  }

  /**
   * Serves one POST through `serve` (the SDK transport) and shapes its answer. Only a body that is
   * one request can be answered as JSON; batches and notifications keep the SDK's answer.
   */
  async answer(body: unknown, signal: AbortSignal, jsonOnly: boolean, serve: () => Promise<Response>): Promise<Response> {
    if (!isJSONRPCRequest(body) || this.pending.has(body.id)) return serve();
    const id = body.id;
    let decide!: (decision: Decision) => void;
    const decided = new Promise<Decision>((resolve) => (decide = resolve));
    const entry: Pending = { decide: (decision) => decide(decision), jsonOnly };
    this.pending.set(id, entry);
    const onAbort = (): void => this.settle(id, { kind: 'gone' });
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const response = await serve();
      if (response.status !== 200 || !(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) return response;
      entry.stream = response.body;
      const decision = await decided;
      if (decision.kind !== 'json') return response;
      await response.body?.cancel().catch(() => undefined);
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      const session = response.headers.get('mcp-session-id');
      if (session !== null) headers['mcp-session-id'] = session;
      return new Response(JSON.stringify(decision.message), { status: 200, headers });
    } finally {
      // Only this POST's own entry: a later request may reuse the id once this one is answered.
      if (this.pending.get(id) === entry) this.pending.delete(id);
      signal.removeEventListener('abort', onAbort);
    }
  }

  /** The session ended: every open POST keeps the SDK's (now closed) answer. */
  close(): void {
    for (const id of [...this.pending.keys()]) this.settle(id, { kind: 'gone' });
  }

  private observe(message: JSONRPCMessage, response: boolean, id: RequestId | undefined): void {
    if (id === undefined) return;
    const entry = this.pending.get(id);
    if (entry === undefined) return;
    if (!response) {
      if (!entry.jsonOnly) this.settle(id, { kind: 'stream' });
      return;
    }
    // The answer goes out as JSON: the SDK must neither frame it into the stream nor keep it.
    this.store.skip(message);
    if (entry.stream !== undefined && entry.stream !== null) void entry.stream.cancel().catch(() => undefined);
    this.settle(id, { kind: 'json', message });
  }

  private settle(id: RequestId, decision: Decision): void {
    const entry = this.pending.get(id);
    if (entry === undefined) return;
    this.pending.delete(id);
    entry.decide(decision);
  }
}
