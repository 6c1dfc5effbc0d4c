// Issue 11, item 4: one principal cannot fill the 2025-era session pool. Sessions are capped per
// principal — over the cap its own least recently used session is closed (answered 404 from then
// on) — and `initialize` is rate-limited per principal (per address for anonymous callers), so
// principal A opening sessions as fast as it can never stops principal B: over real HTTP, with raw
// requests and the SDK client.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthenticator } from '../../src/http/auth.js';
import type { HttpEndpoint, HttpOptions } from '../../src/http/app.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { dirUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { eventually } from '../helpers/eventually.js';
import { initializeParams } from '../helpers/wire.js';
import {
  ACCEPT,
  AuthedLegacySession,
  closeClient,
  connectWithToken,
  makeToken,
  settle,
} from './harness.js';

const alice = makeToken('alice', []);
const bob = makeToken('bob', []);
const carol = makeToken('carol', []);

let root: string;
const started: Reservoir[] = [];
const sessions: AuthedLegacySession[] = [];

async function serve(options: HttpOptions, withAuth = true): Promise<HttpEndpoint> {
  const reservoir = createReservoir({ providers: [filesProvider({ root })] });
  started.push(reservoir);
  return reservoir.listen({
    host: '127.0.0.1',
    port: 0,
    ...(withAuth
      ? {
          auth: createAuthenticator({
            tokens: [alice, bob, carol].map(({ name, sha256, scopes }) => ({
              name,
              sha256,
              scopes,
            })),
          }),
        }
      : {}),
    ...options,
  });
}

async function open(url: string, token: string): Promise<AuthedLegacySession> {
  const session = await AuthedLegacySession.open(url, token);
  sessions.push(session);
  return session;
}

/** The status of a `resources/read` in a session: 200 while it lives, 404 once closed. */
async function readStatus(session: AuthedLegacySession): Promise<number> {
  const { raw } = await session.request('resources/read', { uri: `${dirUri(root)}a.md` });
  return raw.status;
}

/** A raw `initialize` from a chosen local address (127.0.0.0/8 all reaches the loopback server). */
function initializeFrom(
  url: string,
  localAddress: string,
  token?: string,
): Promise<{ status: number; headers: Record<string, unknown>; body: Record<string, unknown> }> {
  const target = new URL(url);
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 7,
    method: 'initialize',
    params: initializeParams(),
  });
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        localAddress,
        agent: false,
        headers: {
          'content-type': 'application/json',
          accept: ACCEPT,
          'content-length': Buffer.byteLength(body),
          ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        res.on('end', () => {
          const json = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? '{}');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: JSON.parse(json) as Record<string, unknown>,
          });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

beforeAll(() => {
  root = makeTempDir('reservoir-session-quota-');
  writeTree(root, { 'a.md': 'alpha\n' });
});

afterAll(async () => {
  await Promise.allSettled(sessions.map((s) => s.close()));
  await Promise.allSettled(started.map((r) => r.close()));
  removeTree(root);
});

describe('sessions per principal', () => {
  it('keeps principal B served while principal A opens three times the global pool', async () => {
    const url = (
      await serve({
        maxSessions: 6,
        sessions: { perPrincipal: 3, initialize: { perSecond: 1000, burst: 1000 } },
      })
    ).url;
    const calm = await connectWithToken('2025', url, bob.token);
    try {
      const flood: AuthedLegacySession[] = [];
      for (let i = 0; i < 18; i += 1) flood.push(await open(url, alice.token));
      // A holds its three newest sessions; every older one was closed to make room.
      const statuses = await Promise.all(flood.map(readStatus));
      expect(statuses).toEqual([...Array<number>(15).fill(404), 200, 200, 200]);
      // B: its SDK session still answers, and it opens sessions of its own up to its cap.
      expect((await calm.readResource({ uri: `${dirUri(root)}a.md` })).contents[0]).toMatchObject({
        text: 'alpha\n',
      });
      const late = await connectWithToken('2025', url, bob.token);
      expect((await late.readResource({ uri: `${dirUri(root)}a.md` })).contents[0]).toMatchObject({
        text: 'alpha\n',
      });
      await closeClient(late);
      const mine = [await open(url, bob.token), await open(url, bob.token)];
      expect(await Promise.all(mine.map(readStatus))).toEqual([200, 200]);
      // A opening more only ever closes A's own sessions.
      await open(url, alice.token);
      expect((await calm.readResource({ uri: `${dirUri(root)}a.md` })).contents[0]).toMatchObject({
        text: 'alpha\n',
      });
      expect(await Promise.all(mine.map(readStatus))).toEqual([200, 200]);
    } finally {
      await closeClient(calm);
    }
  });

  it("closes the principal's least recently used session, not its oldest one", async () => {
    const url = (await serve({ sessions: { perPrincipal: 3 } })).url;
    const [first, second, third] = [
      await open(url, alice.token),
      await open(url, alice.token),
      await open(url, alice.token),
    ];
    expect(await readStatus(first!)).toBe(200); // `first` is now the most recently used
    const fourth = await open(url, alice.token);
    expect(await readStatus(second!)).toBe(404);
    expect(await Promise.all([first!, third!, fourth].map(readStatus))).toEqual([200, 200, 200]);
  });

  it('never closes a session whose GET stream is open, and refuses a new one when every session is streaming', async () => {
    const url = (await serve({ sessions: { perPrincipal: 2 } })).url;
    const streams: AbortController[] = [];
    try {
      const [listening, idle] = [await open(url, alice.token), await open(url, alice.token)];
      const abort = new AbortController();
      streams.push(abort);
      // Held until the test ends: fetch cancels the unread body of a response once it is garbage
      // collected, which would end that GET stream early.
      const held: Response[] = [];
      const stream = await fetch(url, {
        method: 'GET',
        headers: { ...listening!.headers(), accept: 'text/event-stream' },
        signal: abort.signal,
      });
      held.push(stream);
      expect(stream.status).toBe(200);
      // `listening` is the least recently used, but its stream is open: `idle` is closed instead.
      const third = await open(url, alice.token);
      expect(await Promise.all([listening!, idle!, third].map(readStatus))).toEqual([
        200, 404, 200,
      ]);
      // Both held sessions streaming: nothing may be closed, so a new one is refused, naming the cap.
      const abort2 = new AbortController();
      streams.push(abort2);
      const stream2 = await fetch(url, {
        method: 'GET',
        headers: { ...third.headers(), accept: 'text/event-stream' },
        signal: abort2.signal,
      });
      held.push(stream2);
      expect(stream2.status).toBe(200);
      const refused = await initializeFrom(url, '127.0.0.1', alice.token);
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({
        id: 7,
        error: {
          code: -32013,
          data: { code: 'limit_exceeded', kind: 'sessions_per_principal', limit: 2, active: 2 },
        },
      });
      expect(String((refused.body['error'] as { message: string }).message)).toBe(
        'Too many sessions: at most 2 per principal, and each is in use (a GET stream open, or still opening); end one with DELETE, or retry later',
      );
      // A stream that ends leaves its session idle, and closable again.
      abort.abort();
      const again = await eventually(async () => {
        const answer = await initializeFrom(url, '127.0.0.1', alice.token);
        return answer.status === 429 ? undefined : answer;
      }, 'a new session to be accepted once the stream ended');
      expect(again.status).toBe(200);
      expect(await readStatus(listening!)).toBe(404);
      held.length = 0;
    } finally {
      for (const abort of streams) abort.abort();
    }
  });

  it('frees a slot when a session is ended with DELETE, closing nothing else', async () => {
    const url = (await serve({ sessions: { perPrincipal: 2 } })).url;
    const [first, second] = [await open(url, alice.token), await open(url, alice.token)];
    await second!.close();
    const third = await open(url, alice.token);
    expect(await Promise.all([first!, third].map(readStatus))).toEqual([200, 200]);
  });
});

