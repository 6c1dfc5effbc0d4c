/**
 * Plain `resources/read` requests on a stdio connection, answered by the wire through the direct
 * read (read.ts) rather than the SDK's dispatch: on a connection that negotiated a 2025-era
 * revision, a plain read (plain-read.ts). Everything else — other methods, a read with `_meta`, a
 * reused id, any read before `initialize` was answered, every 2026-07-28 request — goes to the SDK
 * as before.
 *
 * Cancellation is the SDK's: `notifications/cancelled` for a read in flight aborts it, and its
 * answer is never written. Closing the connection aborts every read in flight (reads-in-flight.ts).
 */
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/server';
import { LEGACY_REVISIONS } from '../revisions.js';
import type { EncodedLine } from './base64-run.js';
import { plainReadOf } from './plain-read.js';
import type { DirectRead } from './read.js';
import { ReadsInFlight } from './reads-in-flight.js';

export class StdioDirectReads {
  private readonly reads = new ReadsInFlight();

  constructor(
    private readonly read: DirectRead,
    /** Writes an encoded answer (one line's content, without its newline). */
    private readonly write: (encoded: EncodedLine, id: RequestId) => void,
  ) {}

  /** Takes `message` when it is a plain read this connection answers directly; true when taken. */
  take(message: JSONRPCMessage, revision: string | undefined): boolean {
    if (revision === undefined || !LEGACY_REVISIONS.has(revision)) return false;
    const plain = plainReadOf(message, 'legacy');
    if (plain === undefined) return false;
    const running = this.reads.start(plain.id);
    if (running === undefined) return false;
    const pending = this.read(plain.id, plain.uri, undefined, running.cancel, 'legacy');
    if (pending === undefined) {
      running.done();
      return false;
    }
    // read.ts answers every failure in-band; a rejection here would be a bug, not the caller's.
    void pending.then((encoded) => {
      const cancelled = running.cancelled();
      running.done();
      if (!cancelled) this.write(encoded, plain.id);
    });
    return true;
  }

  /** Notes a notification on its way to the SDK: a cancellation of a direct read aborts it. */
  notified(message: JSONRPCMessage): void {
    this.reads.cancelNamedIn(message);
  }

  /** The connection closed: every read in flight is aborted and none is answered. */
  close(): void {
    this.reads.close();
  }
}
