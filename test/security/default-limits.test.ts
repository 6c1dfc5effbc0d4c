// Issue 11, item 4: the per-principal caps of `reservoir serve --http` are real without a `limits`
// section — with no config file at all, and with a config file that has none. Over the real CLI,
// the SDK client and raw requests: the 9th notification stream of one principal (a 2026
// `subscriptions/listen` stream or a 2025-era GET stream) is refused with -32013 naming the default
// cap of 8; with reads held open by a slow upstream, the 17th concurrent read of one principal is
// refused naming the default cap of 16 (both eras), and the others complete once the upstream answers.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import {
  Cleanup,
  connectHttp,
  ERAS,
  LEGACY_VERSION,
  spawnHttpServer,
  type HttpServerProcess,
} from '../helpers/clients.js';
import { dirUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { initializeParams, rawHttp } from '../helpers/wire.js';
import { Upstream } from '../providers/http-upstream.js';
import { ACCEPT, errorCode, settle, waitFor } from './harness.js';

const cleanup = new Cleanup();
let dir: string;
let upstream: Upstream;
/** Upstream requests held open until the test lets them go. */
const held: (() => void)[] = [];

beforeAll(async () => {
  await ensureBuilt();
  dir = makeTempDir('reservoir-default-limits-');
  writeTree(dir, { 'docs/a.md': 'alpha\n' });
  upstream = await Upstream.start();
  upstream.otherwise((req, res) => {
    held.push(() =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ path: req.url })),
    );
  });
  // A config file with sources and an HTTP section, and no `limits`.
  writeFileSync(
    join(dir, 'no-limits.yaml'),
    [
      'sources:',
      '  - type: files',
      '    root: docs',
      '  - type: http',
      '    name: slow',
      `    baseUrl: ${upstream.origin}/`,
      '    allowPrivateNetworks: true',
      '    endpoints:',
      '      - { name: item, uri: "items/{id}", upstream: "items/{id}" }',
      'server:',
      '  http: { host: 127.0.0.1, port: 0 }',
      '',
    ].join('\n'),
  );
});

afterAll(async () => {
  for (const release of held.splice(0)) release();
  await cleanup.run();
  await upstream.close();
  removeTree(dir);
});

const setups = [
  {
    name: 'without a config file',
    start: () => spawnHttpServer([join(dir, 'docs')], ['--no-config'], cleanup),
  },
  {
    name: 'with a config file that has no limits section',
    start: () => spawnHttpServer([], ['--config', join(dir, 'no-limits.yaml')], cleanup),
  },
] as const;

function expectLimit(error: unknown, kind: string, limit: number): void {
  expect(errorCode(error)).toBe(-32013);
  expect((error as { data?: unknown }).data).toMatchObject({ code: 'limit_exceeded', kind, limit });
}

/**
 * The open GET streams' responses, held until the test ends: fetch cancels the body of a response
 * that is garbage collected unread, which would end its stream and give its slot back mid-test.
 */
const heldStreams: Response[] = [];

