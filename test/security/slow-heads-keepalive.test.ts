// Issue 24, item 11: a request head that trickles in is closed at the head timeout on every request
// of a connection, not only the first: after one whole request and its answer on a kept-alive
// socket, a second head dribbled a byte at a time (or started and then left hanging) is cut off too.
// Raw sockets against the library endpoint with a 1 s head timeout; the close is waited on as an
// event, with a generous cap.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { filesProvider } from '../../src/providers/files/index.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';

let root: string;
let reservoir: Reservoir;
let url: URL;

beforeAll(async () => {
  root = makeTempDir('reservoir-slow-heads-');
  writeTree(root, { 'a.md': 'alpha\n' });
  reservoir = createReservoir({ providers: [filesProvider({ root })] });
  const endpoint = await reservoir.listen({
    host: '127.0.0.1',
    port: 0,
    timeouts: { headersMs: 1_000, requestMs: 3_000 },
  });
  url = new URL(endpoint.url);
});

afterAll(async () => {
  await reservoir?.close();
  removeTree(root);
});

/**
 * On one socket: a whole GET /healthz (answered, connection kept alive), then the start of a second
 * head, dribbled every `everyMs` (or never continued when undefined). Resolves with what the server
 * sent once it closes the socket; rejects if it is still open after `capMs`.
 */
function secondHeadTrickles(everyMs: number | undefined, capMs = 10_000): Promise<string> {
  const socket: Socket = connect(Number(url.port), url.hostname);
  let received = '';
  let drip: NodeJS.Timeout | undefined;
  let second = false;
  socket.on('error', () => undefined);
  return new Promise((resolve, reject) => {
    const cap = setTimeout(() => {
      clearInterval(drip);
      socket.destroy();
      reject(
        new Error(`socket still open after ${capMs} ms; received: ${JSON.stringify(received)}`),
      );
    }, capMs);
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      // The first answer is whole (headers and its chunked JSON body, ended): start the second head.
      if (!second && /\r\n0\r\n\r\n$/.test(received)) {
        second = true;
        socket.write(`POST /mcp HTTP/1.1\r\nHost: ${url.host}\r\nx-slow: `);
        if (everyMs !== undefined) drip = setInterval(() => socket.write('a'), everyMs);
      }
    });
    socket.once('connect', () =>
      socket.write(`GET /healthz HTTP/1.1\r\nHost: ${url.host}\r\nConnection: keep-alive\r\n\r\n`),
    );
    socket.once('close', () => {
      clearTimeout(cap);
      clearInterval(drip);
      resolve(received);
    });
  });
}

describe('slow request heads on a kept-alive connection', () => {
  it('closes the socket when the second request head dribbles a byte at a time', async () => {
    const received = await secondHeadTrickles(50);
    expect(received).toMatch(/^HTTP\/1\.1 200/);
    expect(received.split('HTTP/1.1 ').length).toBeLessThanOrEqual(3); // the answer, and at most a 408
  });

  it('closes the socket when the second request head starts and then stops', async () => {
    const received = await secondHeadTrickles(undefined);
    expect(received).toMatch(/^HTTP\/1\.1 200/);
  });
});
