// The 2024-11-05 HTTP+SSE transport (`GET /sse` + `POST /messages?sessionId=…`), for clients that
// do not speak Streamable HTTP, on real sockets: TS SDK 1.8's SSEClientTransport lists, reads and
// calls tools with a bearer token, under the same access rules as /mcp; without a token both
// routes answer 401; another principal's, a forged or a missing session id is 404; an oversized
// POST is 413; the per-principal session cap refuses one more stream and a closed stream frees its
// place; a bad Origin is 403; a client that never reads its stream has its session closed once its
// unsent answers pass the cap; and a drain waits for a request taken on a stream until it is answered.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { connect } from 'node:net';
import { Client as Client18 } from 'sdk-1.8/client/index.js';
import { SSEClientTransport } from 'sdk-1.8/client/sse.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AccessPolicy } from '../../src/core/access.js';
import type { Provider } from '../../src/core/types.js';
import { createAuthenticator, generateToken } from '../../src/http/auth.js';
import type { HttpEndpoint } from '../../src/http/app.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { builtinTools } from '../../src/tools/index.js';
import { Cleanup } from '../helpers/clients.js';
import { eventually } from '../helpers/eventually.js';
import { SseReader } from '../helpers/sse-reader.js';
import { rawHttp } from '../helpers/wire.js';

const ALICE = generateToken();
const BOB = generateToken();
const cleanup = new Cleanup();
afterEach(() => cleanup.run());

let root: string;
let base: string;
let reservoir: Reservoir;
let endpoint: HttpEndpoint;
let origin: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'reservoir-sse-'));
  mkdirSync(join(root, 'docs'));
  mkdirSync(join(root, 'private'));
  writeFileSync(join(root, 'docs', 'guide.md'), '# Guide\n\nHello over SSE.\n');
  writeFileSync(join(root, 'private', 'secret.txt'), 'not for alice\n');
  // Random bytes do not compress and are served as a blob: many reads of it fill a stream fast.
  const noise = Buffer.alloc(512 * 1024);
  for (let i = 0; i < noise.length; i += 1) noise[i] = (i * 7919) % 251;
  writeFileSync(join(root, 'docs', 'noise.bin'), noise);
  base = pathToFileURL(root).href + '/';
  reservoir = createReservoir({
    providers: [filesProvider({ root })],
    access: new AccessPolicy({
      rules: [
        { principals: ['token:alice'], allow: [`${base}docs/**`, 'tool:*'] },
        { principals: ['token:bob'], allow: [`${base}**`, 'tool:*'] },
      ],
    }),
  });
  for (const tool of builtinTools(reservoir.registry)) reservoir.tools.add(tool);
  endpoint = await reservoir.listen({
    port: 0,
    auth: createAuthenticator({
      tokens: [
        { name: 'alice', sha256: ALICE.sha256 },
        { name: 'bob', sha256: BOB.sha256 },
      ],
    }),
    sessions: { perPrincipal: 2 },
    sseMaxBufferedBytes: 256 * 1024,
  });
  origin = new URL(endpoint.url).origin;
});

afterAll(async () => {
  await reservoir?.close();
  rmSync(root, { recursive: true, force: true });
});

/** SDK 1.8's client over its SSEClientTransport, with a bearer token on the stream and on every POST. */
async function connect18(
  token: string,
): Promise<{ client: Client18; transport: SSEClientTransport }> {
  const authorization = `Bearer ${token}`;
  const transport = new SSEClientTransport(new URL('/sse', origin), {
    eventSourceInit: {
      fetch: (url, init) =>
        fetch(url, { ...init, headers: { ...(init?.headers as object), authorization } }),
    },
    requestInit: { headers: { authorization } },
  });
  const client = new Client18({ name: 'old-client', version: '1.8.0' });
  await client.connect(transport);
  cleanup.add(() => client.close());
  return { client, transport };
}

/** A raw `GET /sse`: the reader, and the session's POST URL from its first (`endpoint`) event. */
async function openStream(token: string): Promise<{ reader: SseReader; post: string; id: string }> {
  const reader = new SseReader(`${origin}/sse`, {
    method: 'GET',
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
  });
  cleanup.add(() => reader.drop());
  expect(await reader.status).toBe(200);
  const first = await reader.next();
  expect(first.data).toMatch(/^\/messages\?sessionId=[0-9a-f-]{36}$/);
  return { reader, post: `${origin}${first.data}`, id: first.data.split('=')[1]! };
}