/** Opens a raw 2025-era session and its GET stream; resolves with the GET's status and body when refused. */
async function openGetStream(
  url: string,
  streams: AbortController[],
): Promise<{ status: number; body?: unknown }> {
  const init = await rawHttp(url, {
    headers: { 'content-type': 'application/json', accept: ACCEPT },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: initializeParams(),
    }),
  });
  const session = init.headers['mcp-session-id'];
  expect(init.status).toBe(200);
  expect(typeof session).toBe('string');
  const headers = {
    accept: 'text/event-stream',
    'mcp-session-id': String(session),
    'mcp-protocol-version': LEGACY_VERSION,
  };
  await rawHttp(url, {
    headers: { ...headers, 'content-type': 'application/json', accept: ACCEPT },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  const abort = new AbortController();
  streams.push(abort);
  const response = await fetch(url, { method: 'GET', headers, signal: abort.signal });
  if (response.ok) {
    heldStreams.push(response);
    return { status: response.status };
  }
  return { status: response.status, body: await response.json() };
}

describe.each(setups)('reservoir serve --http $name', ({ start }) => {
  let server: HttpServerProcess;

  beforeAll(async () => {
    server = await start();
  });

  it('refuses a principal its 9th open subscriptions/listen stream (2026 era), naming the default cap of 8', async () => {
    const { client } = await connectHttp('2026', server.url, cleanup);
    const uri = `${dirUri(join(dir, 'docs'))}a.md`;
    const open: Awaited<ReturnType<Client['listen']>>[] = [];
    try {
      for (let i = 0; i < 8; i += 1)
        open.push(await client.listen({ resourceSubscriptions: [uri] }));
      const ninth = await settle(client.listen({ resourceSubscriptions: [uri] }));
      expect(ninth.ok).toBe(false);
      if (!ninth.ok) expectLimit(ninth.error, 'listen_streams', 8);
      // Closing one gives its slot back (once the server has seen the stream end).
      await open.shift()!.close();
      const deadline = Date.now() + 5_000;
      let again = await settle(client.listen({ resourceSubscriptions: [uri] }));
      while (!again.ok && Date.now() < deadline)
        again = await settle(client.listen({ resourceSubscriptions: [uri] }));
      expect(again.ok).toBe(true);
      if (again.ok) open.push(again.value);
    } finally {
      await Promise.allSettled(open.map((s) => s.close()));
    }
  });

  it('refuses a principal its 9th open 2025-era GET stream with 429 and -32013, naming the default cap of 8', async () => {
    const streams: AbortController[] = [];
    try {
      for (let i = 0; i < 8; i += 1)
        expect((await openGetStream(server.url, streams)).status).toBe(200);
      const ninth = await openGetStream(server.url, streams);
      expect(ninth.status).toBe(429);
      expect(ninth.body).toMatchObject({
        jsonrpc: '2.0',
        error: {
          code: -32013,
          data: { code: 'limit_exceeded', kind: 'listen_streams', limit: 8, active: 8 },
        },
      });
      expect(JSON.stringify(ninth.body)).toMatch(/at most 8 per principal/);
      // The SDK client of the same principal, whose own GET stream is refused, still connects and reads.
      const { client } = await connectHttp('2025', server.url, cleanup);
      expect(
        (await client.readResource({ uri: `${dirUri(join(dir, 'docs'))}a.md` })).contents[0],
      ).toMatchObject({ text: 'alpha\n' });
    } finally {
      for (const abort of streams) abort.abort();
      heldStreams.length = 0;
    }
  });
});

describe('reservoir serve --http with a config file that has no limits section: concurrent reads', () => {
  let server: HttpServerProcess;

  beforeAll(async () => {
    server = await setups[1].start();
  });

  it.each(ERAS)(
    'refuses the 17th concurrent read of one principal, naming the default cap of 16, and completes the others (%s era)',
    async (era) => {
      const { client } = await connectHttp(era, server.url, cleanup);
      const before = upstream.requests.length;
      const reads = Array.from({ length: 16 }, (_, i) =>
        client.readResource({ uri: `api://slow/items/${era}-${i}` }),
      );
      try {
        await waitFor(
          () => upstream.requests.length - before === 16,
          'sixteen reads held at the upstream',
          10_000,
        );
        const over = await settle(client.readResource({ uri: `api://slow/items/${era}-over` }));
        expect(over.ok).toBe(false);
        if (!over.ok) {
          expectLimit(over.error, 'concurrent_requests', 16);
          expect(String((over.error as Error).message)).toMatch(/at most 16 per principal/);
        }
        expect(upstream.requests.length - before).toBe(16);
      } finally {
        for (const release of held.splice(0)) release();
      }
      const done = await Promise.all(reads);
      expect(done.map((r) => r.contents[0]?.uri)).toEqual(
        Array.from({ length: 16 }, (_, i) => `api://slow/items/${era}-${i}`),
      );
    },
  );
});
