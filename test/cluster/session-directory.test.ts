// The session directory on the machine's Redis, driven directly by two members: edits of one
// session's subscriptions made at once, and an edit waiting for the member holding the GET stream.
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createCluster } from '../../src/cluster/index.js';
import { edited, recordProblem, SESSION_RECORD_LIMITS } from '../../src/cluster/sessions.js';
import type { SessionDirectory, SessionRecord } from '../../src/http/session-directory.js';
import { Cleanup } from '../helpers/clients.js';
import { eventually } from '../helpers/eventually.js';
import { MemoryLogger } from '../subscriptions/harness.js';
import { FAST_LEASES, REDIS_URL, SECRET, uniquePrefix } from './harness.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const IDLE_MS = 60_000;

async function twoMembers(): Promise<[SessionDirectory, SessionDirectory]> {
  const prefix = uniquePrefix();
  const directories: SessionDirectory[] = [];
  for (const instance of ['X', 'Y']) {
    const cluster = createCluster({
      url: REDIS_URL!,
      keyPrefix: prefix,
      secret: SECRET,
      instance,
      leases: FAST_LEASES,
      logger: new MemoryLogger(),
    });
    cleanup.add(() => cluster.close());
    await cluster.ready();
    directories.push(cluster.sessions(IDLE_MS));
  }
  return [directories[0]!, directories[1]!];
}

async function opened(directory: SessionDirectory): Promise<{ id: string; record: SessionRecord }> {
  const id = randomUUID();
  const record: SessionRecord = {
    owner: 'anonymous:t',
    quota: `anonymous@${id}`,
    init: { protocolVersion: '2025-11-25' },
    subscriptions: [],
  };
  await directory.created(id, record);
  return { id, record };
}

const uri = (n: number): string => `mem://data/k${String(n).padStart(2, '0')}`;

describe.skipIf(REDIS_URL === undefined)('2025-era session directory on Redis', () => {
  it('keeps every edit when two members edit one session at the same time, each counted in its version', async () => {
    const [x, y] = await twoMembers();
    const { id } = await opened(x);
    const adds = Array.from({ length: 24 }, (_, n) =>
      (n % 2 === 0 ? x : y).changed(id, { add: [uri(n)], remove: [] }),
    );
    await Promise.all(adds);
    const after = await y.find(id);
    expect(after?.subscriptions).toEqual(Array.from({ length: 24 }, (_, n) => uri(n)));
    expect(after?.version).toBe(24);
    const removes = Array.from({ length: 12 }, (_, n) =>
      (n % 2 === 0 ? y : x).changed(id, { add: [], remove: [uri(2 * n)] }),
    );
    await Promise.all(removes);
    expect((await x.find(id))?.subscriptions).toEqual(
      Array.from({ length: 12 }, (_, n) => uri(2 * n + 1)),
    );
  });

  it('answers an edit once the member holding the GET stream says it follows, and at once when no stream is open anywhere', async () => {
    const [x, y] = await twoMembers();
    const { id, record } = await opened(x);
    const heard: string[] = [];
    cleanup.add(
      y.listen((session, action, version) => session === id && heard.push(`${action} ${version}`)),
    );
    y.streaming(id, record.quota, Date.now() + IDLE_MS);
    await eventually(async () => (await x.oldest(record.quota)) === undefined, 'the stream mark');
    let answered = false;
    const editing = x
      .changed(id, { add: [uri(1)], remove: [] }, 120_000)
      .finally(() => (answered = true));
    // the word names the edit count the record reached, so a copy already there need not read it
    await eventually(() => heard.includes('sync 1'), 'Y to hear of the edit');
    // Nobody has said it follows: the edit is not answered (it would wait up to 120 s).
    expect(answered).toBe(false);
    y.synced(id, 1);
    expect(await editing).toMatchObject({ subscriptions: [uri(1)], version: 1 });

    // The stream closed: an edit no longer waits for anyone (else past the test's timeout).
    y.streaming(id, record.quota, undefined);
    await eventually(async () => (await x.oldest(record.quota)) === id, 'the mark to go');
    expect(await x.changed(id, { add: [uri(2)], remove: [uri(1)] }, 120_000)).toMatchObject({
      subscriptions: [uri(2)],
      version: 2,
    });
  });

  it('gives up waiting for a member that never says it follows, and still answers with the edit', async () => {
    const [x] = await twoMembers();
    const { id, record } = await opened(x);
    x.streaming(id, record.quota, Date.now() + IDLE_MS);
    await eventually(async () => (await x.oldest(record.quota)) === undefined, 'the stream mark');
    expect(await x.changed(id, { add: [uri(1)], remove: [] }, 200)).toMatchObject({
      subscriptions: [uri(1)],
    });
  });

  it('edits nothing of a session that ended or never was', async () => {
    const [x, y] = await twoMembers();
    const { id } = await opened(x);
    await y.ended(id);
    expect(await x.changed(id, { add: [uri(1)], remove: [] })).toBeUndefined();
    expect(await x.changed(randomUUID(), { add: [uri(1)], remove: [] })).toBeUndefined();
    expect(await x.find(id)).toBeUndefined();
  });
});

describe('a session record edit', () => {
  const record: SessionRecord = {
    owner: 'anonymous:t',
    quota: 'q',
    init: {},
    subscriptions: [uri(1), uri(3)],
  };

  it('adds and removes canonical URIs, keeps them sorted and counts the edit', () => {
    expect(edited(record, { add: [uri(2), uri(1)], remove: [uri(3)] }, 10)).toEqual({
      ...record,
      subscriptions: [uri(1), uri(2)],
      version: 1,
    });
    expect(edited({ ...record, version: 7 }, { add: [], remove: [] }, 10).version).toBe(8);
  });

  it('leaves out additions past the subscription bound, so the record stays one a member adopts', () => {
    const full = edited(record, { add: [uri(4), uri(5), uri(6)], remove: [] }, 4);
    expect(full.subscriptions).toEqual([uri(1), uri(3), uri(4), uri(5)]);
    expect(recordProblem(full, { ...SESSION_RECORD_LIMITS, maxSubscriptions: 4 })).toBeUndefined();
  });

  it('is refused with a version that is not a count', () => {
    for (const version of [-1, 1.5, '3', null])
      expect(recordProblem({ ...record, version }, SESSION_RECORD_LIMITS)).toBe('malformed');
    expect(recordProblem({ ...record, version: 0 }, SESSION_RECORD_LIMITS)).toBeUndefined();
  });
});
