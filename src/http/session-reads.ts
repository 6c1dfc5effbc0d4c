/**
 * The direct reads (session-read.ts) running in one 2025-era session, by request id. They do not
 * pass through the session's SDK server, so its cancellation does not reach them: a
 * `notifications/cancelled` naming one aborts it here, and the session's end aborts them all.
 */
import type { RequestId } from '@modelcontextprotocol/server';
import { isRecord } from './direct-read.js';

export interface RunningRead {
  /** The read's controller: aborted when the client cancels the read or the session ends. */
  controller: AbortController;
  /** Whether the client cancelled it (or the session ended): no answer is owed then. */
  cancelled(): boolean;
  /** The read is answered: its id is free again. */
  done(): void;
}

export class SessionReads {
  private readonly running = new Map<RequestId, AbortController>();
  private closed = false;

  /** Tracks a read of id `id`; undefined when the session has ended or a read of that id runs. */
  start(id: RequestId): RunningRead | undefined {
    if (this.closed || this.running.has(id)) return undefined;
    const controller = new AbortController();
    this.running.set(id, controller);
    return {
      controller,
      cancelled: () => this.running.get(id) !== controller && controller.signal.aborted,
      done: () => {
        if (this.running.get(id) === controller) this.running.delete(id);
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
      const controller = this.running.get(id);
      if (controller === undefined) continue;
      this.running.delete(id);
      controller.abort(message['params']['reason']);
    }
  }

  /** The session ended: every read running in it is aborted. */
  close(): void {
    this.closed = true;
    for (const controller of this.running.values()) controller.abort();
    this.running.clear();
  }
}
