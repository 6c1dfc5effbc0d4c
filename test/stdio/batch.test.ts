// JSON-RPC batches on the stdio wire: allowed once the connection negotiated 2025-03-26 (read from
// the server's answer to initialize), answered as one array in the order of the batch's requests,
// invalid elements answered inside it; refused with one -32600 error at any other revision.
import { PassThrough } from 'node:stream';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { StdioWire } from '../../src/stdio/wire.js';

async function negotiated(revision: string): Promise<{
  wire: StdioWire;
  stdin: PassThrough;
  inbound: JSONRPCMessage[];
  lines: () => unknown[];
}> {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  let text = '';
  stdout.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const wire = new StdioWire(stdin, stdout);
  const inbound: JSONRPCMessage[] = [];
  wire.onmessage = (message) => inbound.push(message);
  wire.onerror = () => undefined;
  await wire.start();
  stdin.write(
    `${JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: revision, capabilities: {}, clientInfo: { name: 't', version: '1' } } })}\n`,
  );
  await turns();
  await wire.send({
    jsonrpc: '2.0',
    id: 0,
    result: {
      protocolVersion: revision,
      capabilities: {},
      serverInfo: { name: 's', version: '1' },
    },
  });
  inbound.length = 0;
  text = '';
  return {
    wire,
    stdin,
    inbound,
    lines: () =>
      text
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as unknown),
  };
}

const turns = async (n = 4): Promise<void> => {
  for (let i = 0; i < n; i += 1) await new Promise((resolve) => setImmediate(resolve));
};
const ping = (id: number | string): JSONRPCMessage => ({ jsonrpc: '2.0', id, method: 'ping' });

describe('stdio batches', () => {
  it('delivers each message of a batch at 2025-03-26 and writes the answers as one array in request order', async () => {
    const h = await negotiated('2025-03-26');
    h.stdin.write(
      `${JSON.stringify([ping(1), { jsonrpc: '2.0', method: 'notifications/x' }, ping('two')])}\n`,
    );
    await turns();
    expect(h.inbound).toEqual([
      ping(1),
      { jsonrpc: '2.0', method: 'notifications/x' },
      ping('two'),
    ]);
    // Answered out of order: held until both are in, then written in the batch's order.
    await h.wire.send({ jsonrpc: '2.0', id: 'two', result: {} });
    await turns();
    expect(h.lines()).toEqual([]);
    await h.wire.send({ jsonrpc: '2.0', id: 1, result: {} });
    expect(h.lines()).toEqual([
      [
        { jsonrpc: '2.0', id: 1, result: {} },
        { jsonrpc: '2.0', id: 'two', result: {} },
      ],
    ]);
  });

  it('answers invalid elements, an initialize and a duplicate id inside the batch with -32600', async () => {
    const h = await negotiated('2025-03-26');
    const init = {
      jsonrpc: '2.0',
      id: 'i',
      method: 'initialize',
      params: {
        protocolVersion: '2025-03-26',
        capabilities: {},
        clientInfo: { name: 't', version: '1' },
      },
    };
    h.stdin.write(
      `${JSON.stringify([{ jsonrpc: '1.0', id: 'bad', method: 'x' }, ping(5), init, ping(5), 42])}\n`,
    );
    await turns();
    expect(h.inbound).toEqual([ping(5)]);
    await h.wire.send({ jsonrpc: '2.0', id: 5, result: {} });
    expect(h.lines()).toEqual([
      [
        {
          jsonrpc: '2.0',
          id: 'bad',
          error: { code: -32600, message: 'Invalid Request: not a valid JSON-RPC 2.0 message' },
        },
        { jsonrpc: '2.0', id: 5, result: {} },
        {
          jsonrpc: '2.0',
          id: 'i',
          error: {
            code: -32600,
            message: 'Invalid Request: initialize must not be part of a JSON-RPC batch',
          },
        },
        {
          jsonrpc: '2.0',
          id: 5,
          error: {
            code: -32600,
            message: 'Invalid Request: a request with this id is already in progress',
          },
        },
      ],
    ]);
  });

  it('writes nothing for a batch of notifications only, and refuses an empty batch and one over 100 messages', async () => {
    const h = await negotiated('2025-03-26');
    h.stdin.write(
      `${JSON.stringify([{ jsonrpc: '2.0', method: 'notifications/x' }])}\n[]\n${JSON.stringify(Array.from({ length: 101 }, (_, i) => ping(i + 100)))}\n`,
    );
    await turns();
    expect(h.inbound).toEqual([{ jsonrpc: '2.0', method: 'notifications/x' }]);
    expect(h.lines()).toEqual([
      {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: 'Invalid Request: an empty JSON-RPC batch' },
      },
      {
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32600,
          message: 'Invalid Request: a JSON-RPC batch must not exceed 100 messages',
        },
      },
    ]);
  });

  it.each(['2025-06-18', '2025-11-25', '2024-11-05'])(
    'refuses a batch at %s with one -32600 error naming the revision',
    async (revision) => {
      const h = await negotiated(revision);
      h.stdin.write(`${JSON.stringify([ping(1)])}\n`);
      await turns();
      expect(h.inbound).toEqual([]);
      expect(h.lines()).toEqual([
        {
          jsonrpc: '2.0',
          id: null,
          error: {
            code: -32600,
            message: `Invalid Request: JSON-RPC batches are allowed only at protocol revision 2025-03-26; this connection uses ${revision}; send one message per line`,
          },
        },
      ]);
    },
  );
});
