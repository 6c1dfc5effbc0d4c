/**
 * The direct reads (session-read.ts) running in one 2025-era session, by request id. They do not
 * pass through the session's SDK server, so its cancellation does not reach them: a
 * `notifications/cancelled` naming one aborts it here, and the session's end aborts them all.
 */
import type { RequestId } from '@modelcontextprotocol/server';
import { Cancellation } from '../core/cancellation.js';
import { isRecord } from './direct-read.js';

export interface RunningRead {
  /** The read's cancellation: aborted when the client cancels the read or the session ends. */
  cancel: Cancellation;
  /** Whether the client cancelled it (or the session ended): no answer is owed then. */
  cancelled(): boolean;
  /** The read is answered: its id is free again. */
  done(): void;
}

export class SessionReads {
  private readonly running = new Map<RequestId, Cancellation>();
  private closed = false;

  /** Tracks a read of id `id`; undefined when the session has ended or a read of that id runs. */
  start(id: RequestId): RunningRead | undefined {
    if (this.closed || this.running.has(id)) return undefined;
    const cancel = new Cancellation();
    this.running.set(id, cancel);
    return {
      cancel,
      cancelled: () => this.running.get(id) !== cancel && cancel.aborted,
      done: () => {
        if (this.running.get(id) === cancel) this.running.delete(id);
      },
    };
  }

  /** Aborts the reads that the `notifications/cancelled` messages of a POST body (one message or a batch) name. */
  cancelNamedIn(body: unknown): void {
    if (this.running.size === 0) return;
    for (const message of Array.isArray(body) ? body : [body]) {
      if (!isRecord(message) || message['method'] !== 'notifications/cancelled' || 'id' in message || !isRecord(message['params'])) continue;
      const id = message['params']['requestId'];
      if (typeof id !== 'string' && typeof id !== 'number') continue;
      const cancel = this.running.get(id);
      if (cancel === undefined) continue;
      this.running.delete(id);
      cancel.abort(message['params']['reason']);
    }
  }

  /** The session ended: every read running in it is aborted. */
  close(): void {
    this.closed = true;
    for (const cancel of this.running.values()) cancel.abort();
    this.running.clear();
  }
}
