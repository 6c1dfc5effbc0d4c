// Pins per-principal rate limits: bursts and the retry delay, one principal hammering while another
// is unaffected (counted, not timed), bytes charged after a read putting the budget in debt so the
// NEXT request waits, idle budgets expiring, and options checked when the limiter is built.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigError, ReservoirError } from '../../src/core/errors.js';
import type { Principal } from '../../src/core/principal.js';
import { createRateLimiter } from '../../src/policy/rate-limit.js';

const alice: Principal = { id: 'alice', kind: 'token', scopes: [] };
const bob: Principal = { id: 'bob', kind: 'token', scopes: [] };

async function refusal(promise: Promise<unknown>): Promise<ReservoirError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ReservoirError);
  expect((error as ReservoirError).code).toBe('limit_exceeded');
  return error as ReservoirError;
}

async function takeMany(
  count: number,
  take: () => Promise<void>,
): Promise<{ ok: number; refused: number }> {
  const results = await Promise.allSettled(Array.from({ length: count }, take));
  return {
    ok: results.filter((r) => r.status === 'fulfilled').length,
    refused: results.filter((r) => r.status === 'rejected').length,
  };
}

describe('createRateLimiter', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z') });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('allows a burst, then refuses with the time to wait until the window ends', async () => {
    const limiter = createRateLimiter({ requests: { perSecond: 10, burst: 20 } });
    expect(await takeMany(20, () => limiter.take(alice))).toEqual({ ok: 20, refused: 0 });
    const error = await refusal(limiter.take(alice));
    expect(error.data).toEqual({ limit: 10, kind: 'requests', retryAfterMs: 2000 });
    expect(error.message).toMatch(/at most 10 requests per second \(burst 20\); retry in 2\.0 s/);

    vi.advanceTimersByTime(1500);
    expect((await refusal(limiter.take(alice))).data.retryAfterMs).toBe(500);
    expect(await refusal(limiter.take(alice))).toHaveProperty(
      'message',
      expect.stringContaining('retry in 500 ms'),
    );
    vi.advanceTimersByTime(500);
    expect(await takeMany(25, () => limiter.take(alice))).toEqual({ ok: 20, refused: 5 });
  });

  it('defaults the burst to the per-second rate', async () => {
    const limiter = createRateLimiter({ requests: { perSecond: 3 } });
    expect(await takeMany(5, () => limiter.take(alice))).toEqual({ ok: 3, refused: 2 });
  });

  it('gives each principal its own budget: one hammering leaves the other untouched', async () => {
    const limiter = createRateLimiter({ requests: { perSecond: 5, burst: 10 } });
    const hammer = takeMany(1000, () => limiter.take(alice));
    const polite = takeMany(10, () => limiter.take(bob));
    expect(await hammer).toEqual({ ok: 10, refused: 990 });
    expect(await polite).toEqual({ ok: 10, refused: 0 });
    // Same id, another kind of principal: another budget.
    expect(
      await takeMany(10, () => limiter.take({ id: 'alice', kind: 'oauth', scopes: [] })),
    ).toEqual({ ok: 10, refused: 0 });
    expect(limiter.stats()).toEqual({ principals: 3, rejected: { requests: 990, bytes: 0 } });
  });

  it('charges bytes after a read without refusing it, and makes the next request wait off the debt', async () => {
    const limiter = createRateLimiter({ bytes: { perSecond: 1000, burst: 1000 } });
    await limiter.take(alice);
    await limiter.take(alice, { bytes: 5000 }); // the read already happened: never refused
    const error = await refusal(limiter.take(alice));
    // 1 s left in the window, plus 4000 bytes of debt at 1000 bytes per second.
    expect(error.data).toEqual({ limit: 1000, kind: 'bytes', retryAfterMs: 5000 });
    expect(error.message).toMatch(/at most 1000 bytes read per second/);
    await limiter.take(bob);

    vi.advanceTimersByTime(4999);
    expect((await refusal(limiter.take(alice))).data.retryAfterMs).toBe(1);
    vi.advanceTimersByTime(1);
    await limiter.take(alice);
    expect(limiter.stats().rejected).toEqual({ requests: 0, bytes: 2 });
  });

  it('lets reads within the bytes budget through and lengthens the window only by new debt', async () => {
    const limiter = createRateLimiter({ bytes: { perSecond: 100, burst: 200 } });
    await limiter.take(alice, { bytes: 150 });
    await limiter.take(alice);
    await limiter.take(alice, { bytes: 100 }); // 50 over: +0.5 s on the 2 s window
    expect((await refusal(limiter.take(alice))).data.retryAfterMs).toBe(2500);
    await limiter.take(alice, { bytes: 100 }); // 100 more: +1 s
    expect((await refusal(limiter.take(alice))).data.retryAfterMs).toBe(3500);
  });

  it('checks requests and bytes together', async () => {
    const limiter = createRateLimiter({ requests: { perSecond: 2 }, bytes: { perSecond: 10 } });
    await limiter.take(alice, { requests: 1, bytes: 50 });
    expect((await refusal(limiter.take(alice))).data.kind).toBe('bytes');
    await limiter.take(bob, { requests: 2 });
    expect((await refusal(limiter.take(bob))).data.kind).toBe('requests');
  });

  it('lets idle budgets expire, so memory follows the active principals', async () => {
    const limiter = createRateLimiter({
      requests: { perSecond: 10, burst: 10 },
      bytes: { perSecond: 100 },
    });
    for (let i = 0; i < 50; i += 1)
      await limiter.take({ id: `p${i}`, kind: 'token', scopes: [] }, { requests: 1, bytes: 10 });
    expect(limiter.stats().principals).toBe(50);
    vi.advanceTimersByTime(1000);
    expect(limiter.stats().principals).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('rejects amounts that are not whole numbers', async () => {
    const limiter = createRateLimiter({ requests: { perSecond: 1 } });
    await expect(limiter.take(alice, { requests: 1.5 })).rejects.toThrow(RangeError);
    await expect(limiter.take(alice, { bytes: -1 })).rejects.toThrow(RangeError);
  });

  it('checks its options when built', () => {
    expect(() => createRateLimiter({ requests: { perSecond: 0 } })).toThrow(ConfigError);
    expect(() => createRateLimiter({ requests: { perSecond: 0 } })).toThrow(
      /rateLimit\.requests\.perSecond/,
    );
    expect(() => createRateLimiter({ bytes: { perSecond: 10, burst: 0.5 } })).toThrow(
      /rateLimit\.bytes\.burst/,
    );
    expect(() => createRateLimiter({ requests: { perSecond: 1, brust: 2 } } as never)).toThrow(
      ConfigError,
    );
    expect(() => createRateLimiter({})).not.toThrow();
  });
});
