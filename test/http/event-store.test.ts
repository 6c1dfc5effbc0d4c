// The per-session SSE event store: ids carry the session's tag, eviction is first-in first-out by
// count, bytes and age, a resume replays only the later events of the same stream (never a priming
// event), answers sent as JSON are numbered but never kept, and a refused id says why.
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SessionEventStore } from '../../src/http/event-store.js';

const note = (n: number): JSONRPCMessage => ({
  jsonrpc: '2.0',
  method: 'notifications/message',
  params: { level: 'info', data: `event ${n}` },
});

async function replay(
  store: SessionEventStore,
  from: string,
): Promise<{ stream: string; sent: [string, JSONRPCMessage][] }> {
  const sent: [string, JSONRPCMessage][] = [];
  const stream = await store.replayEventsAfter(from, {
    send: async (id, message) => void sent.push([id, message]),
  });
  return { stream, sent };
}

afterEach(() => vi.useRealTimers());

describe('SessionEventStore', () => {
  it('replays exactly the later events of the same stream, skipping priming events and other streams', async () => {
    const store = new SessionEventStore();
    const prime = await store.storeEvent('post-1', {} as JSONRPCMessage);
    const a = await store.storeEvent('post-1', note(1));
    await store.storeEvent('_GET_stream', note(2));
    await store.storeEvent('post-1', {} as JSONRPCMessage);
    const c = await store.storeEvent('post-1', note(3));
    expect(await store.getStreamIdForEventId(a)).toBe('post-1');
    const fromPrime = await replay(store, prime);
    expect(fromPrime).toEqual({
      stream: 'post-1',
      sent: [
        [a, note(1)],
        [c, note(3)],
      ],
    });
    expect((await replay(store, a)).sent).toEqual([[c, note(3)]]);
  });

  it('keeps at most maxEvents events, dropping the oldest, and calls a dropped id expired', async () => {
    const store = new SessionEventStore({ maxEvents: 2 });
    const first = await store.storeEvent('s', note(1));
    const second = await store.storeEvent('s', note(2));
    const third = await store.storeEvent('s', note(3));
    expect(store.size.events).toBe(2);
    expect(store.refusal(first)).toBe('expired');
    expect(store.refusal(second)).toBeUndefined();
    expect((await replay(store, second)).sent).toEqual([[third, note(3)]]);
  });

  it('keeps at most maxBytes of message JSON, an event larger than the budget taking everything before it along', async () => {
    const bytes = Buffer.byteLength(JSON.stringify(note(1)));
    const store = new SessionEventStore({ maxBytes: bytes * 2 });
    const first = await store.storeEvent('s', note(1));
    await store.storeEvent('s', note(2));
    expect(store.size).toEqual({ events: 2, bytes: bytes * 2 });
    await store.storeEvent('s', note(3));
    expect(store.refusal(first)).toBe('expired');
    const huge = await store.storeEvent('s', {
      jsonrpc: '2.0',
      method: 'x',
      params: { data: 'y'.repeat(bytes * 3) },
    });
    expect(store.size).toEqual({ events: 0, bytes: 0 });
    expect(store.refusal(huge)).toBe('expired');
  });

  it('forgets events older than maxAgeMs', async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const store = new SessionEventStore({ maxAgeMs: 1_000 });
    const old = await store.storeEvent('s', note(1));
    vi.setSystemTime(1_000_600);
    const recent = await store.storeEvent('s', note(2));
    vi.setSystemTime(1_001_200);
    expect(store.refusal(old)).toBe('expired');
    expect(store.refusal(recent)).toBeUndefined();
  });

  it('numbers an answer sent as JSON without keeping it, so it pushes no real event out', async () => {
    const store = new SessionEventStore({ maxEvents: 1 });
    const kept = await store.storeEvent('_GET_stream', note(1));
    const answer: JSONRPCMessage = { jsonrpc: '2.0', id: 4, result: {} };
    store.skip(answer);
    const skipped = await store.storeEvent('post-2', answer);
    expect(skipped).not.toBe(kept);
    expect(store.size.events).toBe(1);
    expect(store.refusal(kept)).toBeUndefined();
    // The same object stored again (it was not skipped twice) is kept.
    await store.storeEvent('post-2', answer);
    expect(store.refusal(kept)).toBe('expired');
  });

  it("knows which stream an id belongs to: a request's POST stream, the GET stream, or not yet", async () => {
    const store = new SessionEventStore();
    const prime = await store.storeEvent('post-1', {} as JSONRPCMessage);
    expect(store.streamOf(prime)).toEqual({ kind: 'unknown' });
    store.relate(42);
    await store.storeEvent('post-1', note(1));
    expect(store.streamOf(prime)).toEqual({ kind: 'request', requestId: 42 });
    // relate() covers one stored event only.
    const standalone = await store.storeEvent('_GET_stream', note(2));
    expect(store.streamOf(standalone)).toEqual({ kind: 'standalone' });
    expect(store.streamOf('nonsense')).toEqual({ kind: 'unknown' });
  });

  it('forgets every event of the streams that carried a batch answered as JSON, and nothing else', async () => {
    const store = new SessionEventStore();
    const before = await store.storeEvent('_GET_stream', note(1));
    const prime = await store.storeEvent('batch', {} as JSONRPCMessage);
    const a: JSONRPCMessage = { jsonrpc: '2.0', id: 1, result: {} };
    const b: JSONRPCMessage = { jsonrpc: '2.0', id: 2, result: {} };
    await store.storeEvent('batch', a);
    const between = await store.storeEvent('_GET_stream', note(2));
    await store.storeEvent('batch', b);
    const after = await store.storeEvent('_GET_stream', note(3));
    store.forget([a, b]);
    expect(store.size).toEqual({
      events: 3,
      bytes: 3 * Buffer.byteLength(JSON.stringify(note(1))),
    });
    expect(store.refusal(prime)).toBe('expired');
    expect((await replay(store, before)).sent).toEqual([
      [between, note(2)],
      [after, note(3)],
    ]);
  });

  it('calls ids of another session, malformed ids and ids not yet issued foreign', async () => {
    const store = new SessionEventStore();
    const other = new SessionEventStore();
    const id = await store.storeEvent('s', note(1));
    const theirs = await other.storeEvent('s', note(1));
    const [tag] = id.split('.');
    for (const foreign of [
      theirs,
      'nonsense',
      `${tag}.0`,
      `${tag}.01`,
      `${tag}.2`,
      `${tag}.-1`,
      '',
      `${tag}.1.1`,
    ]) {
      expect(store.refusal(foreign), foreign).toBe('foreign');
      expect(await store.getStreamIdForEventId(foreign)).toBeUndefined();
    }
    await expect(replay(store, 'nonsense')).rejects.toThrow(
      'Last-Event-ID nonsense is not known in this session',
    );
  });
});
