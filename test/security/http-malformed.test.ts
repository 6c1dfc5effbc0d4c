// Issue 6, item 7: malformed and hostile HTTP, on raw sockets below any client library. Bad JSON is
// 400 -32700; a wrong content type 415; a body over the cap 413 whether declared or chunked; a
// client that sends its head or its body too slowly is cut off by the server's timeouts; a bad
// MCP-Protocol-Version header gets the SDK's error; a head over Node's limit is 431. With
// authentication on, nothing of the body is looked at before the caller is known.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthenticator } from '../../src/http/auth.js';
import type { HttpEndpoint } from '../../src/http/app.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { LEGACY_VERSION, MODERN_VERSION } from '../helpers/clients.js';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { initializeParams, modernMeta, rawHttp } from '../helpers/wire.js';
import { makeToken } from './harness.js';

const MAX_BODY = 1024;
const JSON_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};
const token = makeToken('client', []);

let root: string;
let open: Reservoir;
let openEndpoint: HttpEndpoint;
let guarded: Reservoir;
let guardedEndpoint: HttpEndpoint;

beforeAll(async () => {
  root = makeTempDir('reservoir-malformed-');
  writeTree(root, { 'a.md': 'alpha\n' });
  open = createReservoir({ providers: [filesProvider({ root })] });
  openEndpoint = await open.listen({
    host: '127.0.0.1',
    port: 0,
    maxBodyBytes: MAX_BODY,
    timeouts: { headersMs: 500, requestMs: 1_000 },
  });
  guarded = createReservoir({ providers: [filesProvider({ root })] });
  guardedEndpoint = await guarded.listen({
    host: '127.0.0.1',
    port: 0,
    maxBodyBytes: MAX_BODY,
    auth: createAuthenticator({
      tokens: [{ name: token.name, sha256: token.sha256, scopes: token.scopes }],
    }),
  });
});

afterAll(async () => {
  await Promise.allSettled([open?.close(), guarded?.close()]);
  removeTree(root);
});

/** A raw socket to the endpoint: what it received, and when it closed. */
function socketTo(url: string): { socket: Socket; received: () => string; closed: Promise<void> } {
  const target = new URL(url);
  const socket = connect(Number(target.port), target.hostname);
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return { socket, received: () => text, closed };
}

async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>(
        (_, reject) =>
          (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)),
      ),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

