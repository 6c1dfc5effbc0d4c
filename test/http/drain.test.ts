// The HTTP endpoint's drain, over a raw socket: a request taken before the drain is answered in
// full with `Connection: close`; a request sent during the drain on the same kept-alive connection
// is never served (the connection ends with that answer); new connections are refused; and the
// drain resolves 0 once the first is answered (or with the count left when its signal aborts).
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Provider } from '../../src/core/types.js';
import type { HttpEndpoint } from '../../src/http/app.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { Cleanup } from '../helpers/clients.js';
import { modernMeta } from '../helpers/wire.js';
import { eventually } from '../helpers/eventually.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

/** A provider whose reads wait until the test releases them; `started` counts reads begun. */
function heldProvider(): Provider & { started: number; release(): void } {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const provider = {
    name: 'held',
    root: 'held://x/',
    started: 0,
    release: () => release(),
    async list() {
      return { items: [{ uri: 'held://x/a', name: 'a' }] };
    },
    async read(uri: string) {
      provider.started += 1;
      await gate;
      return { contents: [{ uri, mimeType: 'text/plain', text: 'held answer' }] };
    },
  };
  return provider;
}

function readRequest(id: number, host: string): string {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'resources/read',
    params: { uri: 'held://x/a', _meta: modernMeta() },
  });
  return [
    'POST /mcp HTTP/1.1',
    `Host: ${host}`,
    'Content-Type: application/json',
    'Accept: application/json, text/event-stream',
    'MCP-Protocol-Version: 2026-07-28',
    'Mcp-Method: resources/read',
    'Mcp-Name: held://x/a',
    `Content-Length: ${Buffer.byteLength(body)}`,
    '',
    body,
  ].join('\r\n');
}

async function serve(): Promise<{
  reservoir: Reservoir;
  endpoint: HttpEndpoint;
  provider: ReturnType<typeof heldProvider>;
  host: string;
  port: number;
}> {
  const provider = heldProvider();
  const reservoir = createReservoir({ providers: [provider] });
  cleanup.add(() => reservoir.close());
  cleanup.add(() => provider.release());
  const endpoint = await reservoir.listen({ port: 0 });
  const { host, port } = new URL(endpoint.url);
  return { reservoir, endpoint, provider, host, port: Number(port) };
}

async function waitUntil(check: () => boolean, what: string): Promise<void> {
  await eventually(check, what);
}

function rawSocket(port: number): { socket: Socket; text: () => string; ended: Promise<unknown> } {
  const socket = connect(port, '127.0.0.1');
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  socket.on('error', () => undefined);
  cleanup.add(() => socket.destroy());
  return { socket, text: () => text, ended: once(socket, 'close') };
}

describe('HttpEndpoint.drain', () => {
  it('answers the request it took with Connection: close, and never serves one sent on its connection during the drain', async () => {
    const { endpoint, provider, host, port } = await serve();
    const raw = rawSocket(port);
    await once(raw.socket, 'connect');
    raw.socket.write(readRequest(1, host));
    await waitUntil(() => provider.started === 1, 'the first read to start');

    const drained = endpoint.drain();
    // A second request on the same kept-alive connection (busy, so not closed as idle) during the drain.
    raw.socket.write(readRequest(2, host));
    const fresh = await fetch(`http://127.0.0.1:${port}/healthz`)
      .then((r) => r.status)
      .catch((error: unknown) => error);
    // The listener is closed: a new connection is refused.
    expect(fresh).toBeInstanceOf(TypeError);

    provider.release();
    expect(await drained).toBe(0);
    await raw.ended;
    const [first, second] = raw.text().split(/(?=HTTP\/1\.1 )/);
    expect(first).toMatch(/^HTTP\/1\.1 200 /);
    expect(first).toMatch(/\r\nconnection: close\r\n/i);
    expect(first).toContain('held answer');
    // The connection ends with the answer it announced as its last: the second request is never
    // served (a client sends it again on a new connection, to another instance).
    expect(second).toBeUndefined();
    expect(provider.started).toBe(1);
  });

  it('resolves with the number left unanswered when its signal aborts first', async () => {
    const { endpoint, provider, host, port } = await serve();
    const raw = rawSocket(port);
    await once(raw.socket, 'connect');
    raw.socket.write(readRequest(1, host));
    await waitUntil(() => provider.started === 1, 'the read to start');
    const grace = new AbortController();
    const drained = endpoint.drain(grace.signal);
    grace.abort();
    expect(await drained).toBe(1);
  });
});
