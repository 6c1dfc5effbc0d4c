// A plain resources/read on a 2025-era stdio connection is answered through the direct read, not
// the SDK's dispatch (mcp/direct/stdio.ts). Over the CLI's real pipes, at every 2025-era revision,
// its answer line must be byte for byte the line the SDK writes for the same read — a read with an
// empty `_meta` is not plain, so the SDK answers it and gives the reference — for text, binary, a
// missing file, a path outside the root, a malformed URI and a directory. The real SDK client's
// reads go through it too.
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cleanup, connectStdio } from '../helpers/clients.js';
import { fileUri, makeTempDir, removeTree } from '../helpers/tree.js';
import { RawStdio } from '../helpers/wire.js';

const REVISIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'];
const cleanup = new Cleanup();
let root: string;

beforeAll(() => {
  root = makeTempDir();
  cleanup.add(() => removeTree(root));
  writeFileSync(join(root, 'note.txt'), 'hello\n');
  writeFileSync(join(root, 'ünïcode name.md'), '# wide ✓\n');
  writeFileSync(join(root, 'bytes.bin'), Buffer.from([0, 1, 2, 0xff, 0xfe]));
  mkdirSync(join(root, 'sub'));
  writeFileSync(join(root, 'sub', 'inner.txt'), 'inner\n');
});

afterAll(() => cleanup.run());

describe.each(REVISIONS)('stdio at %s: a plain read answered directly', (revision) => {
  it('writes the same line as the SDK for text, binary, missing, outside-root, malformed and directory URIs', async () => {
    const server = RawStdio.serve([root]);
    cleanup.add(() => server.kill());
    await server.initializeAt(revision);
    const uris = [
      fileUri(root, 'note.txt'),
      fileUri(root, 'ünïcode name.md'),
      fileUri(root, 'bytes.bin'),
      fileUri(root, 'missing.txt'),
      'file:///etc/passwd',
      `${fileUri(root, 'sub')}/../../outside.txt`,
      'not a uri',
      'file:///%00',
      fileUri(root, 'sub'),
    ];
    for (const [i, uri] of uris.entries()) {
      const direct = await server.requestLine('resources/read', `r${i}`, { uri });
      const sdk = await server.requestLine('resources/read', `r${i}`, { uri, _meta: {} });
      expect(direct, uri).toBe(sdk);
    }
    const text = JSON.parse(
      await server.requestLine('resources/read', 'text', { uri: fileUri(root, 'note.txt') }),
    ) as {
      result: unknown;
    };
    expect(text.result).toEqual({
      contents: [{ uri: fileUri(root, 'note.txt'), mimeType: 'text/plain', text: 'hello\n' }],
    });
    const missing = JSON.parse(
      await server.requestLine('resources/read', 'missing', { uri: fileUri(root, 'missing.txt') }),
    ) as { error: { code: number } };
    expect(missing.error.code).toBe(-32002);
    await server.end();
  });
});

describe('the real SDK client over stdio (2025 era)', () => {
  it('reads many files at once, each with its own content', async () => {
    for (let i = 0; i < 40; i += 1) writeFileSync(join(root, `many-${i}.txt`), `file ${i}\n`);
    const { client } = await connectStdio('2025', [root], [], cleanup);
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        client.readResource({ uri: fileUri(root, `many-${i}.txt`) }),
      ),
    );
    expect(results.map((r) => (r.contents[0] as { text: string }).text)).toEqual(
      Array.from({ length: 40 }, (_, i) => `file ${i}\n`),
    );
    await expect(client.readResource({ uri: fileUri(root, 'nope.txt') })).rejects.toThrow(
      /not found/i,
    );
  });

  it("cancels a read through the SDK client's signal without breaking the connection", async () => {
    const { client } = await connectStdio('2025', [root], [], cleanup);
    const controller = new AbortController();
    const pending = client.readResource(
      { uri: fileUri(root, 'note.txt') },
      { signal: controller.signal },
    );
    controller.abort('changed my mind');
    await expect(pending).rejects.toThrow();
    const after = await client.readResource({ uri: fileUri(root, 'note.txt') });
    expect(after.contents).toEqual([
      { uri: fileUri(root, 'note.txt'), mimeType: 'text/plain', text: 'hello\n' },
    ]);
  });
});