describe('malformed requests', () => {
  it('answers a body that is not JSON with 400 and -32700', async () => {
    for (const body of ['{"jsonrpc":"2.0",', 'not json at all', '\u0000\u0001']) {
      const response = await rawHttp(openEndpoint.url, { headers: JSON_HEADERS, body });
      expect(response.status, body).toBe(400);
      expect(JSON.parse(response.body), body).toMatchObject({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32700 },
      });
    }
  });

  it('answers a wrong content type with 415, in both eras', async () => {
    const legacy = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: initializeParams(),
    });
    const modern = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'resources/list',
      params: { _meta: modernMeta() },
    });
    for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
      const old = await rawHttp(openEndpoint.url, {
        headers: { ...JSON_HEADERS, 'content-type': type, 'mcp-protocol-version': LEGACY_VERSION },
        body: legacy,
      });
      expect(old.status, `2025 ${type}`).toBe(415);
      const now = await rawHttp(openEndpoint.url, {
        headers: {
          ...JSON_HEADERS,
          'content-type': type,
          'mcp-protocol-version': MODERN_VERSION,
          'mcp-method': 'resources/list',
        },
        body: modern,
      });
      expect(now.status, `2026 ${type}`).toBe(415);
    }
  });

  it('answers a body over the cap with 413, declared or chunked', async () => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { ...initializeParams(), padding: 'x'.repeat(MAX_BODY * 4) },
    });
    const declared = await rawHttp(openEndpoint.url, { headers: JSON_HEADERS, body });
    expect(declared.status).toBe(413);
    expect(JSON.parse(declared.body)).toMatchObject({ error: { code: -32600 } });
    const chunked = await rawHttp(openEndpoint.url, { headers: JSON_HEADERS, body, chunked: true });
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.body)).toMatchObject({ error: { code: -32600 } });
    // A body just under the cap is read.
    const small = await rawHttp(openEndpoint.url, {
      headers: JSON_HEADERS,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: initializeParams(),
      }),
    });
    expect(small.status).toBe(200);
  });

  it('refuses an unauthenticated caller before reading its body (401, not 400 or 413)', async () => {
    expect(
      (await rawHttp(guardedEndpoint.url, { headers: JSON_HEADERS, body: 'not json' })).status,
    ).toBe(401);
    expect(
      (
        await rawHttp(guardedEndpoint.url, {
          headers: JSON_HEADERS,
          body: 'x'.repeat(MAX_BODY * 4),
          chunked: true,
        })
      ).status,
    ).toBe(401);
    const authed = await rawHttp(guardedEndpoint.url, {
      headers: { ...JSON_HEADERS, authorization: `Bearer ${token.token}` },
      body: 'not json',
    });
    expect(authed.status).toBe(400);
  });

  it('answers a bad MCP-Protocol-Version header with the SDK error', async () => {
    for (const version of ['1999-01-01', 'not-a-version']) {
      const response = await rawHttp(openEndpoint.url, {
        headers: {
          ...JSON_HEADERS,
          'mcp-protocol-version': version,
          'mcp-method': 'resources/list',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'resources/list',
          params: {
            _meta: { ...modernMeta(), 'io.modelcontextprotocol/protocolVersion': version },
          },
        }),
      });
      expect(response.status, version).toBe(400);
      const message =
        response.messages[0] ??
        (JSON.parse(response.body) as { error?: { code: number; message: string } });
      expect(message.error?.code, version).toBeTypeOf('number');
      expect(message.error?.message, version).toMatch(/version/i);
    }
    // The right one is served.
    const fine = await rawHttp(openEndpoint.url, {
      headers: {
        ...JSON_HEADERS,
        'mcp-protocol-version': MODERN_VERSION,
        'mcp-method': 'resources/list',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'resources/list',
        params: { _meta: modernMeta() },
      }),
    });
    expect(fine.status).toBe(200);
  });

  it('answers a head over the header size limit with 431', async () => {
    const response = await rawHttp(openEndpoint.url, {
      headers: { ...JSON_HEADERS, 'x-padding': 'a'.repeat(32 * 1024) },
      body: '{}',
    });
    expect(response.status).toBe(431);
  });
});

describe('slow clients (slowloris)', () => {
  it('cuts off a client whose head never finishes', async () => {
    const { socket, received, closed } = socketTo(openEndpoint.url);
    socket.write(
      `POST /mcp HTTP/1.1\r\nHost: ${new URL(openEndpoint.url).host}\r\ncontent-type: application/json\r\n`,
    );
    // Drip a header byte now and then, never ending the head.
    const drip = setInterval(() => socket.write('x-drip: 1\r\n'), 100);
    try {
      await within(closed, 10_000, 'the server to close a slow-header connection');
    } finally {
      clearInterval(drip);
      socket.destroy();
    }
    expect(received()).toMatch(/^(HTTP\/1\.1 408|$)/);
  });

  it('cuts off a client whose body never finishes', async () => {
    const { socket, received, closed } = socketTo(openEndpoint.url);
    socket.write(
      `POST /mcp HTTP/1.1\r\nHost: ${new URL(openEndpoint.url).host}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: 500\r\n\r\n{"jsonrpc":`,
    );
    const drip = setInterval(() => socket.write(' '), 100);
    try {
      await within(closed, 10_000, 'the server to close a slow-body connection');
    } finally {
      clearInterval(drip);
      socket.destroy();
    }
    expect(received()).toMatch(/^(HTTP\/1\.1 408|$)/);
  });

  it('still serves a well-behaved client afterwards', async () => {
    const response = await rawHttp(openEndpoint.url, {
      headers: JSON_HEADERS,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: initializeParams(),
      }),
    });
    expect(response.status).toBe(200);
  });
});
