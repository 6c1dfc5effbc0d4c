// What cluster members put in Redis is sealed with the shared secret, and what anyone else writes
// there is dropped: a bus message without a seal, with another secret's, or sealed for another
// channel delivers nothing; a session record tampered with, moved to another session's key or
// over its bounds is not adopted (the session is answered as not found, so the client starts
// anew); a forged lease — no seal, any Redis expiry, a claim far ahead, a silent holder — silences
// its source no longer than one lease period. Members on the machine's Redis, each test under its
// own key prefix; a plain ioredis client plays the intruder.
import { createRequire } from 'node:module';
import type * as IORedis from 'ioredis';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { BUS_MESSAGE_TTL_MS } from '../../src/cluster/bus.js';
import { Seal } from '../../src/cluster/seal.js';
import { Cleanup, connectHttp, newClient } from '../helpers/clients.js';
import { Recorder, waitFor, watchUris } from '../subscriptions/harness.js';
import {
  Backend,
  FAST_LEASES,
  MEM_ROOT,
  REDIS_URL,
  SECRET,
  sessionStatus,
  startMember,
  uniquePrefix,
  type Member,
} from './harness.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const OTHER_SECRET = 'another-service-secret-0123456789abcdef0123';

function intruder(): IORedis.Redis {
  const { Redis } = createRequire(import.meta.url)('ioredis') as typeof IORedis;
  const redis = new Redis(REDIS_URL!);
  cleanup.add(() => void redis.disconnect());
  return redis;
}

async function member(name: string, prefix: string, backend: Backend): Promise<Member> {
  const started = await startMember(name, prefix, backend);
  cleanup.add(() => started.close());
  return started;
}

/** Opens a 2025-era session on `url` with the SDK client; its id. */
async function openSession(url: string): Promise<string> {
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const client = newClient('2025');
  cleanup.add(() => client.close());
  await client.connect(transport);
  return transport.sessionId!;
}

