// 2025-era SSE streams are resumable: every event carries an id, each session keeps its recent events
// (bounded by count, bytes and age), a POST stream opens with a priming event that carries `retry:`,
// and a client whose stream dropped gets exactly the events it missed by reconnecting with
// `Last-Event-ID` — on the GET stream and on a POST stream alike. An id that is not this session's,
// or whose events are no longer kept, is refused in words the client can act on.
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Provider } from '../../src/core/types.js';
import { defineTool } from '../../src/core/tools.js';
import { createReservoir } from '../../src/server/index.js';
import { Cleanup } from '../helpers/clients.js';
import { SseReader, type SseEvent } from '../helpers/sse-reader.js';
import { initializeParams, rawHttp } from '../helpers/wire.js';

const ROOT = 'mem://resume/';
const WATCHED = `${ROOT}watched`;
const BOTH = 'application/json, text/event-stream';

const cleanup = new Cleanup();
/** Fires a change of WATCHED to every watcher (the subscribed sessions). */
const watchers = new Set<() => void>();
const changed = (): void => watchers.forEach((fire) => fire());

const provider: Provider = {
  name: 'memory',
  root: ROOT,
  async list() {
    return { items: [{ uri: WATCHED, name: 'watched', mimeType: 'text/plain' }] };
  },
  async read(uri) {
    return { contents: [{ uri, mimeType: 'text/plain', text: 'now' }] };
  },
  watch(_uri, onChange) {
    watchers.add(onChange);
    return () => watchers.delete(onChange);
  },
};

/** A tool that reports progress 1, then waits for the test to open its gate, then reports 2 and 3. */
let openGate: () => void = () => undefined;
const gated = defineTool({
  name: 'gated',
  description: 'Reports progress in two halves, the second once the test opens the gate',
  input: z.object({}),
  async call(_args, ctx) {
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    await ctx.progress(1, 3);
    await gate;
    await ctx.progress(2, 3);
    await ctx.progress(3, 3);
    return { content: [{ type: 'text', text: 'done' }] };
  },
});

let url: string;
let smallUrl: string;

beforeAll(async () => {
  const reservoir = createReservoir({ providers: [provider], tools: [gated] });
  cleanup.add(() => reservoir.close());
  url = (await reservoir.listen({ port: 0 })).url;
  // A second endpoint whose sessions keep only two events.
  const small = createReservoir({ providers: [provider], tools: [gated] });
  cleanup.add(() => small.close());
  smallUrl = (await small.listen({ port: 0, sseEvents: { maxEvents: 2 } })).url;
});

afterAll(() => cleanup.run());

async function openSession(at: string): Promise<Record<string, string>> {
  const init = await rawHttp(at, {
    headers: { 'content-type': 'application/json', accept: BOTH },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: initializeParams(),
    }),
  });
  const id = init.headers['mcp-session-id'];
  if (typeof id !== 'string') throw new Error(`initialize failed: ${init.status} ${init.body}`);
  const headers = {
    'content-type': 'application/json',
    accept: BOTH,
    'mcp-session-id': id,
    'mcp-protocol-version': '2025-11-25',
  };
  await rawHttp(at, {
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  cleanup.add(() => rawHttp(at, { method: 'DELETE', headers }));
  return headers;
}

async function subscribe(at: string, headers: Record<string, string>): Promise<void> {
  const response = await rawHttp(at, {
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 2,
      method: 'resources/subscribe',
      params: { uri: WATCHED },
    }),
  });
  expect(response.messages).toEqual([{ jsonrpc: '2.0', id: 2, result: {} }]);
}

/**
 * Reconnects with `Last-Event-ID`, at once: the server may not have noticed yet that the dropped
 * connection is gone, and must detach it rather than refuse the resume.
 */
async function resume(
  at: string,
  headers: Record<string, string>,
  lastEventId: string,
): Promise<SseReader> {
  const reader = new SseReader(at, {
    method: 'GET',
    headers: { ...headers, 'last-event-id': lastEventId },
  });
  expect(await reader.status).toBe(200);
  return reader;
}

const message = (event: SseEvent): Record<string, unknown> =>
  JSON.parse(event.data) as Record<string, unknown>;
const updated = (event: SseEvent): unknown =>
  (message(event)['params'] as { uri?: unknown } | undefined)?.uri;

