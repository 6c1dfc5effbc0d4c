// Issue 3, live resources, 2025-era specifics: `resources/subscribe` to a URI that cannot be watched
// (missing, refused, excluded, outside every root) is answered -32002 with data exactly { uri } on
// the wire — the SDK client rewrites that code to -32602, so the wire is read directly — and starts
// no watcher; `resources/unsubscribe` stops the notifications (and the watch).
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { filesProvider, type FilesProvider } from '../../src/providers/files/index.js';
import { createReservoir } from '../../src/server/index.js';
import { ensureBuilt } from '../helpers/build.js';
import { Cleanup, connectTarget, spawnHttpServer } from '../helpers/clients.js';
import { fileUri, makeTempDir, overwrite, removeTree, writeTree } from '../helpers/tree.js';
import { LegacyHttpSession, RawStdio, type JsonRpcResponse } from '../helpers/wire.js';
import { Recorder, waitFor } from './harness.js';

const cleanup = new Cleanup();
let root: string;
let outside: string;
let httpUrl: string;

beforeAll(async () => {
  await ensureBuilt();
  root = makeTempDir('reservoir-sub-legacy-');
  outside = makeTempDir('reservoir-sub-outside-');
  cleanup.add(() => removeTree(root));
  cleanup.add(() => removeTree(outside));
  writeTree(root, {
    '.gitignore': 'secret.env\n',
    'secret.env': 'KEY=1\n',
    '.git/config': '[core]\n',
    'a.txt': 'a\n',
    'b.txt': 'b\n',
  });
  writeTree(outside, { 'other.txt': 'outside\n' });
  httpUrl = (await spawnHttpServer([root], [], cleanup)).url;
});

afterAll(() => cleanup.run());

/** URIs no subscription may be taken on, by why. */
function unwatchable(): Record<string, string> {
  return {
    missing: fileUri(root, 'missing.txt'),
    // Answered with the URI as sent, not its normalised spelling (as a read's not-found is).
    'missing, spelled with an escaped unreserved character': fileUri(root, 'missing.txt').replace(
      /missing/,
      '%6Dissing',
    ),
    'missing, spelled with dot segments': `${fileUri(root, 'sub')}/../missing.txt`,
    'outside the root': pathToFileURL(join(outside, 'other.txt')).href,
    'a system file': 'file:///etc/passwd',
    'excluded (.git/)': fileUri(root, '.git/config'),
    'excluded (.gitignore)': fileUri(root, 'secret.env'),
    'no source for the scheme': 'https://example.com/a.txt',
  };
}

function expectNotFound(response: JsonRpcResponse, uri: string, why: string): void {
  expect(response.result, why).toBeUndefined();
  expect(response.error?.code, why).toBe(-32002);
  expect(response.error?.data, why).toEqual({ uri });
}

describe('subscribing to what cannot be watched: -32002 with { uri } on the wire', () => {
  it('over stdio (spawned CLI)', async () => {
    const raw = RawStdio.serve([root]);
    cleanup.add(() => raw.kill());
    await raw.initialize();
    for (const [why, uri] of Object.entries(unwatchable()))
      expectNotFound(await raw.request('resources/subscribe', { uri }), uri, why);
    // The connection is still good: a watchable URI subscribes.
    expect(
      (await raw.request('resources/subscribe', { uri: fileUri(root, 'a.txt') })).result,
    ).toEqual({});
    await raw.end();
  });

  it('over a 2025 HTTP session (spawned CLI)', async () => {
    const session = await LegacyHttpSession.open(httpUrl);
    cleanup.add(() => session.close());
    for (const [why, uri] of Object.entries(unwatchable()))
      expectNotFound(await session.request('resources/subscribe', { uri }), uri, why);
    expect(
      (await session.request('resources/subscribe', { uri: fileUri(root, 'a.txt') })).result,
    ).toEqual({});
  });

  it('starts no watcher (in process, over stdio streams and HTTP)', async () => {
    const provider: FilesProvider = filesProvider({ root });
    const reservoir = createReservoir({ providers: [provider] });
    cleanup.add(() => reservoir.close());
    const endpoint = await reservoir.listen({ port: 0 });
    const session = await LegacyHttpSession.open(endpoint.url);
    for (const [why, uri] of Object.entries(unwatchable()))
      expectNotFound(await session.request('resources/subscribe', { uri }), uri, why);
    expect(reservoir.subscriptions.stats()).toMatchObject({ watches: 0, retains: 0 });
    expect(provider.watchStats()).toMatchObject({ paths: 0, dirWatchers: 0 });
    // A watchable URI does start one, and closing the session gives it back.
    expect(
      (await session.request('resources/subscribe', { uri: fileUri(root, 'a.txt') })).result,
    ).toEqual({});
    expect(reservoir.subscriptions.stats()).toMatchObject({ watches: 1, retains: 1 });
    expect(provider.watchStats()).toMatchObject({ paths: 1, dirWatchers: 1 });
    await session.close();
    await waitFor(
      () => reservoir.subscriptions.stats().watches === 0,
      'the session to release its watch',
    );
    await reservoir.close();
  });
});

describe.each(['stdio', 'http'] as const)('SDK client over %s', (transport) => {
  it('sees the not-found as an error carrying { uri } (the SDK normalises the code)', async () => {
    const client = await connectTarget(
      { transport, era: '2025' },
      { roots: [root], httpUrl },
      cleanup,
    );
    const uri = fileUri(root, 'missing.txt');
    await expect(client.subscribeResource({ uri })).rejects.toMatchObject({ data: { uri } });
  });

  it('unsubscribe stops the notifications; subscribing twice is one subscription', async () => {
    const client = await connectTarget(
      { transport, era: '2025' },
      { roots: [root], httpUrl },
      cleanup,
    );
    const recorder = new Recorder(client);
    const a = fileUri(root, 'a.txt');
    const b = fileUri(root, 'b.txt');
    await client.subscribeResource({ uri: a });
    await client.subscribeResource({ uri: a });
    await client.subscribeResource({ uri: b });
    // The root is shared with the other transport's run, whose last writes to a.txt may still be
    // settling: a first marker on b flushes them (they arrive before it), then the count starts.
    overwrite(join(root, 'b.txt'), `b, the flush ${transport}\n`);
    await waitFor(() => recorder.updates(b) >= 1, 'the flushing b.txt');
    recorder.clear();
    overwrite(join(root, 'a.txt'), `a before unsubscribe ${transport}\n`);
    await waitFor(() => recorder.updates(a) >= 1, 'a.txt');
    // A write to b (also subscribed) is the marker: a second a.txt update would arrive before it.
    overwrite(join(root, 'b.txt'), `b, the marker ${transport}\n`);
    await waitFor(() => recorder.updates(b) >= 1, 'the marker b.txt');
    expect(recorder.updatedUris()).toEqual([a, b]);

    await client.unsubscribeResource({ uri: a });
    recorder.clear();
    overwrite(join(root, 'a.txt'), `a after unsubscribe ${transport}\n`);
    overwrite(join(root, 'b.txt'), `b still subscribed ${transport}\n`);
    await waitFor(() => recorder.updates(b) >= 1, 'b.txt');
    expect(recorder.updatedUris()).toEqual([b]); // a was written first: its update would have come first

    // Unsubscribing what is not subscribed is harmless.
    await expect(client.unsubscribeResource({ uri: a })).resolves.toEqual({});
    await expect(client.unsubscribeResource({ uri: fileUri(root, 'never.txt') })).resolves.toEqual(
      {},
    );
  });
});
