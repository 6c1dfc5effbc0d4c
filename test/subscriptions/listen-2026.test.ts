// Issue 3, live resources, 2026-07-28 specifics: the listen acknowledgement honours only watchable
// URIs (in canonical form); every notification on a stream carries its subscription id; several
// streams on one connection are independent; a client's `notifications/cancelled` (or closing the
// stream) ends one; and server shutdown — SIGTERM to the CLI, or `reservoir.close()` in process —
// answers every open listen with the graceful completion result. Checked with the real SDK client,
// and on the raw wire where the SDK would hide the shape.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { filesProvider, type FilesProvider } from '../../src/providers/files/index.js';
import { createReservoir } from '../../src/server/index.js';
import { ensureBuilt } from '../helpers/build.js';
import {
  Cleanup,
  connectHttp,
  connectStdio,
  spawnHttpServer,
  type TransportKind,
} from '../helpers/clients.js';
import {
  createWhole,
  fileUri,
  makeTempDir,
  overwrite,
  removeTree,
  writeTree,
} from '../helpers/tree.js';
import { RawStdio } from '../helpers/wire.js';
import {
  listenMessage,
  parsedLines,
  RawHttpListen,
  RawInProcessStdio,
  Recorder,
  SUBSCRIPTION_ID_KEY,
  waitFor,
} from './harness.js';

const cleanup = new Cleanup();
let root: string;
let outside: string;
let httpUrl: string;

beforeAll(async () => {
  await ensureBuilt();
  root = makeTempDir('reservoir-sub-listen-');
  outside = makeTempDir('reservoir-sub-outside-');
  cleanup.add(() => removeTree(root));
  cleanup.add(() => removeTree(outside));
  writeTree(root, {
    'a.txt': 'a\n',
    'b.txt': 'b\n',
    '.git/config': '[core]\n',
    'dir/c.txt': 'c\n',
  });
  writeTree(outside, { 'secret.txt': 'not served\n' });
  httpUrl = (await spawnHttpServer([root], [], cleanup)).url;
});

afterAll(() => cleanup.run());

type Message = Record<string, unknown> & {
  method?: string;
  id?: unknown;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
};

const subscriptionIdOf = (m: Message): unknown =>
  (m.params?.['_meta'] as Record<string, unknown> | undefined)?.[SUBSCRIPTION_ID_KEY];
const ofMethod = (messages: Message[], method: string): Message[] =>
  messages.filter((m) => m.method === method);
const updatesFor = (messages: Message[], id: unknown, uri?: string): Message[] =>
  ofMethod(messages, 'notifications/resources/updated').filter(
    (m) => subscriptionIdOf(m) === id && (uri === undefined || m.params?.['uri'] === uri),
  );

async function connect2026(transport: TransportKind): Promise<Recorder & { client: Client }> {
  const client =
    transport === 'stdio'
      ? (await connectStdio('2026', [root], [], cleanup)).client
      : (await connectHttp('2026', httpUrl, cleanup)).client;
  return Object.assign(new Recorder(client), { client });
}