describe('resuming 2025-era SSE streams with Last-Event-ID', () => {
  it('replays exactly the GET-stream events missed while the connection was down, then goes on live', async () => {
    const headers = await openSession(url);
    await subscribe(url, headers);
    const first = new SseReader(url, { method: 'GET', headers });
    expect(await first.status).toBe(200);
    changed();
    const seen = await first.next();
    expect(message(seen)['method']).toBe('notifications/resources/updated');
    expect(seen.id).toMatch(/^[0-9a-f]{12}\.\d+$/);
    first.drop();

    changed();
    changed();
    const again = await resume(url, headers, seen.id!);
    const missed = [await again.next(), await again.next()];
    expect(missed.map(updated)).toEqual([WATCHED, WATCHED]);
    const ids = [seen.id!, ...missed.map((event) => event.id!)];
    expect(new Set(ids).size).toBe(3);
    // Nothing else was replayed: the next event is the one fired now.
    changed();
    const live = await again.next();
    expect(updated(live)).toBe(WATCHED);
    expect(ids).not.toContain(live.id);
    again.drop();
  });

  it('opens a POST stream with a priming event carrying retry, and resumes it with the rest of the call', async () => {
    const headers = await openSession(url);
    const call = new SseReader(url, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 5,
        method: 'tools/call',
        params: { name: 'gated', arguments: {}, _meta: { progressToken: 'g' } },
      }),
    });
    const priming = await call.next();
    expect(priming).toMatchObject({ data: '', retry: 1000 });
    expect(priming.id).toBeDefined();
    const one = await call.next();
    expect(message(one)).toMatchObject({
      method: 'notifications/progress',
      params: { progressToken: 'g', progress: 1 },
    });
    call.drop();

    openGate();
    const again = await resume(url, headers, one.id!);
    const rest = await again.rest();
    expect(rest.map((event) => message(event))).toEqual([
      {
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: 'g', progress: 2, total: 3 },
      },
      {
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: 'g', progress: 3, total: 3 },
      },
      { jsonrpc: '2.0', id: 5, result: { content: [{ type: 'text', text: 'done' }] } },
    ]);
  });

  it('detaches a stream whose old connection is still open when the client resumes it, and replays on the new one', async () => {
    const headers = await openSession(url);
    await subscribe(url, headers);
    const old = new SseReader(url, { method: 'GET', headers });
    expect(await old.status).toBe(200);
    changed();
    const seen = await old.next();
    // The old connection is not dropped: the client simply resumes elsewhere (a half-open socket).
    const again = await resume(url, headers, seen.id!);
    await expect(old.rest()).resolves.toEqual([]);
    changed();
    expect(updated(await again.next())).toBe(WATCHED);
    again.drop();
  });

  it('refuses an id this session never issued with 400 saying so, and one from another session alike', async () => {
    const mine = await openSession(url);
    const other = await openSession(url);
    await subscribe(url, other);
    const stream = new SseReader(url, { method: 'GET', headers: other });
    expect(await stream.status).toBe(200);
    changed();
    const foreign = (await stream.next()).id!;
    stream.drop();
    for (const id of ['nonsense', foreign, `${foreign.split('.')[0]}.999999`]) {
      const answer = await rawHttp(url, {
        method: 'GET',
        headers: { ...(id === foreign ? mine : other), 'last-event-id': id },
      });
      expect(answer.status).toBe(400);
      expect(answer.messages[0]?.error).toEqual({
        code: -32000,
        message: `Bad Request: Last-Event-ID ${JSON.stringify(id)} was not issued in this session; open the stream again without Last-Event-ID`,
      });
    }
  });

  it('refuses an id whose events are no longer kept with 400 saying it expired', async () => {
    const headers = await openSession(smallUrl);
    await subscribe(smallUrl, headers);
    const stream = new SseReader(smallUrl, { method: 'GET', headers });
    expect(await stream.status).toBe(200);
    changed();
    const oldest = (await stream.next()).id!;
    changed();
    await stream.next();
    changed();
    await stream.next();
    stream.drop();
    const answer = await rawHttp(smallUrl, {
      method: 'GET',
      headers: { ...headers, 'last-event-id': oldest },
    });
    expect(answer.status).toBe(400);
    expect(answer.messages[0]?.error?.message).toBe(
      `Bad Request: Last-Event-ID ${JSON.stringify(oldest)} has expired (the events after it are no longer kept); open the stream again without Last-Event-ID`,
    );
  });
});
