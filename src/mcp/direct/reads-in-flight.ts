/**
 * THE registry of direct reads in flight, for their cancellation. A direct read does not pass
 * through an SDK server, so the SDK's cancellation does not reach it: each scope that runs direct
 * reads keeps one of these — a stdio connection and a 2025-era session keyed by JSON-RPC request
 * id, the 2026-07-28 endpoint keyed by the HTTP response (its requests share no id space). A
 * `notifications/cancelled` naming a read aborts it (`cancelNamedIn`, the one place that reads
 * that notification for direct reads), and the scope's end aborts every read still running.
 */
import type { RequestId } from '@modelcontextprotocol/server';
import { Cancellation } from '../../core/cancellation.js';
import { isRecord } from './plain-read.js';

export interface RunningRead {
  /** The read's cancellation: aborted when the client cancels the read or the scope ends. */
  cancel: Cancellation;
  /** Whether the client cancelled it (or the scope ended): no answer is owed then. */
  cancelled(): boolean;
  /** The read is answered: its key is free again. */
  done(): void;
}

export class ReadsInFlight<K = RequestId> {
  private readonly running = new Map<K, Cancellation>();
  private closed = false;

  /** Reads running now. */
  get size(): number {
    return this.running.size;
  }

  /** Tracks a read under `key`; undefined when the scope has ended or a read of that key runs. */
  start(key: K): RunningRead | undefined {
    if (this.closed || this.running.has(key)) return undefined;
    const cancel = new Cancellation();
    this.running.set(key, cancel);
    return {
      cancel,
      cancelled: () => this.running.get(key) !== cancel && cancel.aborted,
      done: () => {
        if (this.running.get(key) === cancel) this.running.delete(key);
      },
    };
  }

  /** Aborts the read under `key`, if one runs (its answer is not owed any more). */
  abort(key: K, reason?: unknown): void {
    const cancel = this.running.get(key);
    if (cancel === undefined) return;
    this.running.delete(key);
    cancel.abort(reason);
  }

  /** Aborts the reads named by the `notifications/cancelled` in `body` (one message or a batch). */
  cancelNamedIn(body: unknown): void {
    if (this.running.size === 0) return;
    for (const message of Array.isArray(body) ? (body as unknown[]) : [body]) {
      const cancelled = cancellationOf(message);
      if (cancelled !== undefined) this.abort(cancelled.requestId as K, cancelled.reason);
    }
  }

  /** The scope ended: every read running in it is aborted, and none starts any more. */
  close(): void {
    this.closed = true;
    for (const cancel of this.running.values()) cancel.abort();
    this.running.clear();
  }
}

/** The request a `notifications/cancelled` message names, with its reason; undefined for any other message. */
export function cancellationOf(
  message: unknown,
): { requestId: RequestId; reason?: unknown } | undefined {
  if (!isRecord(message) || message['method'] !== 'notifications/cancelled' || 'id' in message)
    return undefined;
  const params = message['params'];
  if (!isRecord(params)) return undefined;
  const requestId = params['requestId'];
  if (typeof requestId !== 'string' && typeof requestId !== 'number') return undefined;
  return { requestId, reason: params['reason'] };
}
