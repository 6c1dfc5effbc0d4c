/**
 * Plain JSON answers for 2025-era POSTs that need no stream. The SDK's session transport answers
 * every POST as an SSE stream; some clients (Python's `mcp` 2.x, FastMCP) refuse any SSE event over
 * 1 MiB, so a large read never reached them. Here, as the SDK's own 2026-07-28 path does
 * ("auto" response mode), the answer is decided by what the server actually sends: when the
 * responses to the POST's requests come before anything else, they go out as `application/json`
 * (one object, or an array for a batch); when something comes first (progress, a log message, a
 * server request such as elicitation or sampling), the SDK's SSE stream is answered as it is, from
 * its first event.
 *
 * The shaper sits between the server and the SDK transport (it sees every outbound message before
 * the transport frames it). A single request's JSON answer is never framed as SSE nor kept in the
 * event store; a batch's answers are kept until the last arrives, then its stream is forgotten.
 */
import {
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type RequestId,
  type Transport,
} from '@modelcontextprotocol/server';
import { withSend } from '../mcp/transport-proxy.js';
import type { SessionEventStore } from './event-store.js';

type Decision =
  { kind: 'json'; body: JSONRPCMessage | JSONRPCMessage[] } | { kind: 'stream' } | { kind: 'gone' };

/** One POST waiting for its first message to decide how it is answered. */
interface Pending {
  /** The POST's request ids, in order. */
  ids: RequestId[];
  answers: Map<RequestId, JSONRPCMessage>;
  decide(decision: Decision): void;
  /** Set once the SDK has answered the POST (its SSE stream): cancelled when JSON wins. */
  stream?: ReadableStream<Uint8Array> | null;
  /** The client does not accept SSE: messages before the responses are dropped, not streamed. */
  jsonOnly: boolean;
}

export class PlainAnswers {
  private readonly pending = new Map<RequestId, Pending>();

  constructor(private readonly store: SessionEventStore) {}

  /** The transport to connect the session's server to: the SDK transport, seen through the shaper. */
  wrap(transport: Transport): Transport {
    const send = (
      message: JSONRPCMessage,
      options?: Parameters<Transport['send']>[1],
    ): Promise<void> => {
      const response = isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message);
      const related = response ? (message.id ?? undefined) : options?.relatedRequestId;
      const answered = this.observe(message, response, related);
      // The transport stores the event synchronously inside `send`: tell the store whose it is.
      this.store.relate(related);
      try {
        return transport.send(message, options);
      } finally {
        this.store.relate(undefined);
        // A batch answered as JSON: its events (now all stored) will never be asked for.
        if (answered !== undefined) this.store.forget(answered);
      }
    };
    return withSend(transport, send);
  }

  /**
   * Serves one POST through `serve` (the SDK transport) and shapes its answer. A body without
   * requests (notifications, responses) keeps the SDK's answer.
   */
  async answer(
    body: unknown,
    signal: AbortSignal,
    jsonOnly: boolean,
    serve: () => Promise<Response>,
  ): Promise<Response> {
    const ids = requestIds(body);
    if (
      ids.length === 0 ||
      new Set(ids).size !== ids.length ||
      ids.some((id) => this.pending.has(id))
    )
      return serve();
    let decide!: (decision: Decision) => void;
    const decided = new Promise<Decision>((resolve) => (decide = resolve));
    const entry: Pending = {
      ids,
      answers: new Map(),
      decide: (decision) => decide(decision),
      jsonOnly,
    };
    for (const id of ids) this.pending.set(id, entry);
    const onAbort = (): void => this.settle(entry, { kind: 'gone' });
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const response = await serve();
      if (
        response.status !== 200 ||
        !(response.headers.get('content-type') ?? '').startsWith('text/event-stream')
      )
        return response;
      entry.stream = response.body;
      const decision = await decided;
      if (decision.kind !== 'json') return response;
      await response.body?.cancel().catch(() => undefined);
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      const session = response.headers.get('mcp-session-id');
      if (session !== null) headers['mcp-session-id'] = session;
      return new Response(JSON.stringify(decision.body), { status: 200, headers });
    } finally {
      // Only this POST's own entries: a later request may reuse an id once this one is answered.
      for (const id of ids) if (this.pending.get(id) === entry) this.pending.delete(id);
      signal.removeEventListener('abort', onAbort);
    }
  }

  /** Whether a POST with a request of this id is still waiting for its answer. */
  waiting(id: RequestId): boolean {
    return this.pending.has(id);
  }

  /** The session ended: every open POST keeps the SDK's (now closed) answer. */
  close(): void {
    for (const entry of new Set(this.pending.values())) this.settle(entry, { kind: 'gone' });
  }

  /** Notes one outbound message; returns a batch's answers when this message completed it as JSON. */
  private observe(
    message: JSONRPCMessage,
    response: boolean,
    id: RequestId | undefined,
  ): JSONRPCMessage[] | undefined {
    const entry = id === undefined ? undefined : this.pending.get(id);
    if (entry === undefined || id === undefined) return undefined;
    if (!response) {
      if (!entry.jsonOnly) this.settle(entry, { kind: 'stream' });
      return undefined;
    }
    entry.answers.set(id, message);
    const single = entry.ids.length === 1;
    // A single answer is kept out of the store at once; a batch's only when all are in (until then
    // something may still turn it into a stream, whose answers must stay resumable).
    if (single) this.store.skip(message);
    if (entry.answers.size < entry.ids.length) return undefined;
    // Every answer is in and nothing came before: JSON. The SDK must not frame the last one.
    if (entry.stream !== undefined && entry.stream !== null)
      void entry.stream.cancel().catch(() => undefined);
    const answers = entry.ids.map((each) => entry.answers.get(each)!);
    this.settle(entry, { kind: 'json', body: single ? message : answers });
    return single ? undefined : answers;
  }

  private settle(entry: Pending, decision: Decision): void {
    let waiting = false;
    for (const id of entry.ids) {
      if (this.pending.get(id) !== entry) continue;
      this.pending.delete(id);
      waiting = true;
    }
    if (waiting) entry.decide(decision);
  }
}

/** The ids of the requests in a POST body (one message or a batch); empty when it has none. */
function requestIds(body: unknown): RequestId[] {
  if (Array.isArray(body))
    return body.filter((message) => isJSONRPCRequest(message)).map((message) => message.id);
  return isJSONRPCRequest(body) ? [body.id] : [];
}
