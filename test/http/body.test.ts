// A POST body read once over a real socket: JSON in several chunks parsed whole, a body past the
// cap a 413 result as soon as it passes (the rest dropped, the answer still reaching the client),
// a body that is not JSON a 400 result, and a client that goes away mid-body a rejection — never a
// promise left waiting with its listeners on the request, even when it went before the read began.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJsonBody, type BodyResult } from '../../src/http/body.js';

const CAP = 1024;
let server: Server;
let port: number;
/** What readJsonBody gave for each request, in arrival order. */
let heads = 0;
let outcomes: Array<Promise<{ result?: BodyResult; error?: Error; listeners: number }>> = [];

const listenersOn = (req: IncomingMessage): number =>
  ['data', 'end', 'error', 'close'].reduce((sum, event) => sum + req.listenerCount(event), 0);

beforeAll(async () => {
  server = createServer(async (req, res) => {
    heads += 1;
    // `/late` starts reading only once the client has gone, as after a slow authentication.
    if (req.url === '/late') await new Promise((resolve) => req.once('close', resolve));
    const before = listenersOn(req);
    const read = readJsonBody(req, CAP);
    outcomes.push(
      read.then(
        (result) => {
          res.writeHead(result.ok ? 200 : result.status, { connection: 'close' });
          res.end(JSON.stringify(result));
          return { result, listeners: listenersOn(req) - before };
        },
        (error: Error) => ({ error, listeners: listenersOn(req) - before }),
      ),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** Sends `head` and then each of `parts` on a raw socket; resolves with everything the server wrote back. */
function exchange(head: string, parts: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('utf8')));
    socket.on('close', () => resolve(answer));
    socket.on('error', (error: NodeJS.ErrnoException) =>
      error.code === 'ECONNRESET' || error.code === 'EPIPE' ? resolve(answer) : reject(error),
    );
    socket.write(head);
    for (const part of parts) socket.write(part);
  });
}

const chunked = (parts: string[]): string[] => [
  ...parts.map((part) => `${Buffer.byteLength(part).toString(16)}\r\n${part}\r\n`),
  '0\r\n\r\n',
];
const HEAD =
  'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n';

describe('readJsonBody', () => {
  it('parses a body that arrives in several chunks as one JSON value', async () => {
    outcomes = [];
    const answer = await exchange(
      HEAD,
      chunked(['{"jsonrpc":"2.0",', '"id":7,"method":"ping",', '"params":{"note":"é"}}']),
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    const { result, listeners } = await outcomes[0]!;
    expect(result).toEqual({
      ok: true,
      value: { jsonrpc: '2.0', id: 7, method: 'ping', params: { note: 'é' } },
    });
    expect(listeners).toBe(0);
  });

  it('gives 413 once the body passes the cap, drops the rest, and the answer still reaches the client', async () => {
    outcomes = [];
    const answer = await exchange(
      HEAD,
      chunked(['{"padding":"', 'x'.repeat(CAP), 'x'.repeat(CAP * 64), '"}']),
    );
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toContain(`Request body too large (limit ${CAP} bytes)`);
    const { result, listeners } = await outcomes[0]!;
    expect(result).toMatchObject({ ok: false, status: 413, code: -32600 });
    expect(listeners).toBe(0);
  });

  it('reads a body of exactly the cap', async () => {
    outcomes = [];
    const body = `"${'y'.repeat(CAP - 2)}"`;
    await exchange(HEAD, chunked([body]));
    expect((await outcomes[0]!).result).toEqual({ ok: true, value: 'y'.repeat(CAP - 2) });
  });

  it('gives 400 -32700 for a body that is not JSON', async () => {
    outcomes = [];
    const answer = await exchange(HEAD, chunked(['{"jsonrpc": "2.0", "id": ']));
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect((await outcomes[0]!).result).toEqual({
      ok: false,
      status: 400,
      code: -32700,
      message: 'Parse error: the request body is not valid JSON',
    });
  });

  it('rejects, and leaves no listener behind, when the client goes away mid-body', async () => {
    outcomes = [];
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write(`${HEAD}10\r\n{"jsonrpc":`);
    await expect.poll(() => outcomes.length).toBe(1); // the server has the head and is reading the body
    socket.destroy();
    const { result, error, listeners } = await outcomes[0]!;
    expect(result).toBeUndefined();
    expect(error?.message).toMatch(/closed before its body ended|aborted/);
    expect(listeners).toBe(0);
  });

  it('rejects at once when the client went away before the read began', async () => {
    outcomes = [];
    const seen = heads;
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write(`${HEAD.replace('POST /mcp', 'POST /late')}10\r\n{"jsonrpc":`);
    await expect.poll(() => heads).toBe(seen + 1); // the server has the head
    socket.destroy();
    await expect.poll(() => outcomes.length).toBe(1);
    const { result, error, listeners } = await outcomes[0]!;
    expect(result).toBeUndefined();
    expect(error?.message).toBe('the request closed before its body ended');
    expect(listeners).toBe(0);
  });
});