describe.each(['stdio', 'http'] as const)('SDK client over %s', (transport) => {
  it('the acknowledgement honours only watchable URIs, in canonical form', async () => {
    const { client } = await connect2026(transport);
    const a = fileUri(root, 'a.txt');
    const sub = await client.listen({
      resourceSubscriptions: [
        a,
        fileUri(root, 'missing.txt'),
        'file:///etc/passwd',
        pathToFileURL(join(outside, 'secret.txt')).href,
        `${pathToFileURL(root).href}/dir/../../${outside.split('/').pop()}/secret.txt`,
        fileUri(root, '.git/config'),
        `${pathToFileURL(root).href}/dir/../b.txt`,
        'not a uri',
      ],
      resourcesListChanged: true,
    });
    expect(sub.honoredFilter).toEqual({
      resourceSubscriptions: [a, fileUri(root, 'b.txt')],
      resourcesListChanged: true,
    });
    await sub.close();
  });

  it('a listen with nothing watchable is acknowledged with an empty subscription list', async () => {
    const { client } = await connect2026(transport);
    const sub = await client.listen({
      resourceSubscriptions: ['file:///etc/passwd', fileUri(root, 'nope.txt')],
    });
    expect(sub.honoredFilter.resourceSubscriptions ?? []).toEqual([]);
    await sub.close();
  });

  it('concurrent listen streams on one client are independent; closing one leaves the other working', async () => {
    const recorder = await connect2026(transport);
    const { client } = recorder;
    const a = fileUri(root, 'a.txt');
    const b = fileUri(root, 'b.txt');
    const first = await client.listen({ resourceSubscriptions: [a] });
    const second = await client.listen({ resourceSubscriptions: [a, b] });
    const third = await client.listen({ resourceSubscriptions: [b] });
    const idsOf = (uri: string): unknown[] =>
      recorder.events
        .filter((e) => e.method === 'updated' && e.uri === uri)
        .map((e) => e.subscriptionId);

    // One write each (overwrite: no truncate to settle on, which would rightly notify twice).
    // Each step's write is the marker for the step before: a notification still owed for an
    // earlier write would arrive before the marker's, so the counts are checked once it is in.
    overwrite(join(root, 'a.txt'), `a for three streams ${transport}\n`);
    await waitFor(() => idsOf(a).length >= 2, 'a.txt on two streams');
    expect(idsOf(b)).toEqual([]);

    overwrite(join(root, 'b.txt'), `b for two streams ${transport}\n`);
    await waitFor(() => idsOf(b).length >= 2, 'b.txt on two streams');
    const aIds = idsOf(a);
    expect(aIds).toHaveLength(2);
    expect(new Set(aIds).size).toBe(2);
    const bIds = idsOf(b).slice(0, 2);
    // The stream on both URIs is the one id the two sets share.
    const shared = aIds.filter((id) => bIds.includes(id));
    expect(shared).toHaveLength(1);

    await first.close();
    expect(await first.closed).toBe('local');
    overwrite(join(root, 'a.txt'), `a after closing the first stream ${transport}\n`);
    await waitFor(() => idsOf(a).length >= 3, 'a.txt on the second stream');
    expect(idsOf(b)).toHaveLength(2);

    await second.close();
    overwrite(join(root, 'a.txt'), `a with no stream left ${transport}\n`);
    overwrite(join(root, 'b.txt'), `b on the third stream only ${transport}\n`);
    await waitFor(() => idsOf(b).length >= 3, 'b.txt on the third stream');
    expect(idsOf(a).slice(2)).toEqual(shared); // one for the second stream; none with no stream left
    expect(idsOf(b)).toHaveLength(3);
    expect(shared).not.toContain(idsOf(b)[2]);
    await third.close();
  });
});

