// Pins the HTTP endpoint's guards and the process lifecycle, on real sockets and real processes:
// DNS-rebinding checks (a foreign Host or Origin is refused, the real host:port accepted), the body
// cap (413, declared or chunked), 404 off /mcp, the library's 127.0.0.1 default bind, prompt clean
// exits on SIGTERM and SIGINT with a 2025 session open, and the stdio server exiting when stdin
// closes.
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { filesProvider } from '../../src/providers/files/index.js';
import { createReservoir } from '../../src/server/index.js';
import { ensureBuilt } from '../helpers/build.js';
import {
  Cleanup,
  connectHttp,
  listPage,
  MODERN_VERSION,
  spawnHttpServer,
  type HttpServerProcess,
} from '../helpers/clients.js';
import { fileUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { modernMeta, rawHttp, RawStdio, type RawHttpOptions } from '../helpers/wire.js';

const MAX_BODY = 64 * 1024;
/**
 * The drain grace (for requests in flight) the shutdown tests give the server: far longer than any
 * test may run, so a process that exits at all did not wait it out for an idle open session.
 */
const LONG_GRACE = ['--shutdown-grace-ms', '600000'];

const cleanup = new Cleanup();
let root: string;
let http: HttpServerProcess;
let port: string;

beforeAll(async () => {
  await ensureBuilt();
  root = makeTempDir();
  cleanup.add(() => removeTree(root));
  writeTree(root, { 'a.txt': 'a\n', 'b/c.md': '# c\n' });
  http = await spawnHttpServer([root], ['--max-body-bytes', String(MAX_BODY)], cleanup);
  port = new URL(http.url).port;
});

afterAll(() => cleanup.run());

/** A valid 2026-07-28 `resources/list` request, with extra or overriding headers. */
function listRequest(
  headers: Record<string, string> = {},
  extra: Partial<RawHttpOptions> = {},
): RawHttpOptions {
  return {
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN_VERSION,
      'mcp-method': 'resources/list',
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'resources/list',
      params: { _meta: modernMeta() },
    }),
    ...extra,
  };
}

describe('DNS-rebinding protection', () => {
  it('accepts a request whose Host is the real host:port, or localhost:port', async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) {
      const response = await rawHttp(http.url, listRequest({ host }));
      expect(response.status, host).toBe(200);
      expect(response.messages[0]?.result?.['resources'], host).toHaveLength(2);
    }
  });

  it('refuses a request whose Host is a foreign name, with or without the port', async () => {
    for (const host of [
      'evil.example.com',
      `evil.example.com:${port}`,
      `127.0.0.1.evil.example.com:${port}`,
    ]) {
      const response = await rawHttp(http.url, listRequest({ host }));
      expect(response.status, host).toBeGreaterThanOrEqual(400);
      expect(response.status, host).toBeLessThan(500);
      expect(response.body, host).not.toContain('a.txt');
    }
  });

  it('refuses a request with a foreign Origin, and accepts one whose Origin is the server itself', async () => {
    const foreign = await rawHttp(http.url, listRequest({ origin: 'http://evil.example.com' }));
    expect(foreign.status).toBeGreaterThanOrEqual(400);
    expect(foreign.status).toBeLessThan(500);
    expect(foreign.body).not.toContain('a.txt');
    for (const origin of [`http://127.0.0.1:${port}`, `http://localhost:${port}`]) {
      const own = await rawHttp(http.url, listRequest({ origin }));
      expect(own.status, origin).toBe(200);
    }
  });
});