function postJson(
  url: string,
  token: string | undefined,
  body: unknown,
): ReturnType<typeof rawHttp> {
  return rawHttp(url, {
    headers: {
      'content-type': 'application/json',
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify(body),
  });
}

const initialize = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: {
    protocolVersion: '2024-11-05',
    capabilities: {},
    clientInfo: { name: 'raw', version: '1' },
  },
};

describe('TS SDK 1.8 over the HTTP+SSE transport', () => {
  it('connects with a token, lists, reads and calls tools, under the same access rules as /mcp', async () => {
    const { client } = await connect18(ALICE.token);
    expect(client.getServerVersion()?.name).toBe('reservoir');
    const listed = await client.listResources();
    const uris = listed.resources.map((r) => r.uri);
    expect(uris).toContain(`${base}docs/guide.md`);
    expect(uris.some((uri) => uri.includes('/private/'))).toBe(false);
    const read = await client.readResource({ uri: `${base}docs/guide.md` });
    expect(read.contents[0]).toMatchObject({ text: '# Guide\n\nHello over SSE.\n' });
    await expect(client.readResource({ uri: `${base}private/secret.txt` })).rejects.toThrow(
      /not found/i,
    );
    const called = await client.callTool({
      name: 'read_resource',
      arguments: { uri: `${base}docs/guide.md` },
    });
    expect(JSON.stringify(called.content)).toContain('Hello over SSE.');
    // Bob's rules let him read what Alice's do not.
    const { client: bob } = await connect18(BOB.token);
    const secret = await bob.readResource({ uri: `${base}private/secret.txt` });
    expect(secret.contents[0]).toMatchObject({ text: 'not for alice\n' });
  });
});