describe('the initialize rate', () => {
  it('refuses principal A over its initialize budget with 429, -32013 and Retry-After, while B still connects', async () => {
    const url = (await serve({ sessions: { initialize: { perSecond: 0.1, burst: 3 } } })).url;
    for (let i = 0; i < 3; i += 1) await open(url, alice.token);
    const refused = await initializeFrom(url, '127.0.0.1', alice.token);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.body).toMatchObject({
      jsonrpc: '2.0',
      id: 7,
      error: {
        code: -32013,
        data: { code: 'limit_exceeded', kind: 'initialize', limit: 0.1, burst: 3 },
      },
    });
    expect(String((refused.body['error'] as { message: string }).message)).toMatch(
      /^Too many sessions opened: at most 3 initialize requests per principal within 30 s \(0\.1 per second\); retry in /,
    );
    // The SDK client of A cannot connect either, and says why.
    const sdk = await settle(connectWithToken('2025', url, alice.token));
    expect(sdk.ok).toBe(false);
    if (!sdk.ok)
      expect(String((sdk.error as Error).message)).toMatch(/429|Too many sessions opened/);
    // B's budget is its own: the SDK client connects and reads.
    const other = await connectWithToken('2025', url, bob.token);
    try {
      expect((await other.readResource({ uri: `${dirUri(root)}a.md` })).contents[0]).toMatchObject({
        text: 'alpha\n',
      });
    } finally {
      await closeClient(other);
    }
    // 2026-07-28 requests open no session and are not counted against it.
    const modern = await connectWithToken('2026', url, alice.token);
    try {
      expect((await modern.readResource({ uri: `${dirUri(root)}a.md` })).contents[0]).toMatchObject(
        { text: 'alpha\n' },
      );
    } finally {
      await closeClient(modern);
    }
  });

  it('counts anonymous callers by address: one address spending its budget leaves another served', async () => {
    const url = (
      await serve(
        { sessions: { perPrincipal: 2, initialize: { perSecond: 0.1, burst: 2 } } },
        false,
      )
    ).url;
    expect((await initializeFrom(url, '127.0.0.1')).status).toBe(200);
    expect((await initializeFrom(url, '127.0.0.1')).status).toBe(200);
    const refused = await initializeFrom(url, '127.0.0.1');
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ error: { code: -32013, data: { kind: 'initialize' } } });
    const elsewhere = await initializeFrom(url, '127.0.0.2');
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.headers['mcp-session-id']).toBeTypeOf('string');
    expect(elsewhere.body).toMatchObject({ id: 7, result: { serverInfo: expect.any(Object) } });
  });
});

describe('the global pool', () => {
  it('still answers 503 naming the pool size once enough principals fill it, and never because of one principal alone', async () => {
    const url = (await serve({ maxSessions: 4, sessions: { perPrincipal: 2 } })).url;
    for (let i = 0; i < 6; i += 1) await open(url, alice.token);
    await open(url, bob.token);
    await open(url, bob.token);
    const full = await initializeFrom(url, '127.0.0.1', carol.token);
    expect(full.status).toBe(503);
    expect(full.body).toMatchObject({
      error: { code: -32000, message: 'Too many sessions (limit 4); try again later' },
    });
  });
});
