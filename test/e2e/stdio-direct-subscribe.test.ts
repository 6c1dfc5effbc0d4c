// A plain resources/subscribe or resources/unsubscribe on a 2025-era stdio connection is answered
// without the SDK's dispatch (mcp/direct/stdio.ts, mcp/direct/subscribe.ts). Over the CLI's real
// pipes, at every 2025-era revision, its answer line must be byte for byte the line the SDK writes
// for the same request — one with an empty `_meta` is not plain, so the SDK answers it and gives the
// reference — for a file, a directory, a missing file, paths outside the root, an excluded file, a
// secret, a link out of the root, a malformed URI and a URI no source serves; and what it subscribes
// notifies, until it unsubscribes. (The SDK client's subscribe, errors and notifications over the
// same path: test/subscriptions/legacy-2025.test.ts.)
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { Cleanup } from '../helpers/clients.js';
import { fileUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { RawStdio } from '../helpers/wire.js';

const REVISIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'];
const cleanup = new Cleanup();
let root: string;
let outside: string;

beforeAll(async () => {
  await ensureBuilt();
  root = makeTempDir('reservoir-direct-sub-');
  outside = makeTempDir('reservoir-direct-sub-outside-');
  cleanup.add(() => removeTree(root));
  cleanup.add(() => removeTree(outside));
  writeTree(root, {
    '.gitignore': 'ignored.txt\n',
    'ignored.txt': 'ignored\n',
    '.env': 'KEY=1\n',
    'note.txt': 'hello\n',
    'marker.txt': 'marker\n',
    'sub/inner.txt': 'inner\n',
  });
  writeTree(outside, { 'other.txt': 'outside\n' });
  symlinkSync(join(outside, 'other.txt'), join(root, 'link-out.txt'));
  mkdirSync(join(root, 'empty'));
});

afterAll(() => cleanup.run());

async function open(revision: string): Promise<RawStdio> {
  const server = RawStdio.serve([root]);
  cleanup.add(() => server.kill());
  await server.initializeAt(revision);
  return server;
}

describe.each(REVISIONS)('stdio at %s: a plain subscribe answered directly', (revision) => {
  it('writes the same line as the SDK for every kind of URI, subscribing and unsubscribing', async () => {
    const server = await open(revision);
    const uris = [
      fileUri(root, 'note.txt'),
      fileUri(root, 'sub'),
      `${fileUri(root, 'sub')}/`,
      fileUri(root, 'missing.txt'),
      fileUri(root, 'missing.txt').replace(/missing/, '%6Dissing'),
      `${fileUri(root, 'sub')}/../../outside.txt`,
      fileUri(outside, 'other.txt'),
      'file:///etc/passwd',
      fileUri(root, 'ignored.txt'),
      fileUri(root, '.env'),
      fileUri(root, 'link-out.txt'),
      'not a uri',
      'file:///%00',
      'https://example.com/a.txt',
    ];
    for (const method of ['resources/subscribe', 'resources/unsubscribe', 'resources/unsubscribe'])
      for (const [i, uri] of uris.entries()) {
        const id = `${method}-${i}`;
        const direct = await server.requestLine(method, id, { uri });
        const sdk = await server.requestLine(method, id, { uri, _meta: {} });
        expect(direct, `${method} ${uri}`).toBe(sdk);
      }
    const missing = JSON.parse(
      await server.requestLine('resources/subscribe', 'missing', {
        uri: fileUri(root, 'missing.txt'),
      }),
    ) as { error: { code: number; data: unknown } };
    expect(missing.error).toMatchObject({
      code: -32002,
      data: { uri: fileUri(root, 'missing.txt') },
    });
    await server.end();
  });
});

describe('what a direct subscribe subscribes', () => {
  it('notifies each write until a direct unsubscribe ends it', async () => {
    const server = await open('2025-11-25');
    const note = fileUri(root, 'note.txt');
    const marker = fileUri(root, 'marker.txt');
    const updates = (uri: string): number =>
      server.lines.filter((line) => {
        const m = JSON.parse(line) as { method?: string; params?: { uri?: string } };
        return m.method === 'notifications/resources/updated' && m.params?.uri === uri;
      }).length;
    const updated = (uri: string): Promise<unknown> =>
      server.nextLine((parsed) => {
        const m = parsed as { method?: string; params?: { uri?: string } };
        return m.method === 'notifications/resources/updated' && m.params?.uri === uri;
      });
    expect(await server.requestLine('resources/subscribe', 's1', { uri: note })).toBe(
      '{"result":{},"jsonrpc":"2.0","id":"s1"}',
    );
    await server.requestLine('resources/subscribe', 's2', { uri: marker });
    const first = updated(note);
    writeFileSync(join(root, 'note.txt'), 'changed once\n');
    await first;
    await server.requestLine('resources/unsubscribe', 'u1', { uri: note });
    const notesBefore = updates(note);
    // The marker is written after the note: an update of the note would arrive before the marker's.
    const markerUpdate = updated(marker);
    writeFileSync(join(root, 'note.txt'), 'changed after unsubscribe\n');
    writeFileSync(join(root, 'marker.txt'), 'marker changed\n');
    await markerUpdate;
    expect(updates(note)).toBe(notesBefore);
    await server.end();
  });
});