describe.skipIf(REDIS_URL === undefined)(
  'cluster mode trusts only what is sealed with the shared secret',
  () => {
    it("drops bus messages without a seal, with another secret's or sealed for another channel, and delivers the genuine one once", async () => {
      const backend = new Backend();
      backend.values.set('row', 'v1');
      const prefix = uniquePrefix();
      const a = await member('A', prefix, backend);
      const uri = `${MEM_ROOT}row`;
      const connection = await connectHttp('2026', a.url, cleanup);
      const events = new Recorder(connection.client);
      await watchUris(connection.client, '2026', [uri]);
      const channel = `${prefix}bus`;
      const message = { t: 'updated', uri, root: MEM_ROOT, f: 1 };
      const expiry = Date.now() + BUS_MESSAGE_TTL_MS;
      const redis = intruder();
      const forged = [
        JSON.stringify(message),
        new Seal(OTHER_SECRET).seal(`bus:${channel}`, message, expiry),
        new Seal(SECRET).seal(`bus:${prefix}elsewhere`, message, expiry),
        new Seal(SECRET).seal(`bus:${channel}`, message, Date.now() - 1),
        new Seal(SECRET).seal(`bus:${channel}`, { ...message, t: 'unknown' }, expiry),
        // sealed, but of no shape a member sends: an edit count that is not a whole number ≥ 0
        ...[-1, 1.5, '3', 2 ** 53].map((v) =>
          new Seal(SECRET).seal(
            `bus:${channel}`,
            { t: 'session', id: 'some-session', a: 'sync', from: 'B', v },
            expiry,
          ),
        ),
      ];
      for (const text of forged) await redis.publish(channel, text);
      // Pub/sub keeps order: once the genuine message is heard, every forged one was heard before it.
      await redis.publish(channel, new Seal(SECRET).seal(`bus:${channel}`, message, expiry));
      await waitFor(() => events.updates(uri) >= 1, 'the genuine message to be delivered');
      expect(events.updates(uri)).toBe(1);
      expect(a.reservoir.cluster!.bus.drops.total).toBe(forged.length);
      expect(a.logger.count('warn', /^dropped cluster bus messages that did not verify/)).toBe(1);
    });

    it("does not adopt a session record that was tampered with or moved to another session's key, and adopts an intact one", async () => {
      const backend = new Backend();
      backend.values.set('row', 'v1');
      const prefix = uniquePrefix();
      const a = await member('A', prefix, backend);
      const b = await member('B', prefix, backend);
      const c = await member('C', prefix, backend);
      const redis = intruder();
      const [intact, tampered, moved] = [
        await openSession(a.url),
        await openSession(a.url),
        await openSession(a.url),
      ];
      const record = (id: string): Promise<string | null> => redis.get(`${prefix}session:${id}`);
      // Change one character of the payload (the subscriptions), keeping the seal as it was.
      const original = (await record(tampered))!;
      await redis.set(
        `${prefix}session:${tampered}`,
        original.replace('"subscriptions":[]', '"subscriptions":["mem://data/row"]'),
        'PX',
        60_000,
      );
      // A valid record of one session under another's key.
      await redis.set(`${prefix}session:${moved}`, (await record(intact))!, 'PX', 60_000);
      expect(await sessionStatus(b.url, tampered)).toBe(404);
      expect(await sessionStatus(b.url, moved)).toBe(404);
      expect(await sessionStatus(c.url, intact)).toBe(200);
      expect(b.logger.count('warn', /^dropped 2025-era session records that did not verify/)).toBe(
        1,
      );
    });

    it('refuses a session record over its bounds even when it is sealed with the secret, and the client can start anew', async () => {
      const backend = new Backend();
      backend.values.set('row', 'v1');
      const prefix = uniquePrefix();
      const a = await member('A', prefix, backend);
      const b = await member('B', prefix, backend);
      const redis = intruder();
      const id = await openSession(a.url);
      const key = `${prefix}session:${id}`;
      const seal = new Seal(SECRET);
      const opened = seal.open(`session:${key}`, (await redis.get(key))!);
      if (!opened.ok) throw new Error(`the member's own record did not verify: ${opened.reason}`);
      const record = opened.payload as { subscriptions: string[] };
      const huge = {
        ...record,
        subscriptions: Array.from({ length: 10_001 }, (_, i) => `mem://data/r${i}`),
      };
      await redis.set(key, seal.seal(`session:${key}`, huge), 'PX', 60_000);
      expect(await sessionStatus(b.url, id)).toBe(404);
      const long = { ...record, owner: 'x'.repeat(5_000) };
      await redis.set(key, seal.seal(`session:${key}`, long), 'PX', 60_000);
      expect(await sessionStatus(b.url, id)).toBe(404);
      expect(
        b.logger.entries.some(
          (e) => e.level === 'warn' && JSON.stringify(e.fields).includes('too_many_subscriptions'),
        ),
      ).toBe(true);
      // A new session works as before.
      expect(await sessionStatus(b.url, await openSession(b.url))).toBe(200);
    });

    for (const [forgery, write] of [
      [
        'an unsealed lease with no expiry',
        (redis: IORedis.Redis, key: string) => redis.set(key, 'ghost\nnot-a-seal'),
      ],
      [
        'a lease sealed with another secret, kept for an hour',
        (redis: IORedis.Redis, key: string, tag: string) =>
          redis.set(
            key,
            `ghost\n${new Seal(OTHER_SECRET).seal(tag, 'ghost', Date.now() + FAST_LEASES.leaseMs!)}`,
            'PX',
            3_600_000,
          ),
      ],
      [
        'a sealed lease claiming an hour ahead',
        (redis: IORedis.Redis, key: string, tag: string) =>
          redis.set(
            key,
            `ghost\n${new Seal(SECRET).seal(tag, 'ghost', Date.now() + 3_600_000)}`,
            'PX',
            3_600_000,
          ),
      ],
      [
        'a sealed lease of a silent holder, kept by Redis for an hour',
        (redis: IORedis.Redis, key: string, tag: string) =>
          redis.set(
            key,
            `ghost\n${new Seal(SECRET).seal(tag, 'ghost', Date.now() + FAST_LEASES.leaseMs!)}`,
            'PX',
            3_600_000,
          ),
      ],
    ] as const) {
      it(`takes a source over from ${forgery} within one lease period, and delivers its changes`, async () => {
        const backend = new Backend();
        backend.values.set('row', 'v1');
        const prefix = uniquePrefix();
        const redis = intruder();
        const leaseKey = `lease:${MEM_ROOT}`;
        await write(redis, `${prefix}${leaseKey}`, `lease:${prefix}${leaseKey}`);
        const a = await member('A', prefix, backend);
        const uri = `${MEM_ROOT}row`;
        const connection = await connectHttp('2025', a.url, cleanup);
        const events = new Recorder(connection.client);
        await watchUris(connection.client, '2025', [uri]);
        // One lease period (1 s here) plus a tick, with a generous cap for a loaded machine.
        await waitFor(
          () => backend.pollers().length === 1,
          'the member to take the source over',
          10_000,
        );
        expect((await redis.get(`${prefix}${leaseKey}`))?.startsWith('A\n')).toBe(true);
        backend.values.set('row', 'v2');
        await waitFor(() => events.updates(uri) >= 1, 'the change to be delivered');
      });
    }
  },
);
