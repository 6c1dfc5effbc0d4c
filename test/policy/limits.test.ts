// Pins the concurrency limits: request and listen-stream caps are per principal and give their
// slots back exactly once.
import { describe, expect, it } from 'vitest';
import { ConfigError, ReservoirError } from '../../src/core/errors.js';
import type { Principal } from '../../src/core/principal.js';
import { createConcurrencyLimiter } from '../../src/policy/limits.js';

const alice: Principal = { id: 'alice', kind: 'token', scopes: [] };
const bob: Principal = { id: 'bob', kind: 'token', scopes: [] };

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
    expect((error as ReservoirError).data).toEqual({
      limit: 2,
      kind: 'concurrent_requests',
      active: 2,
    });
    expect((error as ReservoirError).message).toMatch(
      /at most 2 per principal; wait for one to finish/,
    );
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
    expect(() => limiter.acquire(alice, 'listen')).toThrow(
      /Too many concurrent open notification streams \(subscriptions\/listen, 2025-era GET\): at most 2 per principal; close one first/,
    );
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
    expect(() => createConcurrencyLimiter({ perPrincipal: 0 })).toThrow(
      /concurrency\.perPrincipal/,
    );
  });
});
