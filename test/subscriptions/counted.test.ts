// Issue 3, live resources: counted watches, in process with the library. The first subscriber of
// a URI starts the provider's watch and the last to leave stops it; both protocol eras share one
// count; and after a thousand subscribe/unsubscribe cycles and a hundred abandoned connections
// (HTTP listen streams whose socket is destroyed, 2025 sessions closed or left to idle out, stdio
// streams ended without a goodbye) nothing remains. Proven through the counters — the hub's
// `subscriptions.stats()` and the files provider's `watchStats()` — polled with bounded waits.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SubscriptionStats } from '../../src/core/subscriptions.js';
import { filesProvider, type FilesProvider } from '../../src/providers/files/index.js';
import type { HttpEndpoint } from '../../src/http/app.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { Cleanup, connectHttp } from '../helpers/clients.js';
import { fileUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { LegacyHttpSession } from '../helpers/wire.js';
import { connectInProcess, RawHttpListen, Recorder, waitFor } from './harness.js';

const FILES = ['a.txt', 'b.txt', 'c.txt', 'd/e.txt', 'd/f.txt'];

let root: string;
const cleanup = new Cleanup();

beforeAll(() => {
  root = makeTempDir('reservoir-sub-counted-');
  writeTree(root, Object.fromEntries(FILES.map((f) => [f, `${f}\n`])));
});

afterAll(() => removeTree(root));

afterEach(() => cleanup.run());

interface Server {
  reservoir: Reservoir;
  provider: FilesProvider;
  endpoint: HttpEndpoint;
}

async function startServer(options: { sessionIdleMs?: number } = {}): Promise<Server> {
  const provider = filesProvider({ root });
  const reservoir = createReservoir({ providers: [provider] });
  cleanup.add(() => reservoir.close());
  const endpoint = await reservoir.listen({ port: 0, ...options });
  return { reservoir, provider, endpoint };
}

const IDLE: Omit<SubscriptionStats, 'channels'> = {
  watches: 0,
  retains: 0,
  listListeners: 0,
  listWatchers: 0,
};
const NO_WATCHES = { paths: 0, dirWatchers: 0, tree: false };

/** Waits (bounded) until the hub and the provider hold nothing; the open HTTP endpoint keeps its one bus channel. */
async function expectNothingHeld(server: Server, timeoutMs = 10_000): Promise<void> {
  const { reservoir, provider } = server;
  const clean = (): boolean => {
    const stats = reservoir.subscriptions.stats();
    const watch = provider.watchStats();
    return (
      stats.watches === 0 &&
      stats.retains === 0 &&
      stats.listListeners === 0 &&
      stats.listWatchers === 0 &&
      stats.channels === 1 &&
      watch.paths === 0 &&
      watch.dirWatchers === 0 &&
      !watch.tree
    );
  };
  await waitFor(
    clean,
    () =>
      `nothing held: stats ${JSON.stringify(reservoir.subscriptions.stats())}, watchStats ${JSON.stringify(provider.watchStats())}`,
    timeoutMs,
  );
  expect(reservoir.subscriptions.stats()).toEqual({ ...IDLE, channels: 1 });
  expect(provider.watchStats()).toMatchObject(NO_WATCHES);
}

/** A full garbage collection, on demand. */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

describe('counted watches', () => {
  it('the first subscriber of a URI starts the provider watch; the last to leave stops it', async () => {
    const server = await startServer();
    const { reservoir, provider } = server;
    const stats = (): SubscriptionStats => reservoir.subscriptions.stats();
    expect(stats()).toEqual({ ...IDLE, channels: 1 });
    expect(provider.watchStats()).toMatchObject(NO_WATCHES);

    const one = await connectInProcess(reservoir, '2025');
    const two = await connectHttp('2025', server.endpoint.url, cleanup);
    cleanup.add(() => one.close());
    const a = fileUri(root, 'a.txt');

    await one.client.subscribeResource({ uri: a });
    expect(stats()).toMatchObject({ watches: 1, retains: 1 });
    expect(provider.watchStats()).toMatchObject({ paths: 1, dirWatchers: 1, tree: true });

    await two.client.subscribeResource({ uri: a });
    expect(stats()).toMatchObject({ watches: 1, retains: 2 });
    expect(provider.watchStats()).toMatchObject({ paths: 1, dirWatchers: 1 });

    // A second file in the same directory shares its directory watcher; one elsewhere adds one.
    await one.client.subscribeResource({ uri: fileUri(root, 'b.txt') });
    await two.client.subscribeResource({ uri: fileUri(root, 'd/e.txt') });
    expect(stats()).toMatchObject({ watches: 3, retains: 4 });
    expect(provider.watchStats()).toMatchObject({ paths: 3, dirWatchers: 2 });

    await one.client.unsubscribeResource({ uri: a });
    expect(stats()).toMatchObject({ watches: 3, retains: 3 });
    await two.client.unsubscribeResource({ uri: a });
    expect(stats()).toMatchObject({ watches: 2, retains: 2 });
    expect(provider.watchStats()).toMatchObject({ paths: 2, dirWatchers: 2 });
    await one.client.unsubscribeResource({ uri: fileUri(root, 'b.txt') });
    expect(provider.watchStats()).toMatchObject({ paths: 1, dirWatchers: 1 });
    await two.client.unsubscribeResource({ uri: fileUri(root, 'd/e.txt') });
    expect(stats()).toMatchObject({ watches: 0, retains: 0 });
    expect(provider.watchStats()).toMatchObject({ paths: 0, dirWatchers: 0 });

    // 2025 clients listen for list changes while connected; the tree goes when they do.
    expect(stats().listListeners).toBe(2);
    await one.close();
    await two.close();
    await expectNothingHeld(server);
  });

  it('both eras share one count: a 2025 session and a 2026 listen on one URI hold one watch, two retains', async () => {
    const server = await startServer();
    const { reservoir } = server;
    const a = fileUri(root, 'a.txt');
    const legacy = await connectHttp('2025', server.endpoint.url, cleanup);
    const modern = await connectInProcess(reservoir, '2026');
    cleanup.add(() => modern.close());
    const legacyNotes = new Recorder(legacy.client);
    const modernNotes = new Recorder(modern.client);
    await legacy.client.subscribeResource({ uri: a });
    const sub = await modern.client.listen({ resourceSubscriptions: [a] });
    expect(reservoir.subscriptions.stats()).toMatchObject({ watches: 1, retains: 2 });
    expect(server.provider.watchStats()).toMatchObject({ paths: 1, dirWatchers: 1 });

    writeFileSync(join(root, 'a.txt'), 'seen by both eras\n');
    await waitFor(
      () => legacyNotes.updates(a) >= 1 && modernNotes.updates(a) >= 1,
      'both eras notified',
    );
    // One update each for the write: a second write's update is the next each era hears.
    writeFileSync(join(root, 'a.txt'), 'seen by both eras, again\n');
    await waitFor(
      () => legacyNotes.updates(a) >= 2 && modernNotes.updates(a) >= 2,
      'both eras notified of the second write',
    );
    expect(legacyNotes.updatedUris()).toEqual([a, a]);
    expect(modernNotes.updatedUris()).toEqual([a, a]);

    await sub.close();
    await waitFor(() => reservoir.subscriptions.stats().retains === 1, 'the listen to let go');
    expect(reservoir.subscriptions.stats()).toMatchObject({ watches: 1 });
    await legacy.client.unsubscribeResource({ uri: a });
    expect(reservoir.subscriptions.stats()).toMatchObject({ watches: 0, retains: 0 });
    await legacy.close();
    await modern.close();
    await expectNothingHeld(server);
  });

  it('after 1,000 subscribe/unsubscribe cycles in both eras and on both transports, nothing remains', async () => {
    const server = await startServer();
    const { reservoir } = server;
    const uris = FILES.map((f) => fileUri(root, f));
    const legacyStdio = await connectInProcess(reservoir, '2025');
    const modernStdio = await connectInProcess(reservoir, '2026');
    cleanup.add(() => legacyStdio.close());
    cleanup.add(() => modernStdio.close());
    const legacyHttp = await connectHttp('2025', server.endpoint.url, cleanup);
    const modernHttp = await connectHttp('2026', server.endpoint.url, cleanup);

    const cycle2025 = async (client: Client, n: number): Promise<void> => {
      const uri = uris[n % uris.length]!;
      await client.subscribeResource({ uri });
      await client.unsubscribeResource({ uri });
    };
    const cycle2026 = async (client: Client, n: number): Promise<void> => {
      const sub = await client.listen({
        resourceSubscriptions: [uris[n % uris.length]!, uris[(n + 1) % uris.length]!],
        resourcesListChanged: n % 2 === 0,
      });
      await sub.close();
    };
    // Four clients cycling side by side, 1,000 cycles in all (HTTP round trips cost more, so fewer there).
    const run = async (
      count: number,
      cycle: (client: Client, n: number) => Promise<void>,
      client: Client,
    ): Promise<void> => {
      for (let n = 0; n < count; n += 1) await cycle(client, n);
    };
    await Promise.all([
      run(650, cycle2025, legacyStdio.client),
      run(100, cycle2025, legacyHttp.client),
      run(200, cycle2026, modernStdio.client),
      run(50, cycle2026, modernHttp.client),
    ]);
    // The 2025 clients still connected hold their list listening, and nothing else.
    await waitFor(
      () => reservoir.subscriptions.stats().retains === 0,
      () => `no retains: ${JSON.stringify(reservoir.subscriptions.stats())}`,
    );
    expect(reservoir.subscriptions.stats()).toMatchObject({
      watches: 0,
      retains: 0,
      listListeners: 2,
    });
    expect(server.provider.watchStats()).toMatchObject({ paths: 0, dirWatchers: 0 });

    // The watches still work after all that.
    const recorder = new Recorder(legacyStdio.client);
    await legacyStdio.client.subscribeResource({ uri: uris[0]! });
    writeFileSync(join(root, FILES[0]!), 'after the cycles\n');
    await waitFor(() => recorder.updates(uris[0]) >= 1, 'an update after the cycles');
    await legacyStdio.client.unsubscribeResource({ uri: uris[0]! });

    await legacyStdio.close();
    await modernStdio.close();
    await legacyHttp.close();
    await modernHttp.close();
    await expectNothingHeld(server);
  }, 60_000);

  it('after 100 abandoned connections nothing remains', async () => {
    // Idle long enough that no session is reclaimed between its open and its subscribe on a loaded
    // machine (2 s was crossed at load 25), short enough for the sweep to come within the test.
    const server = await startServer({ sessionIdleMs: 6_000 });
    const { reservoir, endpoint } = server;
    const uris = FILES.map((f) => fileUri(root, f));
    const uri = (n: number): string => uris[n % uris.length]!;
    const jobs: Promise<void>[] = [];

    // 30 HTTP listen streams, acknowledged, then the socket destroyed without a word.
    const streams: RawHttpListen[] = [];
    for (let n = 0; n < 30; n += 1) {
      const stream = new RawHttpListen(endpoint.url, n, {
        resourceSubscriptions: [uri(n), uri(n + 2)],
        resourcesListChanged: n % 3 === 0,
      });
      cleanup.add(() => stream.destroy());
      streams.push(stream);
    }
    await waitFor(() => streams.every((s) => s.acknowledged), 'thirty acknowledgements');
    // 10 more destroyed before their acknowledgement could be read.
    for (let n = 30; n < 40; n += 1)
      new RawHttpListen(endpoint.url, n, { resourceSubscriptions: [uri(n)] }).destroy();

    // 20 2025 HTTP sessions that subscribe, then close (DELETE) — ten through the SDK client, ten by hand.
    for (let n = 0; n < 10; n += 1) {
      jobs.push(
        (async () => {
          const connection = await connectHttp('2025', endpoint.url);
          await connection.client.subscribeResource({ uri: uri(n) });
          await connection.close();
        })(),
      );
      jobs.push(
        (async () => {
          const session = await LegacyHttpSession.open(endpoint.url);
          await session.request('resources/subscribe', { uri: uri(n + 1) });
          await session.close();
        })(),
      );
    }
    // 10 2025 HTTP sessions that subscribe and vanish (no DELETE): the idle sweep reclaims them.
    for (let n = 0; n < 10; n += 1) {
      jobs.push(
        (async () => {
          const session = await LegacyHttpSession.open(endpoint.url);
          await session.request('resources/subscribe', { uri: uri(n + 3) });
        })(),
      );
    }
    // 40 stdio connections, both eras, that subscribe or listen and then hang up (stdin ends).
    const stdio = await Promise.all(
      Array.from({ length: 40 }, async (_, n) => {
        const connection = await connectInProcess(reservoir, n % 2 === 0 ? '2025' : '2026');
        cleanup.add(() => connection.close());
        if (n % 2 === 0) await connection.client.subscribeResource({ uri: uri(n) });
        else
          await connection.client.listen({
            resourceSubscriptions: [uri(n), uri(n + 1)],
            resourcesListChanged: true,
          });
        return connection;
      }),
    );
    await Promise.all(jobs);
    expect(reservoir.subscriptions.stats().watches).toBe(uris.length);

    for (const stream of streams) stream.destroy();
    for (const connection of stdio) connection.hangUp();
    await expectNothingHeld(server, 40_000); // the vanished sessions wait out their idle time

    // Closing the endpoint takes its bus channel too: every counter at zero.
    await reservoir.close();
    expect(reservoir.subscriptions.stats()).toEqual({ ...IDLE, channels: 0 });
    expect(server.provider.watchStats()).toMatchObject(NO_WATCHES);
  }, 120_000);

  it('an HTTP listen stream whose client vanishes is released at once, even after a garbage collection', async () => {
    // The disconnect reaches the stream through the request's abort signal. A collection between
    // the acknowledgement and the disconnect must not cut that chain (the release would then wait
    // for the next SSE keep-alive write, 15 s later).
    const server = await startServer();
    const { reservoir, endpoint } = server;
    const streams = [0, 1, 2].map(
      (n) =>
        new RawHttpListen(endpoint.url, n, { resourceSubscriptions: [fileUri(root, FILES[n]!)] }),
    );
    for (const stream of streams) cleanup.add(() => stream.destroy());
    await waitFor(() => streams.every((s) => s.acknowledged), 'three acknowledgements');
    expect(reservoir.subscriptions.stats()).toMatchObject({ watches: 3, retains: 3 });
    collectGarbage();
    await new Promise((resolve) => setImmediate(resolve)); // a turn between the two collections
    collectGarbage();
    for (const stream of streams) stream.destroy();
    await expectNothingHeld(server, 3_000);
  });
});
