// ListenFanout over real sockets: each stream gets the SDK's resources/updated frame with its own
// subscription id, a removed stream gets nothing more, and a client that stops reading is cut off
// once the cap of unread bytes is reached instead of being buffered for without bound.
import {
  createServer,
  get,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ListenFanout } from '../../../src/mcp/direct/listen-fanout.js';
import { eventually } from '../../helpers/eventually.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

/** A server whose every response is an open SSE stream handed to `onStream`, and a connect function. */
async function sseServer(
  onStream: (res: ServerResponse) => void,
): Promise<() => Promise<IncomingMessage>> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.flushHeaders();
    onStream(res);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return () =>
    new Promise((resolve, reject) =>
      get({ host: '127.0.0.1', port, path: '/', agent: false }, resolve).on('error', reject),
    );
}

describe('ListenFanout', () => {
  it("writes each stream the SDK's updated notification stamped with its own subscription id, and nothing after removal", async () => {
    const fanout = new ListenFanout();
    const outs: ServerResponse[] = [];
    const connect = await sseServer((res) => outs.push(res));
    const one = await connect();
    const two = await connect();
    await eventually(() => outs.length === 2, 'both SSE responses on the server side');
    const removeOne = fanout.add(['mem://a', 'mem://b'], 1, outs[0]!);
    fanout.add(['mem://a'], 'x"y', outs[1]!);
    const read = (res: IncomingMessage): { text: string } => {
      const got = { text: '' };
      res.setEncoding('utf8').on('data', (chunk: string) => (got.text += chunk));
      return got;
    };
    const [gotOne, gotTwo] = [read(one), read(two)];
    fanout.updated('mem://a');
    fanout.updated('mem://other');
    removeOne();
    fanout.updated('mem://b');
    fanout.updated('mem://a');
    await eventually(
      () => gotTwo.text.split('\n\n').length >= 3,
      'two frames on the second stream',
    );
    const frame = (id: unknown): string =>
      `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'mem://a', _meta: { 'io.modelcontextprotocol/subscriptionId': id } } })}\n\n`;
    expect(gotOne.text).toBe(frame(1));
    expect(gotTwo.text).toBe(frame('x"y') + frame('x"y'));
    expect(fanout.count('mem://b')).toBe(0);
    expect(fanout.written).toBe(3);
  });

  it('cuts off a client that stops reading once the unread bytes pass the cap', async () => {
    const fanout = new ListenFanout(64 * 1024);
    let served: ServerResponse | undefined;
    const connect = await sseServer((res) => (served = res));
    const client = await connect();
    client.pause();
    const out = await eventually(() => served, 'the SSE response on the server side');
    fanout.add(['mem://a'], 1, out);
    let sent = 0;
    // The kernel's socket buffers fill first; then Node's buffer grows to the cap.
    while (!out.destroyed && sent < 1_000_000) {
      fanout.updated('mem://a');
      sent += 1;
      if (sent % 1_000 === 0) await new Promise((resolve) => setImmediate(resolve)); // let the socket drain what it can
    }
    expect(out.destroyed).toBe(true);
    const written = fanout.written;
    fanout.updated('mem://a');
    expect(fanout.written, 'nothing more is written to a closed stream').toBe(written);
  });
});
