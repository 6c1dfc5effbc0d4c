/**
 * The event store of one 2025-era session: every SSE event the SDK transport sends gets an id, and
 * the recent ones are kept so a client whose stream dropped can resume it with `Last-Event-ID`
 * (the GET stream and the POST streams alike, as the Streamable HTTP transport describes).
 *
 * Bounded three ways, oldest first: a count, a byte total (the JSON of the kept messages) and an
 * age. Eviction is strictly first-in first-out, so an id that is still known has every later event
 * of its stream still kept: a resume either gets exactly the missed events or a clear refusal.
 * Ids carry the session's random tag, so an id from another session is recognised as foreign.
 */
import { randomBytes } from 'node:crypto';
import type { EventStore, JSONRPCMessage, RequestId } from '@modelcontextprotocol/server';

export interface EventStoreLimits {
  /** Events kept per session. @default 256 */
  maxEvents?: number;
  /** Bytes of message JSON kept per session. @default 1048576 (1 MiB) */
  maxBytes?: number;
  /** Events older than this are dropped. @default 300000 (5 min) */
  maxAgeMs?: number;
}

interface Entry {
  seq: number;
  streamId: string;
  /** Undefined for a priming event: a point to resume from, never replayed itself. */
  message: JSONRPCMessage | undefined;
  bytes: number;
  at: number;
  /** The request a POST stream's message belongs to (see `relate`). */
  requestId?: RequestId | undefined;
}

/** Which stream an event id belongs to, as far as the store knows it. */
export type StreamOfEvent =
  { kind: 'standalone' } | { kind: 'request'; requestId: RequestId } | { kind: 'unknown' };

/** Why a `Last-Event-ID` cannot be resumed, in words for the client. */
export type ResumeRefusal = 'foreign' | 'expired';

export class SessionEventStore implements EventStore {
  private readonly tag = randomBytes(6).toString('hex');
  private readonly entries: Entry[] = [];
  private next = 1;
  private bytes = 0;
  /** Messages answered as plain JSON: their events are numbered but not kept. */
  private readonly unkept = new WeakSet<object>();
  /** The request the message being sent relates to; read by the `storeEvent` it leads to. */
  private relating: RequestId | undefined;
  private readonly maxEvents: number;
  private readonly maxBytes: number;
  private readonly maxAgeMs: number;

  constructor(limits: EventStoreLimits = {}) {
    this.maxEvents = limits.maxEvents ?? 256;
    this.maxBytes = limits.maxBytes ?? 1024 * 1024;
    this.maxAgeMs = limits.maxAgeMs ?? 5 * 60_000;
  }

  /** Events kept now, and their bytes (for tests and metrics). */
  get size(): { events: number; bytes: number } {
    this.expire();
    return { events: this.entries.length, bytes: this.bytes };
  }

  /**
   * The next stored event belongs to `requestId`'s POST stream (undefined: to no request, the GET
   * stream). Called right before the SDK transport's `send`, which stores the event synchronously.
   */
  relate(requestId: RequestId | undefined): void {
    this.relating = requestId;
  }

  /**
   * The stream `eventId` belongs to: the GET stream, a POST stream and its request, or unknown (a
   * POST stream that has only its priming event so far).
   */
  streamOf(eventId: string): StreamOfEvent {
    const from = this.find(eventId);
    if (from === undefined) return { kind: 'unknown' };
    const mine = this.entries.filter((entry) => entry.streamId === from.streamId);
    const related = mine.find((entry) => entry.requestId !== undefined);
    if (related !== undefined) return { kind: 'request', requestId: related.requestId! };
    // Messages on a POST stream always relate to its request; messages with none are the GET stream's.
    return mine.some((entry) => entry.message !== undefined)
      ? { kind: 'standalone' }
      : { kind: 'unknown' };
  }