describe('the HTTP+SSE routes refuse', () => {
  it('a request without a token with 401 on both routes, before anything else', async () => {
    const stream = await rawHttp(`${origin}/sse`, { method: 'GET', headers: {} });
    expect(stream.status).toBe(401);
    expect(stream.headers['www-authenticate']).toMatch(/^Bearer/);
    const { id } = await openStream(ALICE.token);
    const post = await postJson(`${origin}/messages?sessionId=${id}`, undefined, initialize);
    expect(post.status).toBe(401);
  });

  it("another principal's session id as not found, and a forged, unknown or missing one too", async () => {
    const { post, reader } = await openStream(ALICE.token);
    const asBob = await postJson(post, BOB.token, initialize);
    expect(asBob.status).toBe(404);
    expect(JSON.parse(asBob.body)).toMatchObject({
      error: { code: -32001, message: 'Session not found; open a new one with GET /sse' },
    });
    for (const url of [
      `${origin}/messages?sessionId=00000000-0000-4000-8000-000000000000`,
      `${origin}/messages?sessionId=../../etc/passwd`,
      `${origin}/messages`,
    ])
      expect((await postJson(url, ALICE.token, initialize)).status).toBe(404);
    // The owner's session still works: its answer comes on the stream.
    expect((await postJson(post, ALICE.token, initialize)).status).toBe(202);
    const answer = JSON.parse((await reader.next()).data) as { id: number; result: unknown };
    expect(answer).toMatchObject({ id: 0, result: { serverInfo: { name: 'reservoir' } } });
  });

  it('an oversized POST with 413, declared or chunked, and a body that is not JSON-RPC with 400', async () => {
    const { post } = await openStream(ALICE.token);
    const huge = JSON.stringify({
      ...initialize,
      params: { pad: 'x'.repeat(4 * 1024 * 1024 + 10) },
    });
    const declared = await rawHttp(post, {
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ALICE.token}` },
      body: huge,
    });
    expect(declared.status).toBe(413);
    expect(declared.body).toContain('Request body too large (limit 4194304 bytes)');
    const chunked = await rawHttp(post, {
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ALICE.token}` },
      body: huge,
      chunked: true,
    });
    expect(chunked.status).toBe(413);
    const notRpc = await postJson(post, ALICE.token, { hello: 'world' });
    expect(notRpc.status).toBe(400);
    expect(notRpc.body).toContain('not a JSON-RPC message');
    const text = await rawHttp(post, {
      headers: { 'content-type': 'text/plain', authorization: `Bearer ${ALICE.token}` },
      body: 'hi',
    });
    expect(text.status).toBe(415);
  });

  it('a stream from a foreign Origin with 403, and the wrong method with 405', async () => {
    const foreign = await rawHttp(`${origin}/sse`, {
      method: 'GET',
      headers: { authorization: `Bearer ${ALICE.token}`, origin: 'http://evil.example' },
    });
    expect(foreign.status).toBe(403);
    const wrong = await rawHttp(`${origin}/sse`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ALICE.token}` },
    });
    expect(wrong.status).toBe(405);
  });

  it("one stream more than the principal's cap with 429, and a closed stream frees its place", async () => {
    const first = await openStream(ALICE.token);
    await openStream(ALICE.token);
    const third = await rawHttp(`${origin}/sse`, {
      method: 'GET',
      headers: { authorization: `Bearer ${ALICE.token}` },
    });
    expect(third.status).toBe(429);
    expect(JSON.parse(third.body)).toMatchObject({
      error: {
        code: -32013,
        message:
          'Too many SSE sessions: at most 2 per principal, each with its stream open; close one, or retry later',
        data: { kind: 'sessions_per_principal', limit: 2, active: 2 },
      },
    });
    // Bob has his own cap.
    await openStream(BOB.token);
    first.reader.drop();
    // The closed stream's session is gone: its id is not found, and Alice may open another.
    await eventually(
      async () => (await postJson(first.post, ALICE.token, initialize)).status === 404,
      'the dropped stream’s session to end',
    );
    await openStream(ALICE.token);
  });
});

describe('a client that never reads its stream', () => {
  it('has its session closed once its unsent answers pass the cap, and the server stays up', async () => {
    const socket = connect(Number(new URL(origin).port), '127.0.0.1');
    cleanup.add(() => socket.destroy());
    let head = '';
    await new Promise<void>((resolve) => {
      socket.on('data', function onData(chunk: Buffer) {
        head += chunk.toString('utf8');
        if (head.includes('sessionId=')) {
          socket.off('data', onData);
          // From now on nothing is read: the kernel's buffers fill, then the server's.
          socket.pause();
          resolve();
        }
      });
      socket.write(
        `GET /sse HTTP/1.1\r\nHost: ${new URL(origin).host}\r\nAuthorization: Bearer ${BOB.token}\r\nAccept: text/event-stream\r\n\r\n`,
      );
    });
    const id = /sessionId=([0-9a-f-]{36})/.exec(head)![1]!;
    const post = `${origin}/messages?sessionId=${id}`;
    expect((await postJson(post, BOB.token, initialize)).status).toBe(202);
    await postJson(post, BOB.token, { jsonrpc: '2.0', method: 'notifications/initialized' });
    let n = 1;
    await eventually(
      async () => {
        const read = {
          jsonrpc: '2.0',
          id: (n += 1),
          method: 'resources/read',
          params: { uri: `${base}docs/noise.bin` },
        };
        return (await postJson(post, BOB.token, read)).status === 404;
      },
      'the session of a client that does not read to be closed',
      { deadlineMs: 60_000 },
    );
    // Others are served as before.
    const { client } = await connect18(BOB.token);
    expect((await client.listResources()).resources.length).toBeGreaterThan(0);
  });
});

describe('the drain', () => {
  it('waits for a request taken on an SSE stream until its answer went out on the stream', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started = 0;
    const held: Provider = {
      name: 'held',
      root: 'held://x/',
      async list() {
        return { items: [{ uri: 'held://x/a', name: 'a' }] };
      },
      async read(uri: string) {
        started += 1;
        await gate;
        return { contents: [{ uri, mimeType: 'text/plain', text: 'held answer' }] };
      },
    };
    const server = createReservoir({ providers: [held] });
    cleanup.add(() => server.close());
    cleanup.add(() => release());
    const local = await server.listen({ port: 0 });
    const at = new URL(local.url).origin;
    const reader = new SseReader(`${at}/sse`, { method: 'GET', headers: {} });
    cleanup.add(() => reader.drop());
    const post = `${at}${(await reader.next()).data}`;
    await postJson(post, undefined, initialize);
    await reader.next();
    await postJson(post, undefined, { jsonrpc: '2.0', method: 'notifications/initialized' });
    const read = { jsonrpc: '2.0', id: 7, method: 'resources/read', params: { uri: 'held://x/a' } };
    expect((await postJson(post, undefined, read)).status).toBe(202);
    await eventually(() => started === 1, 'the read to start');
    let drained: number | undefined;
    const draining = local.drain().then((left) => (drained = left));
    // No new connection is taken while draining.
    await expect(rawHttp(`${at}/sse`, { method: 'GET' })).rejects.toThrow(/ECONNREFUSED/);
    expect(drained).toBeUndefined();
    release();
    const answer = JSON.parse((await reader.next()).data) as { id: number; result: unknown };
    expect(answer).toMatchObject({ id: 7, result: { contents: [{ text: 'held answer' }] } });
    await draining;
    expect(drained).toBe(0);
  });
});
