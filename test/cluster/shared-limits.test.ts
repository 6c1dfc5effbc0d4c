// What the cluster shares besides events: rate limits counted once for all instances, and
// 2025-era sessions that only their own principal can use, on any instance.
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createAuthenticator, generateToken } from '../../src/http/auth.js';
import { Cleanup, connectHttp } from '../helpers/clients.js';
import { SseReader } from '../helpers/sse-reader.js';
import { eventually, eventuallyAccepted } from '../helpers/eventually.js';
import {
  Backend,
  MEM_ROOT,
  REDIS_URL,
  sessionStatus,
  startMember,
  uniquePrefix,
} from './harness.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

function rpc(url: string, body: unknown, headers: Record<string, string>): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

describe.skipIf(REDIS_URL === undefined)('limits and sessions shared across instances', () => {
  it('lets through exactly the burst of a per-principal rate limit when the requests are split over two instances, in both eras', async () => {
    const backend = new Backend();
    backend.values.set('row', 'v1');
    for (const era of ['2025', '2026'] as const) {
      const prefix = uniquePrefix();
      const policy = { rateLimit: { requests: { perSecond: 1, burst: 10 } } };
      const a = await startMember('A', prefix, backend, { reservoir: { policy } });
      cleanup.add(() => a.close());
      const b = await startMember('B', prefix, backend, { reservoir: { policy } });
      cleanup.add(() => b.close());
      const onA = await connectHttp(era, a.url, cleanup);
      const onB = await connectHttp(era, b.url, cleanup);
      let passed = 0;
      const refusals: string[] = [];
      for (let i = 0; i < 20; i += 1) {
        try {
          await (i % 2 === 0 ? onA : onB).client.readResource({ uri: `${MEM_ROOT}row` });
          passed += 1;
        } catch (error) {
          refusals.push((error as Error).message);
        }
      }
      expect(passed, era).toBe(10);
      expect(refusals[0]).toMatch(
        /Rate limit exceeded: at most 1 requests per second \(burst 10\)/,
      );
    }
  });

  it('answers another principal presenting a session id opened on another instance as if the session did not exist', async () => {
    const backend = new Backend();
    backend.values.set('row', 'v1');
    const alice = generateToken();
    const mallory = generateToken();
    const auth = createAuthenticator({
      tokens: [
        { name: 'alice', sha256: alice.sha256 },
        { name: 'mallory', sha256: mallory.sha256 },
      ],
    });
    const prefix = uniquePrefix();
    const a = await startMember('A', prefix, backend, { http: { auth } });
    cleanup.add(() => a.close());
    const b = await startMember('B', prefix, backend, { http: { auth } });
    cleanup.add(() => b.close());
    const opened = await rpc(
      a.url,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 't', version: '0' },
        },
      },
      { authorization: `Bearer ${alice.token}` },
    );
    expect(opened.status).toBe(200);
    const id = opened.headers.get('mcp-session-id')!;
    const list = { jsonrpc: '2.0', id: 2, method: 'resources/list', params: {} };
    const headers = { 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' };
    const stolen = await rpc(b.url, list, { ...headers, authorization: `Bearer ${mallory.token}` });
    expect(stolen.status).toBe(404);
    expect(await stolen.json()).toMatchObject({
      error: { code: -32001, message: 'Session not found' },
    });
    const owned = await rpc(b.url, list, { ...headers, authorization: `Bearer ${alice.token}` });
    expect(owned.status).toBe(200);
    expect(JSON.stringify(await owned.json())).toContain(`${MEM_ROOT}row`);
  });

  it("counts a principal's 2025 sessions across instances: over the cap, its least recently used session ends on every instance", async () => {
    const backend = new Backend();
    backend.values.set('row', 'v1');
    const prefix = uniquePrefix();
    const http = { sessions: { perPrincipal: 2 } };
    const a = await startMember('A', prefix, backend, { http });
    cleanup.add(() => a.close());
    const b = await startMember('B', prefix, backend, { http });
    cleanup.add(() => b.close());
    const open = async (url: string): Promise<string> => {
      const answer = await rpc(
        url,
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: {
            protocolVersion: '2025-11-25',
            capabilities: {},
            clientInfo: { name: 't', version: '0' },
          },
        },
        {},
      );
      expect(answer.status).toBe(200);
      return answer.headers.get('mcp-session-id')!;
    };
    const first = await open(a.url);
    const second = await open(a.url);
    expect(await sessionStatus(a.url, first)).toBe(200); // first is now the more recently used
    const third = await open(b.url); // B holds none of them: the least recently used (second) ends, on A too
    // ended on the member that made room; the other drops its copy when the end reaches it on the bus
    for (const url of [a.url, b.url])
      await eventuallyAccepted(
        () => sessionStatus(url, second),
        (s) => s === 404,
        'the evicted session to be gone',
      );
    for (const url of [a.url, b.url]) {
      expect(await sessionStatus(url, first)).toBe(200);
      expect(await sessionStatus(url, third)).toBe(200);
    }
  });

  it('over the cap, refuses a new session rather than end one whose GET stream is open on another instance, and ends an idle one once a stream closes', async () => {
    const backend = new Backend();
    backend.values.set('row', 'v1');
    const prefix = uniquePrefix();
    const http = { sessions: { perPrincipal: 2 } };
    const a = await startMember('A', prefix, backend, { http });
    cleanup.add(() => a.close());
    const b = await startMember('B', prefix, backend, { http });
    cleanup.add(() => b.close());
    const redis = new Redis(REDIS_URL!, { keyPrefix: prefix });
    cleanup.add(() => void redis.disconnect());
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 't', version: '0' },
      },
    };
    const open = async (url: string): Promise<string> => {
      const answer = await rpc(url, initialize, {});
      expect(answer.status).toBe(200);
      return answer.headers.get('mcp-session-id')!;
    };
    const headersOf = (id: string): Record<string, string> => ({
      'mcp-session-id': id,
      'mcp-protocol-version': '2025-11-25',
    });
    const streamOn = async (url: string, id: string): Promise<SseReader> => {
      const reader = new SseReader(url, {
        method: 'GET',
        headers: { accept: 'text/event-stream', ...headersOf(id) },
      });
      cleanup.add(() => reader.drop());
      expect(await reader.status).toBe(200);
      return reader;
    };
    const first = await open(a.url);
    const second = await open(a.url);
    expect(
      (
        await rpc(
          a.url,
          {
            jsonrpc: '2.0',
            id: 3,
            method: 'resources/subscribe',
            params: { uri: `${MEM_ROOT}row` },
          },
          headersOf(first),
        )
      ).status,
    ).toBe(200);
    const firstStream = await streamOn(a.url, first);
    const secondStream = await streamOn(a.url, second);

    // Both of the principal's sessions stream on A: B refuses the third and ends neither.
    const refused = await rpc(b.url, initialize, {});
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({
      error: {
        message:
          'Too many sessions: at most 2 per principal, and each is in use (a GET stream open, or still opening); end one with DELETE, or retry later',
        data: { kind: 'sessions_per_principal', limit: 2 },
      },
    });
    for (const url of [a.url, b.url])
      for (const id of [first, second]) expect(await sessionStatus(url, id)).toBe(200);
    backend.values.set('row', 'v2');
    let event = await firstStream.next();
    while (event.data === '') event = await firstStream.next();
    expect(JSON.parse(event.data)).toMatchObject({
      method: 'notifications/resources/updated',
      params: { uri: `${MEM_ROOT}row` },
    });

    // The second's stream closes: that session is idle now, and it is the one that makes room.
    secondStream.drop();
    await eventually(
      async () => (await redis.zscore('streaming:anonymous@127.0.0.1', second)) === null,
      'the closed stream to be no longer marked as streaming',
    );
    const third = await open(b.url);
    // ended on the member that made room; the other drops its copy when the end reaches it on the bus
    for (const url of [a.url, b.url])
      await eventuallyAccepted(
        () => sessionStatus(url, second),
        (s) => s === 404,
        'the idle session to be gone',
      );
    for (const url of [a.url, b.url])
      for (const id of [first, third]) expect(await sessionStatus(url, id)).toBe(200);
    backend.values.set('row', 'v3');
    event = await firstStream.next();
    while (event.data === '') event = await firstStream.next();
    expect(JSON.parse(event.data), 'the streaming session still hears changes').toMatchObject({
      method: 'notifications/resources/updated',
    });
  });
});
