// Three Reservoir instances on the machine's Redis, driven directly and through a round-robin
// balancer, with the real SDK client in both eras.
import { afterEach, describe, expect, it } from 'vitest';
import { Cleanup, connectHttp, newClient } from '../helpers/clients.js';
import { eventuallyAccepted } from '../helpers/eventually.js';
import { afterMarker, Recorder, waitFor, watchUris } from '../subscriptions/harness.js';
import {
  Backend,
  MEM_ROOT,
  REDIS_URL,
  roundRobin,
  sessionPost,
  sessionStatus,
  startMember,
  streamMarked,
  uniquePrefix,
  type Member,
} from './harness.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const cleanup = new Cleanup();
/**
 * How long a polled change may take to reach the clients: a poll, a Redis publish and the
 * deliveries — beside another suite on 2 cores, past 10 s at times. The tests prove delivery, not
 * its speed.
 */
const DELIVERY_MS = 30_000;
afterEach(() => cleanup.run());

async function threeMembers(backend: Backend, prefix = uniquePrefix()): Promise<Member[]> {
  const members: Member[] = [];
  for (const name of ['A', 'B', 'C']) {
    const member = await startMember(name, prefix, backend);
    cleanup.add(() => member.close());
    members.push(member);
  }
  return members;
}

describe.skipIf(REDIS_URL === undefined)('cluster mode on Redis', () => {
  it('delivers a change polled by one instance once to a 2025 subscriber on another and a 2026 listen stream on a third, with only one instance polling', async () => {
    const backend = new Backend();
    backend.values.set('row', 'v1');
    backend.values.set('marker', 'm1');
    const members = await threeMembers(backend);
    const uri = `${MEM_ROOT}row`;
    const marker = `${MEM_ROOT}marker`;
    const legacy = await connectHttp('2025', members[0]!.url, cleanup);
    const modern = await connectHttp('2026', members[2]!.url, cleanup);
    const legacyEvents = new Recorder(legacy.client);
    const modernEvents = new Recorder(modern.client);
    await watchUris(legacy.client, '2025', [uri, marker]);
    await watchUris(modern.client, '2026', [uri, marker]);
    await waitFor(
      () => backend.pollers().length === 1 && backend.watches() === 2,
      'one instance to poll both watched rows',
    );
    expect(backend.pollers()).toHaveLength(1);

    backend.values.set('row', 'v2');
    await waitFor(
      () => legacyEvents.updates(uri) >= 1 && modernEvents.updates(uri) >= 1,
      'both clients to hear the change',
      DELIVERY_MS,
    );
    await afterMarker([legacyEvents, modernEvents], marker, () =>
      backend.values.set('marker', 'm2'),
    );
    expect(legacyEvents.updates(uri)).toBe(1);
    expect(modernEvents.updates(uri)).toBe(1);
    // Still one poller (a lease moved by a stalled loop overlaps its old holder for up to a tick).
    await waitFor(() => backend.pollers().length === 1, 'one instance to poll');
  });

  it('reports a change made right after a subscribe is answered, before the lease holder has started watching: the subscriber’s instance put what it read on record for the holder to compare with', async () => {
    const backend = new Backend();
    backend.values.set('legacy', 'v1');
    backend.values.set('modern', 'v1');
    const members = await threeMembers(backend);
    const legacy = await connectHttp('2025', members[0]!.url, cleanup);
    const modern = await connectHttp('2026', members[1]!.url, cleanup);
    const legacyEvents = new Recorder(legacy.client);
    const modernEvents = new Recorder(modern.client);
    // No wait for the holder's watch: each change follows its subscribe's answer at once, while
    // the holder hears of the interest one bus hop later and takes its baseline after that.
    await watchUris(legacy.client, '2025', [`${MEM_ROOT}legacy`]);
    backend.values.set('legacy', 'v2');
    await watchUris(modern.client, '2026', [`${MEM_ROOT}modern`]);
    backend.values.set('modern', 'v2');
    // A change folded into the holder's baseline is never reported: the wait runs out.
    await waitFor(
      () =>
        legacyEvents.updates(`${MEM_ROOT}legacy`) >= 1 &&
        modernEvents.updates(`${MEM_ROOT}modern`) >= 1,
      'both clients to hear the change made right after their subscribe',
      DELIVERY_MS,
    );
  });

  it('answers a first subscribe to a slow source after one read of it, not two: what the subscriber sees is read beside the check that the resource exists', async () => {
    const backend = new Backend();
    backend.values.set('row', 'v1');
    const members = await threeMembers(backend);
    const legacy = await connectHttp('2025', members[0]!.url, cleanup);
    const events = new Recorder(legacy.client);
    const uri = `${MEM_ROOT}row`;
    let open!: () => void;
    backend.gate = new Promise((resolve) => (open = resolve));
    const subscribed = legacy.client.subscribeResource({ uri });
    // One after the other, the read would start only once the check had passed the gate.
    await waitFor(() => backend.held === 2, 'the check and the read to wait on the source at once');
    backend.gate = undefined;
    open();
    await subscribed;
    backend.values.set('row', 'v2');
    await waitFor(() => events.updates(uri) >= 1, 'the change after the subscribe', DELIVERY_MS);
  });

  it('hands polling over to another instance within 5 s when the lease holder dies; a change made while nobody polled arrives once, and later ones too', async () => {
    const backend = new Backend();
    backend.values.set('row', 'v1');
    backend.values.set('marker', 'm1');
    const members = await threeMembers(backend);
    const uri = `${MEM_ROOT}row`;
    const marker = `${MEM_ROOT}marker`;
    const recorders = new Map<string, Recorder>();
    for (const [i, member] of members.entries()) {
      const era = i === 1 ? '2025' : '2026';
      const connection = await connectHttp(era, member.url, cleanup);
      recorders.set(member.name, new Recorder(connection.client));
      await watchUris(connection.client, era, [uri, marker]);
    }
    await waitFor(
      () => backend.pollers().length === 1 && backend.watches() === 2,
      'one instance to poll both watched rows',
    );
    const holder = members.find((m) => m.name === backend.pollers()[0])!;
    // The holder crashes: it stops polling and renews nothing; its lease runs out in Redis.
    // Nobody releases it: another instance taking it over at all is the lease running out.
    await holder.reservoir.cluster!.watches.close({ abandon: true });
    backend.values.set('row', 'during the hand-over');
    await waitFor(
      () => backend.pollers().length === 1 && backend.pollers()[0] !== holder.name,
      'another instance to take the source over',
      15_000,
    );
    const survivors = members.filter((m) => m !== holder).map((m) => recorders.get(m.name)!);
    await waitFor(
      () => survivors.every((r) => r.updates(uri) >= 1),
      'the clients of the surviving instances to hear the change made during the hand-over',
      DELIVERY_MS,
    );
    await afterMarker(survivors, marker, () => backend.values.set('marker', 'm2'));
    for (const recorder of survivors) expect(recorder.updates(uri)).toBe(1);
    backend.values.set('row', 'after the hand-over');
    await waitFor(
      () => survivors.every((r) => r.updates(uri) >= 2),
      'the clients of the surviving instances to hear the next change',
      DELIVERY_MS,
    );
    await afterMarker(survivors, marker, () => backend.values.set('marker', 'm3'));
    for (const recorder of survivors) expect(recorder.updates(uri)).toBe(2);
  });

  it('serves a 2025 session opened on one instance through the others behind a round-robin balancer, notifications included, and DELETE ends it everywhere', async () => {
    const backend = new Backend();
    backend.values.set('row', 'v1');
    backend.values.set('marker', 'm1');
    const prefix = uniquePrefix();
    const members = await threeMembers(backend, prefix);
    const balancer = await roundRobin(members.map((m) => m.url));
    cleanup.add(() => balancer.close());
    const uri = `${MEM_ROOT}row`;
    const transport = new StreamableHTTPClientTransport(new URL(balancer.url));
    const client = newClient('2025');
    cleanup.add(() => client.close());
    await client.connect(transport);
    const events = new Recorder(client);
    await streamMarked(prefix, transport.sessionId!);
    for (let i = 0; i < 6; i += 1) {
      const read = await client.readResource({ uri });
      expect(read.contents[0]).toMatchObject({ text: 'v1' });
    }
    await client.subscribeResource({ uri });
    await client.subscribeResource({ uri: `${MEM_ROOT}marker` });
    expect(balancer.hits.every((n) => n >= 2)).toBe(true);
    await waitFor(
      () => backend.pollers().length === 1 && backend.watches() === 2,
      'one instance to poll both watched rows',
    );
    backend.values.set('row', 'v2');
    await waitFor(
      () => events.updates(uri) >= 1,
      "the session's GET stream to carry the change",
      DELIVERY_MS,
    );
    await afterMarker([events], `${MEM_ROOT}marker`, () => backend.values.set('marker', 'm2'));
    expect(events.updates(uri)).toBe(1);

    const id = transport.sessionId!;
    await transport.terminateSession();
    // Every member drops its copy when the end reaches it on the bus (another Redis connection
    // than the DELETE's answer came on): each says 404 once it heard.
    for (const member of members) {
      await eventuallyAccepted(
        () => sessionStatus(member.url, id),
        (s) => s === 404,
        `${member.name} to answer 404 after DELETE`,
      );
    }
  });

  it('keeps every subscription when other instances subscribe and unsubscribe one 2025 session at the same time, and the instance holding its GET stream follows them all', async () => {
    const backend = new Backend();
    const keys = ['a', 'b', 'c', 'd', 'e', 'f'];
    for (const k of keys) backend.values.set(k, 'v1');
    backend.values.set('marker', 'm1');
    const prefix = uniquePrefix();
    const members = await threeMembers(backend, prefix);
    // The session is opened on A, and its GET stream is held there; B and C only answer POSTs.
    const transport = new StreamableHTTPClientTransport(new URL(members[0]!.url));
    const client = newClient('2025');
    cleanup.add(() => client.close());
    await client.connect(transport);
    const events = new Recorder(client);
    const id = transport.sessionId!;
    await streamMarked(prefix, id);
    const post = (member: Member, method: string, uri: string): Promise<Response> =>
      sessionPost(member.url, id, { jsonrpc: '2.0', id: uri, method, params: { uri } });
    const both = async (method: string, pair: string[]): Promise<void> => {
      const answers = await Promise.all([
        post(members[1]!, method, `${MEM_ROOT}${pair[0]}`),
        post(members[2]!, method, `${MEM_ROOT}${pair[1]}`),
      ]);
      for (const answer of answers) {
        expect(answer.status).toBe(200);
        expect(await answer.json()).toMatchObject({ result: {} });
      }
    };
    // Each pair goes to B and C at once: each edits the record while the other does.
    for (let i = 0; i < keys.length; i += 2)
      await both('resources/subscribe', keys.slice(i, i + 2));
    await client.subscribeResource({ uri: `${MEM_ROOT}marker` });
    await waitFor(
      () => backend.pollers().length === 1 && backend.watches() === keys.length + 1,
      'one instance to poll every subscribed row',
    );
    for (const k of keys) backend.values.set(k, 'v2');
    await waitFor(
      () => keys.every((k) => events.updates(`${MEM_ROOT}${k}`) >= 1),
      () =>
        `the GET stream to carry every change (heard: ${keys.map((k) => `${k} ${events.updates(`${MEM_ROOT}${k}`)}`).join(', ')})`,
      DELIVERY_MS,
    );
    // Half of them dropped at once the same way: the other half is still heard, the dropped half not.
    await both('resources/unsubscribe', ['a', 'b']);
    await both('resources/unsubscribe', ['c', 'd']);
    for (const k of keys) backend.values.set(k, 'v3');
    await waitFor(
      () => ['e', 'f'].every((k) => events.updates(`${MEM_ROOT}${k}`) >= 2),
      'the GET stream to carry the changes of the rows still subscribed',
      DELIVERY_MS,
    );
    await afterMarker([events], `${MEM_ROOT}marker`, () => backend.values.set('marker', 'm2'));
    expect(keys.map((k) => events.updates(`${MEM_ROOT}${k}`))).toEqual([1, 1, 1, 1, 2, 2]);
  });

  it('honours on one instance a list cursor another instance minted', async () => {
    const backend = new Backend();
    for (let i = 0; i < 5; i += 1) backend.values.set(`k${i}`, String(i));
    const prefix = uniquePrefix();
    const members: Member[] = [];
    for (const name of ['A', 'B']) {
      const member = await startMember(name, prefix, backend, { reservoir: { pageSize: 2 } });
      cleanup.add(() => member.close());
      members.push(member);
    }
    for (const era of ['2025', '2026'] as const) {
      const first = await connectHttp(era, members[0]!.url, cleanup);
      const second = await connectHttp(era, members[1]!.url, cleanup);
      const page = await first.client.request({ method: 'resources/list', params: {} });
      expect(page.resources.map((r) => r.uri)).toEqual([`${MEM_ROOT}k0`, `${MEM_ROOT}k1`]);
      const next = await second.client.request({
        method: 'resources/list',
        params: { cursor: page.nextCursor! },
      });
      expect(next.resources.map((r) => r.uri)).toEqual([`${MEM_ROOT}k2`, `${MEM_ROOT}k3`]);
    }
  });

  it('refuses a subscription to a polled resource that does not exist, in both eras, as one process does', async () => {
    const backend = new Backend();
    backend.values.set('row', 'v1');
    const members = await threeMembers(backend);
    const legacy = await connectHttp('2025', members[0]!.url, cleanup);
    await expect(legacy.client.subscribeResource({ uri: `${MEM_ROOT}missing` })).rejects.toThrow(
      /Resource not found: mem:\/\/data\/missing/,
    );
    const modern = await connectHttp('2026', members[1]!.url, cleanup);
    const subscription = await modern.client.listen({
      resourceSubscriptions: [`${MEM_ROOT}missing`, `${MEM_ROOT}row`],
    });
    expect(subscription.honoredFilter).toEqual({ resourceSubscriptions: [`${MEM_ROOT}row`] });
    await subscription.close();
  });

  it('delivers a list change of a polled source, seen by its lease holder only, once to a 2025 client on one instance and a 2026 listen stream on another', async () => {
    const backend = new Backend();
    backend.values.set('row', 'v1');
    const members = await threeMembers(backend);
    const legacy = await connectHttp('2025', members[0]!.url, cleanup);
    const modern = await connectHttp('2026', members[2]!.url, cleanup);
    const legacyEvents = new Recorder(legacy.client);
    const modernEvents = new Recorder(modern.client);
    // The 2026 stream asks for list changes; a 2025 session hears them once initialized. A watch on
    // the row makes an instance contend for the source's lease (and its change is the marker below).
    await watchUris(modern.client, '2026', [`${MEM_ROOT}row`], true);
    await watchUris(legacy.client, '2025', [`${MEM_ROOT}row`]);
    await waitFor(
      () => [...backend.listWatching.values()].filter((n) => n > 0).length === 1,
      'one instance to listen for list changes',
    );
    await waitFor(
      () => backend.pollers().length === 1 && backend.watches() === 1,
      'one instance to poll the row',
    );
    backend.values.set('added', 'v1');
    await waitFor(
      () => legacyEvents.listChanges() >= 1 && modernEvents.listChanges() >= 1,
      'both clients to hear the list change',
      DELIVERY_MS,
    );
    // A second copy of that list_changed sent on the same stream would arrive before this update.
    await afterMarker([legacyEvents, modernEvents], `${MEM_ROOT}row`, () =>
      backend.values.set('row', 'v2'),
    );
    expect(legacyEvents.listChanges()).toBe(1);
    expect(modernEvents.listChanges()).toBe(1);
    expect([...backend.listWatching.values()].filter((n) => n > 0)).toHaveLength(1);
  });
});
