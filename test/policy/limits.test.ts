// Pins the time and concurrency limits: a deadline aborts the work's own signal (seen by a fake
// provider) and rejects at once with the limit, a caller's abort cancels it too, and the timer and
// the listener on the caller's signal are gone on every path; request and listen-stream caps are
// per principal and give their slots back exactly once.
import { getEventListeners } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigError, ReservoirError } from '../../src/core/errors.js';
import type { Principal } from '../../src/core/principal.js';
import { createConcurrencyLimiter, withDeadline } from '../../src/policy/limits.js';

const alice: Principal = { id: 'alice', kind: 'token', scopes: [] };
const bob: Principal = { id: 'bob', kind: 'token', scopes: [] };

/** A provider call that runs until its signal aborts, recording what it saw. */
function abortableWork(): { seen: { aborted?: boolean; reason?: unknown }; fn: (signal: AbortSignal) => Promise<string> } {
  const seen: { aborted?: boolean; reason?: unknown } = {};
  const fn = (signal: AbortSignal): Promise<string> =>
    new Promise<string>((_resolve, reject) => {
      signal.addEventListener('abort', () => {
        seen.aborted = signal.aborted;
        seen.reason = signal.reason;
        reject(signal.reason);
      });
    });
  return { seen, fn };
}

async function rejection(promise: Promise<unknown>): Promise<ReservoirError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ReservoirError);
  return error as ReservoirError;
}

describe('withDeadline', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('aborts the work through its signal at the deadline and rejects with the limit', async () => {
    const parent = new AbortController();
    const work = abortableWork();
    const result = rejection(withDeadline(250, parent.signal, work.fn));
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(249);
    expect(work.seen.aborted).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    const error = await result;
    expect(error.code).toBe('timeout');
    expect(error.data).toEqual({ limitMs: 250 });
    expect(error.message).toMatch(/timed out after 250 ms/);
    expect(work.seen).toEqual({ aborted: true, reason: error });
    expect(vi.getTimerCount()).toBe(0);
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
  });

  it('rejects at the deadline even when the work ignores its signal', async () => {
    let signal: AbortSignal | undefined;
    const result = rejection(
      withDeadline(100, undefined, (s) => {
        signal = s;
        return new Promise<never>(() => undefined);
      }),
    );
    await vi.advanceTimersByTimeAsync(100);
    expect((await result).data).toEqual({ limitMs: 100 });
    expect(signal?.aborted).toBe(true);
  });

  it('returns the result and clears its timer and listener when the work finishes in time', async () => {
    const parent = new AbortController();
    let inner: AbortSignal | undefined;
    const value = await withDeadline(1000, parent.signal, async (signal) => {
      inner = signal;
      return 'done';
    });
    expect(value).toBe('done');
    expect(inner?.aborted).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
  });

  it('passes the work’s own failure through and cleans up', async () => {
    const parent = new AbortController();
    await expect(withDeadline(1000, parent.signal, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(
      withDeadline(1000, parent.signal, () => {
        throw new Error('sync boom');
      }),
    ).rejects.toThrow('sync boom');
    expect(vi.getTimerCount()).toBe(0);
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
  });

  it('aborts the work when the caller aborts first, and cleans up', async () => {
    const parent = new AbortController();
    const work = abortableWork();
    const result = rejection(withDeadline(1000, parent.signal, work.fn));
    parent.abort(new Error('client went away'));
    const error = await result;
    expect(error.code).toBe('timeout');
    expect(error.data).toEqual({ limitMs: 1000, cancelled: true });
    expect((error.cause as Error).message).toBe('client went away');
    expect(work.seen.aborted).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('never starts the work when the caller already aborted', async () => {
    const fn = vi.fn(async () => 'never');
    const error = await rejection(withDeadline(1000, AbortSignal.abort(), fn));
    expect(error.data.cancelled).toBe(true);
    expect(fn).not.toHaveBeenCalled();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('refuses a deadline that is not a positive number', async () => {
    await expect(withDeadline(0, undefined, async () => 1)).rejects.toThrow(RangeError);
  });
});

describe('createConcurrencyLimiter', () => {
  it('caps requests in flight per principal and frees a slot on release', () => {
    const limiter = createConcurrencyLimiter({ perPrincipal: 2 });
    const first = limiter.acquire(alice, 'request');
    limiter.acquire(alice, 'request');
    let error: unknown;
    try {
      limiter.acquire(alice, 'request');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ReservoirError);
    expect((error as ReservoirError).code).toBe('limit_exceeded');
    expect((error as ReservoirError).data).toEqual({ limit: 2, kind: 'concurrent_requests', active: 2 });
    expect((error as ReservoirError).message).toMatch(/at most 2 per principal; wait for one to finish/);
    // Another principal is not affected.
    limiter.acquire(bob, 'request');
    limiter.acquire(bob, 'request');
    first();
    limiter.acquire(alice, 'request');
    expect(limiter.stats()).toEqual({ principals: 2, request: 4, listen: 0 });
  });

  it('counts listen streams apart from requests, with their own cap', () => {
    const limiter = createConcurrencyLimiter({ perPrincipal: 1, maxListenStreamsPerPrincipal: 2 });
    const request = limiter.acquire(alice, 'request');
    const streams = [limiter.acquire(alice, 'listen'), limiter.acquire(alice, 'listen')];
    expect(() => limiter.acquire(alice, 'listen')).toThrow(/Too many concurrent open subscriptions\/listen streams: at most 2 per principal; close one first/);
    request();
    for (const release of streams) release();
    expect(limiter.stats()).toEqual({ principals: 0, request: 0, listen: 0 });
  });

  it('ignores a second release of the same slot', () => {
    const limiter = createConcurrencyLimiter({ perPrincipal: 2 });
    const release = limiter.acquire(alice, 'request');
    limiter.acquire(alice, 'request');
    release();
    release();
    expect(limiter.stats().request).toBe(1);
    limiter.acquire(alice, 'request');
    expect(() => limiter.acquire(alice, 'request')).toThrow(ReservoirError);
  });

  it('has defaults and checks its options when built', () => {
    const limiter = createConcurrencyLimiter();
    for (let i = 0; i < 16; i += 1) limiter.acquire(alice, 'request');
    expect(() => limiter.acquire(alice, 'request')).toThrow(ReservoirError);
    expect(() => createConcurrencyLimiter({ perPrincipal: 0 })).toThrow(ConfigError);
    expect(() => createConcurrencyLimiter({ perPrincipal: 0 })).toThrow(/concurrency\.perPrincipal/);
  });
});
