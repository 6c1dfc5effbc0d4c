/**
 * JSON-RPC batches on the stdio wire. Protocol revision 2025-03-26 allows a client to send an array
 * of messages on one line and expects the answers to its requests back as one array; earlier and
 * later revisions do not (2025-06-18 removed batching; 2026-07-28 forbids it), and a batch there is
 * refused with one -32600 error, as the HTTP endpoint refuses one. The revision is the one the
 * connection negotiated: read from the server's answer to `initialize` as it goes out.
 *
 * Each element of an allowed batch is checked on its own: valid ones are delivered like single
 * messages, an invalid request is answered inside the batch with -32600, and the answers are held
 * until every request of the batch has one, then written together.
 */
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/server';
import { BATCH_REVISION } from '../mcp/revisions.js';
import { toJsonRpcMessage } from './jsonrpc.js';
import type { EncodedLine, EncodedPiece } from '../mcp/direct/base64-run.js';
import { encodeMessage } from '../mcp/direct/encode.js';

/** Largest batch accepted (the SDK's HTTP transport has the same bound). */
export const MAX_BATCH_SIZE = 100;
const INVALID_REQUEST = -32600;

/** What to do with one inbound batch line. */
export interface BatchPlan {
  /** Messages to deliver, in order. */
  deliver: JSONRPCMessage[];
  /** Answer to write now: a refusal of the whole batch, or a batch that needs nothing from the server. */
  answer?: JSONRPCMessage | JSONRPCMessage[];
}

interface OpenBatch {
  /** Answers in the order of the batch's requests; undefined until each arrives. */
  answers: (JSONRPCMessage | undefined)[];
  waiting: number;
}

export class StdioBatches {
  /** The protocol revision this connection negotiated, once its `initialize` was answered. */
  private revision: string | undefined;
  private initializeId: RequestId | undefined;
  /** Open batches by the id of each request they still wait on, with its place in the answer. */
  private readonly open = new Map<RequestId, { batch: OpenBatch; index: number }>();

  /** The revision this connection negotiated; undefined until its `initialize` is answered. */
  get negotiated(): string | undefined {
    return this.revision;
  }

  /** Notes an inbound single message (to see which answer negotiates the revision). */
  inbound(message: JSONRPCMessage): void {
    if ('method' in message && message.method === 'initialize' && 'id' in message)
      this.initializeId = message.id;
  }

  /**
   * Looks at an outbound message: undefined when it goes out as it is; otherwise it belongs to a
   * batch, and the result is the batch's whole answer once complete (or an empty array until then).
   */
  outbound(message: JSONRPCMessage): JSONRPCMessage[] | undefined {
    if (!('id' in message) || 'method' in message || message.id === undefined) return undefined;
    if (message.id === this.initializeId && 'result' in message) {
      const version = (message.result as { protocolVersion?: unknown }).protocolVersion;
      if (typeof version === 'string') this.revision = version;
      this.initializeId = undefined;
    }
    const place = this.open.get(message.id);
    if (place === undefined) return undefined;
    this.open.delete(message.id);
    place.batch.answers[place.index] = message;
    place.batch.waiting -= 1;
    return place.batch.waiting === 0 ? (place.batch.answers as JSONRPCMessage[]) : [];
  }

  /** Plans one inbound batch line (a parsed JSON array). */
  plan(items: readonly unknown[]): BatchPlan {
    if (this.revision !== BATCH_REVISION) {
      const uses = this.revision === undefined ? '' : `; this connection uses ${this.revision}`;
      return refuse(
        `Invalid Request: JSON-RPC batches are allowed only at protocol revision ${BATCH_REVISION}${uses}; send one message per line`,
      );
    }
    if (items.length === 0) return refuse('Invalid Request: an empty JSON-RPC batch');
    if (items.length > MAX_BATCH_SIZE)
      return refuse(`Invalid Request: a JSON-RPC batch must not exceed ${MAX_BATCH_SIZE} messages`);
    const deliver: JSONRPCMessage[] = [];
    const batch: OpenBatch = { answers: [], waiting: 0 };
    const places: RequestId[] = [];
    for (const item of items) {
      let message: JSONRPCMessage | undefined;
      try {
        message = toJsonRpcMessage(item);
      } catch {
        const id = requestIdOf(item);
        if (id !== undefined) batch.answers.push(invalidRequest(id));
        continue;
      }
      if ('method' in message && message.method === 'initialize' && 'id' in message) {
        batch.answers.push(
          invalidRequest(
            message.id,
            'Invalid Request: initialize must not be part of a JSON-RPC batch',
          ),
        );
        continue;
      }
      if ('method' in message && 'id' in message) {
        if (this.open.has(message.id) || places.includes(message.id)) {
          batch.answers.push(
            invalidRequest(
              message.id,
              'Invalid Request: a request with this id is already in progress',
            ),
          );
          continue;
        }
        places.push(message.id);
        batch.answers.push(undefined);
      }
      deliver.push(message);
    }
    batch.answers.forEach((answer, index) => {
      if (answer === undefined) {
        batch.waiting += 1;
        this.open.set(places.shift()!, { batch, index });
      }
    });
    // Only notifications (or only refused elements): nothing will come back from the server.
    if (batch.waiting === 0)
      return batch.answers.length === 0
        ? { deliver }
        : { deliver, answer: batch.answers as JSONRPCMessage[] };
    return { deliver };
  }
}

/**
 * The id to answer an invalid message with: that of something shaped like a request (a string
 * `method` and a string or number `id`), as the HTTP endpoint echoes it; otherwise none.
 */
export function requestIdOf(value: unknown): RequestId | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const { method, id } = value as { method?: unknown; id?: unknown };
  if (typeof method !== 'string') return undefined;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

export function invalidRequest(
  id: RequestId | null,
  message = 'Invalid Request: not a valid JSON-RPC 2.0 message',
): JSONRPCMessage {
  return { jsonrpc: '2.0', id, error: { code: INVALID_REQUEST, message } } as JSONRPCMessage;
}

function refuse(message: string): BatchPlan {
  return { deliver: [], answer: invalidRequest(null, message) };
}

/** A batch's answers as one line: the members' encodings joined into a JSON array. */
export function encodeBatch(messages: readonly JSONRPCMessage[]): EncodedLine {
  const parts: EncodedPiece[] = ['['];
  messages.forEach((message, i) => {
    if (i > 0) parts.push(',');
    const line = encodeMessage(message);
    if (typeof line === 'string') parts.push(line);
    else parts.push(...line);
  });
  parts.push(']');
  return parts.every((part) => typeof part === 'string') ? parts.join('') : parts;
}