describe('the raw stdio wire (spawned CLI)', () => {
  it("every notification carries its stream's subscription id; cancelling one stream ends it; SIGTERM completes the others", async () => {
    const raw = RawStdio.serve([root]);
    cleanup.add(() => raw.kill());
    const a = fileUri(root, 'a.txt');
    const b = fileUri(root, 'b.txt');
    raw.send(listenMessage(101, { resourceSubscriptions: [a] }));
    raw.send(listenMessage('second', { resourceSubscriptions: [b], resourcesListChanged: true }));
    const messages = (): Message[] => parsedLines(raw.lines) as Message[];
    await waitFor(
      () => ofMethod(messages(), 'notifications/subscriptions/acknowledged').length === 2,
      'two acknowledgements',
      10_000,
    );
    const acks = ofMethod(messages(), 'notifications/subscriptions/acknowledged');
    expect(acks.map(subscriptionIdOf).sort()).toEqual([101, 'second'].sort());

    overwrite(join(root, 'a.txt'), 'a on the wire\n');
    await waitFor(() => updatesFor(messages(), 101, a).length >= 1, 'a.txt on stream 101');
    overwrite(join(root, 'b.txt'), 'b on the wire\n');
    await waitFor(
      () => updatesFor(messages(), 'second', b).length >= 1,
      'b.txt on stream "second"',
    );
    createWhole(join(root, 'wire-new.txt'), 'new\n');
    await waitFor(
      () => ofMethod(messages(), 'notifications/resources/list_changed').length >= 1,
      'list_changed',
    );
    // A second write to b is the marker: anything still owed for the writes above arrives first.
    overwrite(join(root, 'b.txt'), 'b on the wire, the marker\n');
    await waitFor(
      () => updatesFor(messages(), 'second', b).length >= 2,
      'the marker on stream "second"',
    );

    const notifications = messages().filter((m) => m.method?.startsWith('notifications/') === true);
    for (const note of notifications)
      expect([101, 'second'], JSON.stringify(note)).toContain(subscriptionIdOf(note));
    expect(updatesFor(messages(), 101)).toHaveLength(1);
    expect(updatesFor(messages(), 'second')).toHaveLength(2);
    expect(
      ofMethod(messages(), 'notifications/resources/list_changed').map(subscriptionIdOf),
    ).toEqual(['second']);

    // The client cancels stream 101: its URI goes quiet, the other stream carries on. The server
    // reads stdin in order, so once a ping sent after the cancel is answered, the cancel was taken.
    raw.send({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 101, reason: 'done' },
    });
    const pong = await raw.request('ping'); // answered (a result or, without a 2026 envelope, an error)
    expect(pong.result ?? pong.error).toBeDefined();
    const before = raw.lines.length;
    // a is written before b: a notification for a on stream 101 would arrive before b's.
    overwrite(join(root, 'a.txt'), 'a after cancel\n');
    overwrite(join(root, 'b.txt'), 'b after cancel\n');
    await waitFor(
      () => updatesFor(messages(), 'second', b).length >= 3,
      'b.txt again on stream "second"',
    );
    const after = parsedLines(raw.lines.slice(before)) as Message[];
    expect(updatesFor(after, 101)).toEqual([]);

    // Shutdown: the open stream is answered with the completion result carrying its id.
    raw.child.kill('SIGTERM');
    const exit = await raw.exited;
    expect(exit.code).toBe(0);
    const results = messages().filter(
      (m) => m.id !== undefined && ('result' in m || 'error' in m) && m.id !== pong.id,
    );
    expect(results).toHaveLength(1);
    const [done] = results;
    expect(done?.id).toBe('second');
    expect(done?.result?.['_meta']).toMatchObject({ [SUBSCRIPTION_ID_KEY]: 'second' });
    expect(messages().every((m) => m.jsonrpc === '2.0')).toBe(true);
    expect(raw.lines.every((line) => line.trim() === '' || parsedLines([line]).length === 1)).toBe(
      true,
    );
  });

  it('a listen whose request has no _meta envelope is not a 2026 listen, and gets an error, not a stream', async () => {
    const raw = RawStdio.serve([root]);
    cleanup.add(() => raw.kill());
    const response = await raw.request('subscriptions/listen', {
      notifications: { resourceSubscriptions: [fileUri(root, 'a.txt')] },
    });
    expect(response.error).toBeDefined();
    await raw.end();
  });
});

describe('the raw HTTP wire (spawned CLI)', () => {
  it('every event on a listen stream carries its id; SIGTERM answers open streams with the completion result', async () => {
    const server = await spawnHttpServer([root], [], cleanup);
    const a = fileUri(root, 'a.txt');
    const first = new RawHttpListen(server.url, 7, {
      resourceSubscriptions: [a],
      resourcesListChanged: true,
    });
    const second = new RawHttpListen(server.url, 'other', {
      resourceSubscriptions: [fileUri(root, 'b.txt')],
    });
    cleanup.add(() => first.destroy());
    cleanup.add(() => second.destroy());
    await waitFor(() => first.acknowledged && second.acknowledged, 'two acknowledgements', 10_000);
    expect(first.status).toBe(200);

    overwrite(join(root, 'a.txt'), 'a over http\n');
    await waitFor(
      () => first.notifications('notifications/resources/updated').length >= 1,
      'a.txt on stream 7',
    );
    createWhole(join(root, 'http-new.txt'), 'new\n');
    await waitFor(
      () => first.notifications('notifications/resources/list_changed').length >= 1,
      'list_changed on stream 7',
    );
    // A write to b.txt (stream "other") is the marker: anything still owed above arrives first.
    overwrite(join(root, 'b.txt'), 'b over http, the marker\n');
    await waitFor(
      () => second.notifications('notifications/resources/updated').length >= 1,
      'the marker on stream "other"',
    );
    for (const message of first.messages)
      expect(subscriptionIdOf(message as unknown as Message), JSON.stringify(message)).toBe(7);
    expect(first.notifications('notifications/resources/updated')).toHaveLength(1);
    expect(second.notifications('notifications/resources/updated')).toHaveLength(1);
    expect(second.notifications('notifications/resources/list_changed')).toEqual([]);

    server.child.kill('SIGTERM');
    await waitFor(() => first.ended && second.ended, 'both streams to end', 10_000);
    const exit = await server.exited;
    expect(exit.code).toBe(0);
    for (const [stream, id] of [
      [first, 7],
      [second, 'other'],
    ] as const) {
      const results = stream.messages.filter((m) => m.id === id && m.result !== undefined);
      expect(results, String(id)).toHaveLength(1);
      expect(results[0]?.result?.['_meta'], String(id)).toMatchObject({
        [SUBSCRIPTION_ID_KEY]: id,
      });
    }
  });
});