  /**
   * The streams that carried `messages` were answered as JSON instead (a batch): forget all their
   * events. No client ever saw those ids, and other streams keep every event they had.
   */
  forget(messages: readonly object[]): void {
    const gone = new Set(messages);
    const streams = new Set(
      this.entries
        .filter((entry) => entry.message !== undefined && gone.has(entry.message))
        .map((entry) => entry.streamId),
    );
    if (streams.size === 0) return;
    const kept = this.entries.filter((entry) => !streams.has(entry.streamId));
    this.bytes = kept.reduce((sum, entry) => sum + entry.bytes, 0);
    this.entries.splice(0, this.entries.length, ...kept);
  }

  /** The message will not go out as an SSE event (it was answered as JSON): do not keep it. */
  skip(message: object): void {
    this.unkept.add(message);
  }

  storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const seq = this.next++;
    const requestId = this.relating;
    this.relating = undefined;
    // An answer that went out as JSON is numbered (the SDK wants an id) but not kept: no client
    // ever saw that id, and it must not push real events out.
    if (this.unkept.has(message)) {
      this.unkept.delete(message);
      return Promise.resolve(`${this.tag}.${seq}`);
    }
    // The SDK stores a priming event as an empty object: kept as a resume point, never replayed.
    const kept = 'jsonrpc' in message ? message : undefined;
    const bytes = kept === undefined ? 0 : Buffer.byteLength(JSON.stringify(kept));
    this.entries.push({ seq, streamId, message: kept, bytes, at: Date.now(), requestId });
    this.bytes += bytes;
    this.evict();
    return Promise.resolve(`${this.tag}.${seq}`);
  }

  getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return Promise.resolve(this.find(eventId)?.streamId);
  }

  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const from = this.find(lastEventId);
    if (from === undefined)
      throw new Error(`Last-Event-ID ${lastEventId} is not known in this session`);
    // A snapshot: events stored while replaying go out live on the re-attached stream.
    const later = this.entries
      .slice(this.indexOf(from.seq) + 1)
      .filter((entry) => entry.streamId === from.streamId);
    for (const entry of later) {
      if (entry.message !== undefined) await send(`${this.tag}.${entry.seq}`, entry.message);
    }
    return from.streamId;
  }

  /** Undefined when `eventId` can be resumed; otherwise why not. */
  refusal(eventId: string): ResumeRefusal | undefined {
    if (this.find(eventId) !== undefined) return undefined;
    return this.seqOf(eventId) === undefined ? 'foreign' : 'expired';
  }

  private find(eventId: string): Entry | undefined {
    this.expire();
    const seq = this.seqOf(eventId);
    return seq === undefined ? undefined : this.entries[this.indexOf(seq)];
  }

  /** Where the entry numbered `seq` is (entries are in sequence order), or -1. */
  private indexOf(seq: number): number {
    let low = 0;
    let high = this.entries.length - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const at = this.entries[middle]!.seq;
      if (at === seq) return middle;
      if (at < seq) low = middle + 1;
      else high = middle - 1;
    }
    return -1;
  }

  /** The sequence number of one of this session's ids (kept or not), else undefined. */
  private seqOf(eventId: string): number | undefined {
    const dot = eventId.indexOf('.');
    if (dot < 0 || eventId.slice(0, dot) !== this.tag) return undefined;
    const text = eventId.slice(dot + 1);
    if (!/^[1-9]\d{0,15}$/.test(text)) return undefined;
    const seq = Number(text);
    return seq < this.next ? seq : undefined;
  }

  private evict(): void {
    while (
      this.entries.length > 0 &&
      (this.entries.length > this.maxEvents || this.bytes > this.maxBytes)
    )
      this.dropOldest();
    this.expire();
  }

  private expire(): void {
    const cutoff = Date.now() - this.maxAgeMs;
    while (this.entries.length > 0 && this.entries[0]!.at < cutoff) this.dropOldest();
  }

  private dropOldest(): void {
    const entry = this.entries.shift()!;
    this.bytes -= entry.bytes;
  }
}
