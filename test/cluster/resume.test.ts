// Resumption across instances, as chosen (docs/cluster.md): each instance keeps the SSE events of
// the sessions it serves; Last-Event-ID resumes on the instance that issued the id, and another
// instance refuses it with 400 saying so, so the client opens the stream again without it.
import { afterEach, describe, expect, it } from 'vitest';
import { Cleanup } from '../helpers/clients.js';
import { SseReader } from '../helpers/sse-reader.js';
import { initializeParams, rawHttp } from '../helpers/wire.js';
import { waitFor } from '../subscriptions/harness.js';
import { Backend, MEM_ROOT, REDIS_URL, startMember, uniquePrefix } from './harness.js';

const BOTH = 'application/json, text/event-stream';
const cleanup = new Cleanup();
afterEach(() => cleanup.run());

describe.skipIf(REDIS_URL === undefined)('Last-Event-ID across instances', () => {
  it('resumes a GET stream on the instance that issued the event id, and another instance refuses the id with 400 naming it', async () => {
    const backend = new Backend();
    backend.values.set('row', 'v1');
    const prefix = uniquePrefix();
    const a = await startMember('A', prefix, backend);
    cleanup.add(() => a.close());
    const b = await startMember('B', prefix, backend);
    cleanup.add(() => b.close());
    const init = await rawHttp(a.url, {
      headers: { 'content-type': 'application/json', accept: BOTH },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: initializeParams(),
      }),
    });
    const id = init.headers['mcp-session-id'] as string;
    const headers = {
      'content-type': 'application/json',
      accept: BOTH,
      'mcp-session-id': id,
      'mcp-protocol-version': '2025-11-25',
    };
    await rawHttp(a.url, {
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    await rawHttp(a.url, {
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'resources/subscribe',
        params: { uri: `${MEM_ROOT}row` },
      }),
    });
    const stream = new SseReader(a.url, { method: 'GET', headers });
    expect(await stream.status).toBe(200);
    await waitFor(() => backend.pollers().length === 1, 'one instance to poll the source');
    backend.values.set('row', 'v2');
    let event = await stream.next();
    while (event.data === '') event = await stream.next();
    expect(JSON.parse(event.data)).toMatchObject({
      method: 'notifications/resources/updated',
      params: { uri: `${MEM_ROOT}row` },
    });
    const lastEventId = event.id!;
    stream.drop();

    const elsewhere = await rawHttp(b.url, {
      method: 'GET',
      headers: { ...headers, 'last-event-id': lastEventId },
    });
    expect(elsewhere.status).toBe(400);
    expect(JSON.parse(elsewhere.body)).toMatchObject({
      error: {
        code: -32000,
        message: `Bad Request: Last-Event-ID ${JSON.stringify(lastEventId)} was not issued in this session; open the stream again without Last-Event-ID`,
      },
    });

    const resumed = new SseReader(a.url, {
      method: 'GET',
      headers: { ...headers, 'last-event-id': lastEventId },
    });
    cleanup.add(() => resumed.drop());
    expect(await resumed.status).toBe(200);
    backend.values.set('row', 'v3');
    let next = await resumed.next();
    while (next.data === '') next = await resumed.next();
    expect(JSON.parse(next.data)).toMatchObject({
      method: 'notifications/resources/updated',
      params: { uri: `${MEM_ROOT}row` },
    });
  });
});
