// Pins the stdio wire as a user's client meets it, on the real `reservoir serve` process: a request
// line over the 10 MiB limit is answered with an error naming the limit (and the connection stays
// up), a line that is not JSON is skipped without an answer, and a burst of requests written at
// once is answered in full, each response under its own id, in both eras.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { ERAS } from '../helpers/clients.js';
import { dirUri, fileUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { eraParams, RawStdio, type JsonRpcResponse } from '../helpers/wire.js';

const LIMIT = 10 * 1024 * 1024;
let root: string;

beforeAll(async () => {
  await ensureBuilt();
  root = makeTempDir();
  writeTree(root, { 'a.txt': 'alpha\n', 'b.txt': 'beta\n' });
});

afterAll(() => removeTree(root));

describe('stdio wire at protocol revision 2025-03-26', () => {
  it('answers a JSON-RPC batch with one array of answers in request order, invalid members answered inside it', async () => {
    const server = RawStdio.serve([root]);
    try {
      const init = await server.request('initialize', {
        protocolVersion: '2025-03-26',
        capabilities: {},
        clientInfo: { name: 'batch', version: '1' },
      });
      expect(init.result?.['protocolVersion']).toBe('2025-03-26');
      server.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      const answered = server.nextLine((m) => Array.isArray(m));
      server.send([
        {
          jsonrpc: '2.0',
          id: 'read',
          method: 'resources/read',
          params: { uri: fileUri(root, 'a.txt') },
        },
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'nothing' } },
        { jsonrpc: '1.0', id: 'bad', method: 'ping' },
        { jsonrpc: '2.0', id: 3, method: 'ping' },
        {
          jsonrpc: '2.0',
          id: 4,
          method: 'resources/read',
          params: { uri: fileUri(root, 'missing.txt') },
        },
      ]);
      const batch = (await answered) as JsonRpcResponse[];
      expect(batch.map((m) => m.id)).toEqual(['read', 'bad', 3, 4]);
      expect(batch[0]?.result?.['contents']).toEqual([
        { uri: fileUri(root, 'a.txt'), mimeType: 'text/plain', text: 'alpha\n' },
      ]);
      expect(batch[1]?.error).toEqual({
        code: -32600,
        message: 'Invalid Request: not a valid JSON-RPC 2.0 message',
      });
      expect(batch[2]).toEqual({ jsonrpc: '2.0', id: 3, result: {} });
      expect(batch[3]?.error?.code).toBe(-32002);
      const after = await server.request('ping');
      expect(after.result).toEqual({});
    } finally {
      await server.end();
    }
  });
});

describe.each(ERAS)('stdio wire, %s era', (era) => {
  let server: RawStdio;

  beforeAll(async () => {
    server = RawStdio.serve([root]);
    if (era === '2025') await server.initialize();
  });

  afterAll(async () => {
    await server.end();
  });

  it('answers an over-limit request line with -32600 naming its size and the limit, then keeps serving', async () => {
    const padding = 'x'.repeat(LIMIT);
    const line = JSON.stringify({
      jsonrpc: '2.0',
      id: 'huge',
      method: 'resources/read',
      params: eraParams(era, { uri: fileUri(root, 'a.txt'), padding }),
    });
    const answered = new Promise<JsonRpcResponse>((resolve) => {
      const poll = setInterval(() => {
        const found = server.lines
          .map((l) => JSON.parse(l) as JsonRpcResponse)
          .find((m) => m.id === 'huge');
        if (found !== undefined) {
          clearInterval(poll);
          resolve(found);
        }
      }, 20);
    });
    server.child.stdin.write(`${line}\n`);
    const response = await answered;
    const bytes = Buffer.byteLength(line);
    expect(response.error).toEqual({
      code: -32600,
      message: `Message of ${bytes} bytes exceeds the ${LIMIT}-byte limit of this stdio connection`,
      data: { bytes, limit: LIMIT },
    });
    const read = await server.request(
      'resources/read',
      eraParams(era, { uri: fileUri(root, 'a.txt') }),
    );
    expect(read.result?.['contents']).toEqual([
      { uri: fileUri(root, 'a.txt'), mimeType: 'text/plain', text: 'alpha\n' },
    ]);
  });

  it('answers an invalid envelope carrying a request id with -32600 under that id, then keeps serving', async () => {
    for (const bad of [
      {
        jsonrpc: '1.0',
        id: 'v1',
        method: 'resources/read',
        params: eraParams(era, { uri: fileUri(root, 'a.txt') }),
      },
      { jsonrpc: '2.0', id: 'extra', method: 'ping', params: eraParams(era), surplus: 1 },
      { jsonrpc: '2.0', id: 77, method: 'resources/read', params: 'not an object' },
    ]) {
      const answered = server.nextLine((m) => (m as JsonRpcResponse).id === bad.id);
      server.send(bad);
      expect(await answered).toEqual({
        jsonrpc: '2.0',
        id: bad.id,
        error: { code: -32600, message: 'Invalid Request: not a valid JSON-RPC 2.0 message' },
      });
    }
    const read = await server.request(
      'resources/read',
      eraParams(era, { uri: fileUri(root, 'b.txt') }),
    );
    expect(read.result?.['contents']).toEqual([
      { uri: fileUri(root, 'b.txt'), mimeType: 'text/plain', text: 'beta\n' },
    ]);
  });

  it('refuses a JSON-RPC batch with one -32600 error, as the HTTP endpoint does at this revision', async () => {
    const refused = server.nextLine((m) => Array.isArray(m) || (m as JsonRpcResponse).id === null);
    server.send([
      { jsonrpc: '2.0', id: 'b1', method: 'ping', params: eraParams(era) },
      { jsonrpc: '2.0', id: 'b2', method: 'ping', params: eraParams(era) },
    ]);
    const uses = era === '2025' ? '; this connection uses 2025-11-25' : '';
    expect(await refused).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32600,
        message: `Invalid Request: JSON-RPC batches are allowed only at protocol revision 2025-03-26${uses}; send one message per line`,
      },
    });
  });

  it('skips a line that is not JSON without answering it, and answers the next request', async () => {
    const before = server.lines.length;
    server.child.stdin.write('{"jsonrpc": "2.0", "id": 99, "method": \n');
    const read = await server.request(
      'resources/read',
      eraParams(era, { uri: fileUri(root, 'b.txt') }),
    );
    expect(read.result?.['contents']).toEqual([
      { uri: fileUri(root, 'b.txt'), mimeType: 'text/plain', text: 'beta\n' },
    ]);
    const since = server.lines.slice(before).map((l) => JSON.parse(l) as JsonRpcResponse);
    expect(since.some((m) => m.id === 99)).toBe(false);
  });

  it('answers a burst of 64 requests written at once, each under its own id', async () => {
    const uris = [
      fileUri(root, 'a.txt'),
      fileUri(root, 'b.txt'),
      dirUri(root),
      fileUri(root, 'missing.txt'),
    ];
    const responses = await Promise.all(
      Array.from({ length: 64 }, (_, i) =>
        server.request('resources/read', eraParams(era, { uri: uris[i % uris.length]! })),
      ),
    );
    responses.forEach((response, i) => {
      const uri = uris[i % uris.length]!;
      if (uri.endsWith('missing.txt')) {
        expect(response.error?.data).toEqual({ uri });
        return;
      }
      const contents = response.result?.['contents'] as Array<{ uri: string }>;
      expect(contents[0]?.uri).toBe(uri);
    });
  });
});
