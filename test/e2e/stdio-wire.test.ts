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
    const line = JSON.stringify({ jsonrpc: '2.0', id: 'huge', method: 'resources/read', params: eraParams(era, { uri: fileUri(root, 'a.txt'), padding }) });
    const answered = new Promise<JsonRpcResponse>((resolve) => {
      const poll = setInterval(() => {
        const found = server.lines.map((l) => JSON.parse(l) as JsonRpcResponse).find((m) => m.id === 'huge');
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
    const read = await server.request('resources/read', eraParams(era, { uri: fileUri(root, 'a.txt') }));
    expect(read.result?.['contents']).toEqual([{ uri: fileUri(root, 'a.txt'), mimeType: 'text/plain', text: 'alpha\n' }]);
  });

  it('skips a line that is not JSON without answering it, and answers the next request', async () => {
    const before = server.lines.length;
    server.child.stdin.write('{"jsonrpc": "2.0", "id": 99, "method": \n');
    const read = await server.request('resources/read', eraParams(era, { uri: fileUri(root, 'b.txt') }));
    expect(read.result?.['contents']).toEqual([{ uri: fileUri(root, 'b.txt'), mimeType: 'text/plain', text: 'beta\n' }]);
    const since = server.lines.slice(before).map((l) => JSON.parse(l) as JsonRpcResponse);
    expect(since.some((m) => m.id === 99)).toBe(false);
  });

  it('answers a burst of 64 requests written at once, each under its own id', async () => {
    const uris = [fileUri(root, 'a.txt'), fileUri(root, 'b.txt'), dirUri(root), fileUri(root, 'missing.txt')];
    const responses = await Promise.all(Array.from({ length: 64 }, (_, i) => server.request('resources/read', eraParams(era, { uri: uris[i % uris.length]! }))));
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
