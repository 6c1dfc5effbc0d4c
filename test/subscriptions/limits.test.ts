// Issue 3, live resources: limits and degradation. The per-connection subscription cap
// (`subscriptions.maxPerChannel`) refuses with a clear error in both eras (2025: -32013 on
// `resources/subscribe`; 2026: a JSON-RPC error for a listen asking for more URIs than the cap) and
// retains nothing for a refused request. When the OS refuses native watches (a tree-watcher backend
// whose subscribe fails with ENOSPC) one warning is logged and subscriptions still deliver, by
// polling; `--watch poll` on the CLI delivers too.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { filesProvider, type FilesProvider } from '../../src/providers/files/index.js';
import type { TreeWatcherBackend } from '../../src/providers/files/watch.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { ensureBuilt } from '../helpers/build.js';
import { Cleanup, connectHttp, connectStdio, ERAS } from '../helpers/clients.js';
import { fileUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { LegacyHttpSession } from '../helpers/wire.js';
import {
  connectInProcess,
  MemoryLogger,
  afterMarker,
  RawHttpListen,
  Recorder,
  waitFor,
  watchUris,
} from './harness.js';

const CAP = 3;
const FILES = ['a.txt', 'b.txt', 'c.txt', 'd.txt', 'e.txt'];

let root: string;
const cleanup = new Cleanup();

beforeAll(() => {
  root = makeTempDir('reservoir-sub-limits-');
  writeTree(root, Object.fromEntries(FILES.map((f) => [f, `${f}\n`])));
});

afterAll(() => removeTree(root));
afterEach(() => cleanup.run());

const uri = (i: number): string => fileUri(root, FILES[i]!);

async function cappedServer(): Promise<{ reservoir: Reservoir; url: string }> {
  const reservoir = createReservoir({
    providers: [filesProvider({ root })],
    subscriptions: { maxPerChannel: CAP },
  });
  cleanup.add(() => reservoir.close());
  const endpoint = await reservoir.listen({ port: 0 });
  return { reservoir, url: endpoint.url };
}

describe('the per-connection subscription cap (maxPerChannel)', () => {
  it('2025: the subscription past the cap is refused with -32013, on the wire and through the SDK client', async () => {
    const { reservoir, url } = await cappedServer();
    const session = await LegacyHttpSession.open(url);
    cleanup.add(() => session.close());
    for (let i = 0; i < CAP; i += 1)
      expect((await session.request('resources/subscribe', { uri: uri(i) })).result).toEqual({});
    // Subscribing again to a URI already held is not a new subscription.
    expect((await session.request('resources/subscribe', { uri: uri(0) })).result).toEqual({});
    const refused = await session.request('resources/subscribe', { uri: uri(CAP) });
    expect(refused.error).toMatchObject({
      code: -32013,
      data: { code: 'limit_exceeded', limit: CAP },
    });
    expect(refused.error?.message).toMatch(/limit is 3/);
    expect(reservoir.subscriptions.stats()).toMatchObject({ watches: CAP, retains: CAP });
    // Room made, room taken.
    expect((await session.request('resources/unsubscribe', { uri: uri(1) })).result).toEqual({});
    expect((await session.request('resources/subscribe', { uri: uri(CAP) })).result).toEqual({});

    const stdio = await connectInProcess(reservoir, '2025');
    cleanup.add(() => stdio.close());
    for (let i = 0; i < CAP; i += 1) await stdio.client.subscribeResource({ uri: uri(i) });
    await expect(stdio.client.subscribeResource({ uri: uri(CAP) })).rejects.toMatchObject({
      code: -32013,
    });
  });

  it.each(['stdio', 'http'] as const)(
    '2026 over %s: a listen asking for more URIs than the cap gets a JSON-RPC error and retains nothing',
    async (transport) => {
      const { reservoir, url } = await cappedServer();
      const client =
        transport === 'stdio'
          ? (await connectInProcess(reservoir, '2026')).client
          : (await connectHttp('2026', url, cleanup)).client;
      cleanup.add(() => client.close());
      const before = reservoir.subscriptions.stats();
      await expect(
        client.listen({ resourceSubscriptions: FILES.slice(0, CAP + 1).map((_, i) => uri(i)) }),
      ).rejects.toMatchObject({ code: -32013 });
      expect(reservoir.subscriptions.stats()).toMatchObject({
        watches: before.watches,
        retains: before.retains,
      });
      const sub = await client.listen({
        resourceSubscriptions: FILES.slice(0, CAP).map((_, i) => uri(i)),
      });
      expect(sub.honoredFilter.resourceSubscriptions).toHaveLength(CAP);
      await sub.close();
    },
  );

  it('2026 on the raw HTTP wire: the refusal is a JSON-RPC error for the listen id, with the limit', async () => {
    const { url } = await cappedServer();
    const stream = new RawHttpListen(url, 'too-many', {
      resourceSubscriptions: FILES.map((_, i) => uri(i)),
    });
    cleanup.add(() => stream.destroy());
    await waitFor(() => stream.ended && stream.messages.length > 0, 'the refusal');
    expect(stream.messages).toEqual([
      {
        jsonrpc: '2.0',
        id: 'too-many',
        error: expect.objectContaining({
          code: -32013,
          data: expect.objectContaining({ code: 'limit_exceeded', limit: CAP }),
        }),
      },
    ]);
  });

  it('2026 over stdio: the cap counts every stream on the connection', async () => {
    const { reservoir } = await cappedServer();
    const { client, close } = await connectInProcess(reservoir, '2026');
    cleanup.add(close);
    const first = await client.listen({ resourceSubscriptions: [uri(0), uri(1)] });
    await expect(client.listen({ resourceSubscriptions: [uri(2), uri(3)] })).rejects.toMatchObject({
      code: -32013,
    });
    // URIs the connection already holds cost nothing more.
    const second = await client.listen({ resourceSubscriptions: [uri(0), uri(1), uri(2)] });
    expect(reservoir.subscriptions.stats()).toMatchObject({ watches: 3, retains: 3 });
    await first.close();
    await second.close();
    await waitFor(() => reservoir.subscriptions.stats().retains === 0, 'the streams to let go');
  });
});

describe('degradation: the OS refuses native watches', () => {
  const enospc = (): Error =>
    Object.assign(new Error('ENOSPC: System limit for number of file watchers reached'), {
      code: 'ENOSPC',
      errno: -28,
      syscall: 'inotify_add_watch',
    });

  it('logs one warning, and subscriptions and list changes still deliver, by polling', async () => {
    const logger = new MemoryLogger();
    let attempts = 0;
    const backend: TreeWatcherBackend = {
      subscribe: async () => {
        attempts += 1;
        throw enospc();
      },
    };
    const provider: FilesProvider = filesProvider({
      root,
      logger,
      watch: { backend, pollMs: 100 },
    });
    const reservoir = createReservoir({ providers: [provider], logger });
    cleanup.add(() => reservoir.close());
    const endpoint = await reservoir.listen({ port: 0 });
    const warnings = (): number => logger.count('warn', /polling/);

    const legacy = await connectInProcess(reservoir, '2025');
    cleanup.add(() => legacy.close());
    const modern = await connectHttp('2026', endpoint.url, cleanup);
    const legacyNotes = new Recorder(legacy.client);
    const modernNotes = new Recorder(modern.client);
    await legacy.client.subscribeResource({ uri: uri(0) });
    await legacy.client.subscribeResource({ uri: uri(1) });
    const sub = await modern.client.listen({
      resourceSubscriptions: [uri(0), uri(2)],
      resourcesListChanged: true,
    });
    expect(provider.watchStats()).toMatchObject({ polling: true, paths: 3, dirWatchers: 1 });
    expect(attempts).toBeGreaterThanOrEqual(1);

    writeFileSync(join(root, 'a.txt'), 'a, seen by polling\n');
    await waitFor(
      () => legacyNotes.updates(uri(0)) >= 1 && modernNotes.updates(uri(0)) >= 1,
      'a.txt by polling, in both eras',
    );
    writeFileSync(join(root, 'c.txt'), 'c, seen by polling\n');
    await waitFor(() => modernNotes.updates(uri(2)) >= 1, 'c.txt by polling');
    // Later changes prove no duplicate is on its way (polling reports in order): b.txt for the
    // 2025 client, which watches it, and a new file's list_changed for both.
    await afterMarker([legacyNotes], uri(1), () =>
      writeFileSync(join(root, 'b.txt'), 'b, seen by polling\n'),
    );
    writeFileSync(join(root, 'polled-new.txt'), 'new\n');
    await waitFor(
      () => modernNotes.listChanges() >= 1 && legacyNotes.listChanges() >= 1,
      'list_changed by polling',
    );
    expect(legacyNotes.updatedUris()).toEqual([uri(0), uri(1)]);
    expect(modernNotes.updatedUris().sort()).toEqual([uri(0), uri(2)].sort());

    // Let everything go and come back: the tree watcher is not retried, and no second warning.
    await sub.close();
    await legacy.close();
    await waitFor(
      () => provider.watchStats().paths === 0 && !provider.watchStats().tree,
      'every watch to stop',
    );
    const again = await connectInProcess(reservoir, '2025');
    cleanup.add(() => again.close());
    const againNotes = new Recorder(again.client);
    await again.client.subscribeResource({ uri: uri(1) });
    writeFileSync(join(root, 'b.txt'), 'b, polled after a restart\n');
    await waitFor(() => againNotes.updates(uri(1)) >= 1, 'b.txt by polling');
    expect(warnings()).toBe(1);
    expect(logger.entries.find((e) => e.level === 'warn')?.fields).toMatchObject({
      err: { code: 'ENOSPC' },
    });
  });
});

describe('--watch poll on the CLI', () => {
  it('delivers updates and list changes by polling, in both eras (one CLI per era, side by side)', async () => {
    await ensureBuilt();
    await Promise.all(
      ERAS.map(async (era) => {
        const dir = makeTempDir('reservoir-sub-poll-');
        cleanup.add(() => removeTree(dir));
        writeTree(dir, { 'p.txt': 'p\n', 'r.txt': 'r\n' });
        const { client } = await connectStdio(era, [dir], ['--watch', 'poll'], cleanup);
        const notes = new Recorder(client);
        const p = fileUri(dir, 'p.txt');
        const r = fileUri(dir, 'r.txt');
        await watchUris(client, era, [p, r], true);
        writeFileSync(join(dir, 'p.txt'), 'p, polled\n');
        await waitFor(() => notes.updates(p) >= 1, `p.txt by polling (${era})`);
        writeFileSync(join(dir, 'q.txt'), 'new\n');
        await waitFor(() => notes.listChanges() >= 1, `list_changed by polling (${era})`);
        // A change polled in a later round: a duplicate of p.txt's would have come before it.
        await afterMarker([notes], r, () => writeFileSync(join(dir, 'r.txt'), 'r, polled\n'));
        expect(notes.updatedUris(), era).toEqual([p, r]);
      }),
    );
  });
});
