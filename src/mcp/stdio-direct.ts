/**
 * Plain `resources/read` requests on a stdio connection, answered by the wire through the direct
 * read (direct-read.ts) rather than the SDK's dispatch: on a connection that negotiated a 2025-era
 * revision, a request carrying nothing but `jsonrpc`, `id`, `method` and `params: { uri }` (no
 * `_meta`, so no progress token and no trace context). Everything else — other methods, a read
 * with `_meta`, a reused id, any read before `initialize` was answered, every 2026-07-28 request —
 * goes to the SDK as before.
 *
 * Cancellation is the SDK's: `notifications/cancelled` for a read in flight aborts it, and its
 * answer is never written. Closing the connection aborts every read in flight.
 */
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/server';
import { Cancellation } from '../core/cancellation.js';
import type { DirectRead } from './direct-read.js';

/** Revisions whose connections are 2025-era (answered in that era's shape). */
const LEGACY_REVISIONS = new Set(['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25']);

export class StdioDirectReads {
  /** Reads in flight by request id. */
  private readonly inFlight = new Map<RequestId, Cancellation>();

  constructor(
    private readonly read: DirectRead,
    /** Writes an encoded answer (one line's content, without its newline). */
    private readonly write: (encoded: string | Array<string | Buffer>, id: RequestId) => void,
  ) {}

  /** Takes `message` when it is a plain read this connection answers directly; true when taken. */
  take(message: JSONRPCMessage, revision: string | undefined): boolean {
    if (revision === undefined || !LEGACY_REVISIONS.has(revision)) return false;
    const uri = plainReadUri(message);
    if (uri === undefined) return false;
    const id = (message as { id: RequestId }).id;
    if (this.inFlight.has(id)) return false;
    const cancel = new Cancellation();
    const pending = this.read(id, uri, undefined, cancel, 'legacy');
    if (pending === undefined) return false;
    this.inFlight.set(id, cancel);
    // direct-read answers every failure in-band; a rejection here would be a bug, not the caller's.
    void pending.then((encoded) => {
      if (this.inFlight.get(id) !== cancel) return;
      this.inFlight.delete(id);
      this.write(encoded, id);
    });
    return true;
  }

  /** Notes a notification on its way to the SDK: a cancellation of a direct read aborts it. */
  notified(message: JSONRPCMessage): void {
    if (!('method' in message) || message.method !== 'notifications/cancelled' || 'id' in message) return;
    const id = (message.params as { requestId?: RequestId } | undefined)?.requestId;
    if (id === undefined) return;
    const cancel = this.inFlight.get(id);
    if (cancel === undefined) return;
    this.inFlight.delete(id);
    cancel.abort((message.params as { reason?: unknown }).reason);
  }

  /** The connection closed: every read in flight is aborted and none is answered. */
  close(): void {
    for (const cancel of this.inFlight.values()) cancel.abort();
    this.inFlight.clear();
  }
}

/** The URI of a request that is exactly `{ jsonrpc, id, method: 'resources/read', params: { uri } }`. */
function plainReadUri(message: JSONRPCMessage): string | undefined {
  if (!('method' in message) || message.method !== 'resources/read' || !('id' in message)) return undefined;
  const params = message.params as Record<string, unknown> | undefined;
  if (params === undefined || typeof params['uri'] !== 'string') return undefined;
  return Object.keys(params).length === 1 && Object.keys(message).length === 4 ? params['uri'] : undefined;
}