describe('request limits and routing', () => {
  it('answers a body over --max-body-bytes with 413 when Content-Length declares it', async () => {
    const response = await rawHttp(
      http.url,
      listRequest({}, { body: `{"pad":"${'x'.repeat(MAX_BODY)}"}` }),
    );
    expect(response.status).toBe(413);
  });

  it('answers a chunked body that grows over --max-body-bytes with 413', async () => {
    const response = await rawHttp(
      http.url,
      listRequest({}, { body: `{"pad":"${'x'.repeat(MAX_BODY * 2)}"}`, chunked: true }),
    );
    expect(response.status).toBe(413);
  });

  it('serves a body just under --max-body-bytes normally', async () => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'resources/list',
      params: { _meta: { ...modernMeta(), pad: 'x'.repeat(MAX_BODY - 1024) } },
    });
    expect(Buffer.byteLength(body)).toBeLessThan(MAX_BODY);
    const response = await rawHttp(http.url, listRequest({}, { body }));
    expect(response.status).toBe(200);
  });

  it('answers any path other than /mcp (and the explorer) with 404', async () => {
    const base = http.url.slice(0, -'/mcp'.length);
    // GET / is the explorer's redirect (test/explorer/serve.test.ts); nothing else at / is served.
    expect((await rawHttp(`${base}/`, { method: 'GET' })).headers['location']).toBe('/ui/');
    for (const [method, path] of [
      ['POST', '/'],
      ['PUT', '/ui'],
      ['POST', '/mcp/extra'],
      ['POST', '/MCP'],
      ['GET', '/favicon.ico'],
      ['POST', '/api/mcp'],
    ] as const) {
      const response = await rawHttp(`${base}${path}`, listRequest({}, { method }));
      expect(response.status, `${method} ${path}`).toBe(404);
    }
    // A query string does not change the path.
    expect((await rawHttp(`${http.url}?x=1`, listRequest())).status).toBe(200);
  });
});

describe('the library listen()', () => {
  it('binds 127.0.0.1 when no host is given, and serves the SDK client there', async () => {
    const reservoir = createReservoir({ providers: [await filesProvider({ root })], pageSize: 1 });
    cleanup.add(() => reservoir.close());
    const endpoint = await reservoir.listen({ port: 0 });
    const address = endpoint.server.address() as AddressInfo;
    expect(address.address).toBe('127.0.0.1');
    expect(endpoint.url).toBe(`http://127.0.0.1:${address.port}/mcp`);
    const { client } = await connectHttp('2026', endpoint.url, cleanup);
    const page = await listPage(client);
    expect(page.resources.map((r) => r.uri)).toEqual([fileUri(root, 'a.txt')]);
    expect(page.nextCursor).toBeDefined();
    await client.close();
    await reservoir.close();
  });
});

describe('process lifecycle', () => {
  const local = new Cleanup();
  afterEach(() => local.run());

  it.each(['SIGTERM', 'SIGINT'] as const)(
    'exits 0 promptly on %s while a 2025 session is open',
    async (signal) => {
      const server = await spawnHttpServer([root], LONG_GRACE, local);
      const { client, transport } = await connectHttp('2025', server.url, local);
      await client.listResources();
      expect(transport.sessionId).toBeDefined();
      server.child.kill(signal);
      const { code, signal: killedBy } = await server.exited;
      expect({ code, killedBy }).toEqual({ code: 0, killedBy: null });
    },
  );

  it.each(['SIGTERM', 'SIGINT'] as const)(
    'exits 0 promptly on %s in stdio mode with a 2025 session open',
    async (signal) => {
      const wire = RawStdio.serve([root], ['--log-level', 'warn', ...LONG_GRACE]);
      local.add(() => wire.kill());
      await wire.initialize();
      wire.child.kill(signal);
      expect(await wire.exited).toEqual({ code: 0, signal: null });
    },
  );

  it('exits 0 when the client closes stdin in stdio mode', async () => {
    const wire = RawStdio.serve([root]);
    local.add(() => wire.kill());
    const init = await wire.initialize();
    expect(init.result).toBeDefined();
    expect(await wire.end()).toEqual({ code: 0, signal: null });
  });

  it('exits 0 when stdin closes before any message was sent', async () => {
    const wire = RawStdio.serve([root]);
    local.add(() => wire.kill());
    expect(await wire.end()).toEqual({ code: 0, signal: null });
    expect(wire.lines).toEqual([]);
  });
});