describe('in process: reservoir.close() completes open listens and releases their watches', () => {
  it('over stdio streams and over HTTP', async () => {
    const provider: FilesProvider = filesProvider({ root });
    const reservoir = createReservoir({ providers: [provider] });
    cleanup.add(() => reservoir.close());
    const endpoint = await reservoir.listen({ port: 0 });
    const stdio = new RawInProcessStdio(reservoir);
    stdio.send(
      listenMessage(1, {
        resourceSubscriptions: [fileUri(root, 'a.txt')],
        resourcesListChanged: true,
      }),
    );
    const http = new RawHttpListen(endpoint.url, 2, {
      resourceSubscriptions: [fileUri(root, 'a.txt'), fileUri(root, 'b.txt')],
    });
    cleanup.add(() => http.destroy());
    await waitFor(
      () =>
        http.acknowledged &&
        ofMethod(stdio.messages() as Message[], 'notifications/subscriptions/acknowledged')
          .length === 1,
      'both acks',
    );
    expect(reservoir.subscriptions.stats()).toMatchObject({
      watches: 2,
      retains: 3,
      listListeners: 1,
    });

    await reservoir.close();
    await waitFor(() => http.ended, 'the HTTP stream to end');
    const stdioDone = (stdio.messages() as Message[]).filter((m) => m.id === 1);
    expect(stdioDone).toHaveLength(1);
    expect(stdioDone[0]?.result?.['_meta']).toMatchObject({ [SUBSCRIPTION_ID_KEY]: 1 });
    const httpDone = http.messages.filter((m) => m.id === 2);
    expect(httpDone).toHaveLength(1);
    expect(httpDone[0]?.result?.['_meta']).toMatchObject({ [SUBSCRIPTION_ID_KEY]: 2 });
    expect(reservoir.subscriptions.stats()).toEqual({
      watches: 0,
      retains: 0,
      listListeners: 0,
      listWatchers: 0,
      channels: 0,
    });
    expect(provider.watchStats()).toMatchObject({ paths: 0, dirWatchers: 0, tree: false });
  });

  it('a client notifications/cancelled ends the stream and gives its watches back', async () => {
    const reservoir = createReservoir({ providers: [filesProvider({ root })] });
    cleanup.add(() => reservoir.close());
    const stdio = new RawInProcessStdio(reservoir);
    stdio.send(
      listenMessage('x', {
        resourceSubscriptions: [fileUri(root, 'a.txt')],
        resourcesListChanged: true,
      }),
    );
    stdio.send(listenMessage('y', { resourceSubscriptions: [fileUri(root, 'a.txt')] }));
    await waitFor(
      () =>
        ofMethod(stdio.messages() as Message[], 'notifications/subscriptions/acknowledged')
          .length === 2,
      'two acks',
    );
    expect(reservoir.subscriptions.stats()).toMatchObject({
      watches: 1,
      retains: 1,
      listListeners: 1,
    });
    stdio.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'x' } });
    await waitFor(
      () => reservoir.subscriptions.stats().listListeners === 0,
      'the list listener to go',
    );
    expect(reservoir.subscriptions.stats()).toMatchObject({ watches: 1, retains: 1 });
    stdio.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'y' } });
    await waitFor(() => reservoir.subscriptions.stats().watches === 0, 'the watch to stop');
    expect(reservoir.subscriptions.stats()).toMatchObject({
      watches: 0,
      retains: 0,
      listListeners: 0,
      listWatchers: 0,
      channels: 1,
    });
    stdio.end();
    await waitFor(() => reservoir.subscriptions.stats().channels === 0, 'the channel to close');
  });

  it('shutdown is prompt with a keep-alive SDK client holding an open listen (no wait for the 2 s drain grace)', async () => {
    const reservoir = createReservoir({ providers: [filesProvider({ root })] });
    cleanup.add(() => reservoir.close());
    const endpoint = await reservoir.listen({ port: 0 });
    const { client } = await connectHttp('2026', endpoint.url, cleanup);
    const sub = await client.listen({ resourceSubscriptions: [fileUri(root, 'a.txt')] });
    // With timers frozen, a close that waited for the grace timer would never end (the test times out).
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      await reservoir.close();
    } finally {
      vi.useRealTimers();
    }
    expect(await sub.closed).toBe('graceful');
  });
});
