// Issue 6, item 7: limits through the integrated server and the real SDK client. Rate limits are per
// principal (one client hammering past its budget is refused with -32013 and retryAfterMs while
// another's requests all succeed — counted, never timed); the bytes budget refuses the request
// after a large read; a provider that never answers is cut off at the deadline (-32012) and sees
// its signal aborted; the concurrency cap refuses requests over it at once; the listen-stream cap
// holds a slot per open subscriptions/listen stream and gives it back when the stream ends.
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallContext, Provider, ReadResult } from '../../src/core/types.js';
import { createAuthenticator } from '../../src/http/auth.js';
import type { HttpEndpoint } from '../../src/http/app.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { createReservoir, type Reservoir, type ReservoirOptions } from '../../src/server/index.js';
import { dirUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { closeClient, connectWithToken, errorCode, makeToken, settle, waitFor } from './harness.js';

const alice = makeToken('alice', []);
const bob = makeToken('bob', []);

let root: string;
const started: Reservoir[] = [];

async function serve(
  options: ReservoirOptions,
): Promise<{ reservoir: Reservoir; endpoint: HttpEndpoint }> {
  const reservoir = createReservoir(options);
  started.push(reservoir);
  const endpoint = await reservoir.listen({
    host: '127.0.0.1',
    port: 0,
    auth: createAuthenticator({
      tokens: [alice, bob].map(({ name, sha256, scopes }) => ({ name, sha256, scopes })),
    }),
  });
  return { reservoir, endpoint };
}

function errorData(error: unknown): Record<string, unknown> {
  return ((error as { data?: unknown }).data ?? {}) as Record<string, unknown>;
}

/** A provider whose reads wait: forever (honouring the signal), or until the test opens the gate. */
class WaitingProvider implements Provider {
  readonly name = 'waiting';
  readonly root = 'wait://here/';
  started = 0;
  aborted = 0;
  private open: (() => void)[] = [];

  async list(): Promise<{ items: [] }> {
    return { items: [] };
  }

  read(uri: string, ctx: CallContext): Promise<ReadResult> {
    this.started += 1;
    return new Promise<ReadResult>((resolve, reject) => {
      const done = (): void =>
        resolve({ contents: [{ uri, mimeType: 'text/plain', text: 'done' }] });
      if (uri.endsWith('/gate')) this.open.push(done);
      const onAbort = (): void => {
        this.aborted += 1;
        reject(ctx.signal.reason);
      };
      if (ctx.signal.aborted) onAbort();
      else ctx.signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  release(): void {
    for (const done of this.open.splice(0)) done();
  }
}

beforeAll(() => {
  root = makeTempDir('reservoir-limits-');
  writeTree(root, { 'a.md': 'alpha\n', 'big.txt': 'x'.repeat(5000) });
});

afterAll(async () => {
  await Promise.allSettled(started.map((r) => r.close()));
  removeTree(root);
});

describe('rate limits', () => {
  it('refuse one principal hammering past its budget while another is served in full', async () => {
    const { endpoint } = await serve({
      providers: [filesProvider({ root })],
      // a window of 10 s (burst / perSecond): the hammering, however slow the machine, ends in it
      policy: { rateLimit: { requests: { perSecond: 1, burst: 10 } } },
    });
    const hammer = await connectWithToken('2026', endpoint.url, alice.token);
    const calm = await connectWithToken('2025', endpoint.url, bob.token);
    try {
      const uri = `${dirUri(root)}a.md`;
      const hammering = Promise.all(
        Array.from({ length: 60 }, () => settle(hammer.readResource({ uri }))),
      );
      const calmRuns: Awaited<ReturnType<typeof settle>>[] = [];
      for (let i = 0; i < 6; i += 1) calmRuns.push(await settle(calm.readResource({ uri })));
      const hammered = await hammering;

      const refused = hammered.filter((r) => !r.ok);
      const served = hammered.filter((r) => r.ok);
      // At most a burst and what refills while the hammering lasts; most are refused.
      expect(served.length).toBeGreaterThanOrEqual(1);
      expect(served.length).toBeLessThan(30);
      expect(refused.length).toBeGreaterThan(30);
      for (const r of refused) {
        if (r.ok) continue;
        expect(errorCode(r.error)).toBe(-32013);
        const data = errorData(r.error);
        expect(data).toMatchObject({ code: 'limit_exceeded', kind: 'requests', limit: 1 });
        expect(data['retryAfterMs']).toBeTypeOf('number');
        expect(data['retryAfterMs'] as number).toBeGreaterThan(0);
        expect(String((r.error as Error).message)).toMatch(/retry in/);
      }
      // The other principal: every request served.
      expect(calmRuns.filter((r) => r.ok)).toHaveLength(6);
    } finally {
      await closeClient(hammer);
      await closeClient(calm);
    }
  });

  it('charge bytes after a read and refuse the next request while in debt', async () => {
    const { endpoint } = await serve({
      providers: [filesProvider({ root })],
      policy: { rateLimit: { bytes: { perSecond: 1000, burst: 1000 } } },
    });
    const reader = await connectWithToken('2026', endpoint.url, alice.token);
    const other = await connectWithToken('2026', endpoint.url, bob.token);
    try {
      const big = `${dirUri(root)}big.txt`;
      // The read itself is served (its size was not known before); the debt refuses what follows.
      expect((await reader.readResource({ uri: big })).contents[0]).toMatchObject({
        text: 'x'.repeat(5000),
      });
      const next = await settle(reader.readResource({ uri: `${dirUri(root)}a.md` }));
      expect(next.ok).toBe(false);
      if (!next.ok) {
        expect(errorCode(next.error)).toBe(-32013);
        expect(errorData(next.error)).toMatchObject({
          code: 'limit_exceeded',
          kind: 'bytes',
          limit: 1000,
        });
        expect(errorData(next.error)['retryAfterMs'] as number).toBeGreaterThan(1000);
      }
      // Another principal's budget is its own.
      expect((await other.readResource({ uri: `${dirUri(root)}a.md` })).contents[0]).toMatchObject({
        text: 'alpha\n',
      });
    } finally {
      await closeClient(reader);
      await closeClient(other);
    }
  });
});

describe('deadlines', () => {
  it.each(['2025', '2026'] as const)(
    'cut off a provider that never answers, and abort its signal (%s era)',
    async (era) => {
      const waiting = new WaitingProvider();
      const { endpoint } = await serve({ providers: [waiting], policy: { deadlineMs: 300 } });
      const client = await connectWithToken(era, endpoint.url, alice.token);
      try {
        // The provider never answers: the server's timeout error naming 300 ms is the deadline firing.
        const outcome = await settle(client.readResource({ uri: 'wait://here/forever' }));
        expect(outcome.ok).toBe(false);
        if (!outcome.ok) {
          expect(errorCode(outcome.error)).toBe(-32012);
          expect(errorData(outcome.error)).toMatchObject({ code: 'timeout', limitMs: 300 });
        }
        await waitFor(() => waiting.aborted === 1, 'the provider to see its signal aborted');
      } finally {
        await closeClient(client);
      }
    },
  );
});

describe('concurrency caps', () => {
  let reservoir: Reservoir;
  let endpoint: HttpEndpoint;
  const waiting = new WaitingProvider();

  beforeAll(async () => {
    ({ reservoir, endpoint } = await serve({
      providers: [waiting, filesProvider({ root })],
      policy: { concurrency: { perPrincipal: 2, maxListenStreamsPerPrincipal: 2 } },
    }));
  });

  it('refuse requests over the per-principal cap at once, and not another principal', async () => {
    const client = await connectWithToken('2026', endpoint.url, alice.token);
    const other = await connectWithToken('2026', endpoint.url, bob.token);
    try {
      const held = [
        client.readResource({ uri: 'wait://here/gate' }),
        client.readResource({ uri: 'wait://here/gate' }),
      ];
      await waitFor(() => waiting.started === 2, 'two reads in flight');
      for (let i = 0; i < 3; i += 1) {
        const over = await settle(client.readResource({ uri: `${dirUri(root)}a.md` }));
        expect(over.ok).toBe(false);
        if (!over.ok) {
          expect(errorCode(over.error)).toBe(-32013);
          expect(errorData(over.error)).toMatchObject({
            code: 'limit_exceeded',
            kind: 'concurrent_requests',
            limit: 2,
            active: 2,
          });
        }
      }
      expect((await other.readResource({ uri: `${dirUri(root)}a.md` })).contents[0]).toMatchObject({
        text: 'alpha\n',
      });
      waiting.release();
      await Promise.all(held);
      // Slots given back: the principal is served again.
      expect((await client.readResource({ uri: `${dirUri(root)}a.md` })).contents[0]).toMatchObject(
        { text: 'alpha\n' },
      );
      await waitFor(
        () => reservoir.policy.concurrency!.stats().request === 0,
        'every request slot released',
      );
    } finally {
      waiting.release();
      await closeClient(client);
      await closeClient(other);
    }
  });

  it('hold one slot per open listen stream, refuse one over the cap, and give it back when a stream ends', async () => {
    const client = await connectWithToken('2026', endpoint.url, alice.token);
    const other = await connectWithToken('2026', endpoint.url, bob.token);
    const uri = `${dirUri(root)}a.md`;
    const open: Awaited<ReturnType<Client['listen']>>[] = [];
    try {
      open.push(await client.listen({ resourceSubscriptions: [uri] }));
      open.push(await client.listen({ resourceSubscriptions: [uri] }));
      expect(reservoir.policy.concurrency!.stats().listen).toBe(2);
      const third = await settle(client.listen({ resourceSubscriptions: [uri] }));
      expect(third.ok).toBe(false);
      if (!third.ok) {
        expect(errorCode(third.error)).toBe(-32013);
        expect(errorData(third.error)).toMatchObject({
          code: 'limit_exceeded',
          kind: 'listen_streams',
          limit: 2,
        });
      } else open.push(third.value);
      // Another principal has slots of its own.
      open.push(await other.listen({ resourceSubscriptions: [uri] }));
      // Closing a stream gives its slot back (once the server has seen the stream end).
      await open.shift()!.close();
      await waitFor(
        () => reservoir.policy.concurrency!.stats().listen === 2,
        'the closed stream to release its slot',
      );
      open.push(await client.listen({ resourceSubscriptions: [uri] }));
    } finally {
      await Promise.allSettled(open.map((s) => s.close()));
      await closeClient(client);
      await closeClient(other);
    }
    await waitFor(
      () => reservoir.policy.concurrency!.stats().listen === 0,
      'every listen slot released',
    );
  });
});
