/**
 * Per-principal rate limits: requests per second and bytes read per second, each with a burst,
 * counted by `rate-limiter-flexible`'s in-memory limiter. Every principal has its own budgets, so
 * one noisy client never slows the others, and a budget left idle expires with its window.
 *
 * A budget is a fixed window of `burst` units lasting `burst / perSecond` seconds, started by the
 * first unit spent: at most `burst` at once, `perSecond` on average. Requests are checked before
 * they run. Bytes are charged after a read, once its size is known, and never refuse that read: a
 * large read may take the budget below zero, and the debt then lengthens the window by
 * `debt / perSecond` seconds, so it is the principal's NEXT request that waits.
 */
import { createRequire } from 'node:module';
import type * as Flexible from 'rate-limiter-flexible';
import { z } from 'zod';
import { ReservoirError } from '../core/errors.js';
import type { Principal } from '../core/principal.js';
import { parseOptions } from './options.js';

const budgetOptions = z.strictObject({
  /** Sustained rate, units per second. */
  perSecond: z.number().positive().max(Number.MAX_SAFE_INTEGER),
  /** Units that may be spent at once. @default Math.ceil(perSecond) */
  burst: z.int().min(1).optional(),
});

/** Options of {@link createRateLimiter}; a budget left out is not limited. */
export const rateLimitOptions = z.strictObject({
  /** Requests (any MCP operation) per second. */
  requests: budgetOptions.optional(),
  /** Bytes of resource content read per second. */
  bytes: budgetOptions.optional(),
});

export type RateLimitOptions = z.input<typeof rateLimitOptions>;

/**
 * Cluster mode: budgets counted in Redis, shared by every instance (rate-limiter-flexible's Redis
 * limiter), each backed by an in-memory insurance limiter that counts alone while Redis is
 * unreachable. Redis windows are whole seconds (`burst / perSecond`, rounded, at least 1).
 */
export interface RateLimitStore {
  /** An ioredis client (its `keyPrefix` applies). */
  redis: unknown;
  /** Distinguishes this limiter's keys from others on the same Redis. */
  keyPrefix: string;
  /**
   * Whether to ask Redis now; while false (Redis degraded: unreachable or hung) budgets count in the
   * insurance limiter alone, without waiting on Redis. The client's own command timeout bounds the
   * calls made before an outage is noticed (they fall back to the insurance limiter too).
   */
  available?: () => boolean;
}
export type RateLimitKind = 'requests' | 'bytes';

export interface RateLimitStats {
  /** Principals holding a live budget; idle ones expire when their window ends. */
  principals: number;
  /** Requests refused since the limiter was built, by the budget that refused them. */
  rejected: Record<RateLimitKind, number>;
}

export interface RateLimiter {
  /**
   * Spends `requests` (default 1 when no bytes are given) and charges `bytes` already read.
   * Throws ReservoirError('limit_exceeded') with `data: { limit, retryAfterMs, kind }` when the
   * request budget is spent or the bytes budget is in debt; charging bytes never throws.
   */
  take(principal: Principal, amount?: { requests?: number; bytes?: number }): Promise<void>;
  stats(): RateLimitStats;
}

/**
 * Builds a limiter; options are checked now (ConfigError on `rateLimit.<field>`).
 *
 * @example
 * const limiter = createRateLimiter({ requests: { perSecond: 10, burst: 20 }, bytes: { perSecond: 5_000_000 } });
 * await limiter.take(principal);                  // before the operation: may throw limit_exceeded
 * await limiter.take(principal, { bytes: size }); // after a read: charges, never throws
 */
export function createRateLimiter(options: RateLimitOptions, store?: RateLimitStore): RateLimiter {
  const parsed = parseOptions(rateLimitOptions, options, 'rateLimit');
  const requests =
    parsed.requests === undefined
      ? undefined
      : new Budget('requests', parsed.requests.perSecond, parsed.requests.burst, store);
  const bytes =
    parsed.bytes === undefined
      ? undefined
      : new Budget('bytes', parsed.bytes.perSecond, parsed.bytes.burst, store);
  const rejected: Record<RateLimitKind, number> = { requests: 0, bytes: 0 };
  const refuse = (error: unknown): never => {
    if (error instanceof ReservoirError && error.code === 'limit_exceeded')
      rejected[error.data.kind as RateLimitKind] += 1;
    throw error;
  };

  return {
    async take(principal, amount = {}) {
      const count = whole(amount.requests ?? (amount.bytes === undefined ? 1 : 0), 'requests');
      const read = whole(amount.bytes ?? 0, 'bytes');
      const key = `${principal.kind}:${principal.id}`;
      if (count > 0) {
        await bytes?.checkDebt(key).catch(refuse);
        await requests?.spend(key, count).catch(refuse);
      }
      if (read > 0) await bytes?.charge(key, read);
    },
    stats() {
      const now = Date.now();
      const keys = new Set<string>();
      for (const budget of [requests, bytes]) {
        for (const record of budget?.memory.dump().storage ?? []) {
          if (record.expiresAt === null || record.expiresAt > now) keys.add(String(record.key));
        }
      }
      return { principals: keys.size, rejected: { ...rejected } };
    },
  };
}

/** `rate-limiter-flexible` (CommonJS), loaded by the first limiter built: a server without rate limits never loads it. */
let flexible: typeof Flexible | undefined;
function rateLimiterFlexible(): typeof Flexible {
  flexible ??= createRequire(import.meta.url)('rate-limiter-flexible') as typeof Flexible;
  return flexible;
}

/** One kind of budget for every principal: a fixed window of `burst` units per principal. */
class Budget {
  /** The Redis limiter in cluster mode, else the in-memory one. */
  private readonly counter: Flexible.RateLimiterMemory | Flexible.RateLimiterRedis;
  private readonly available: () => boolean;
  /** The in-memory limiter: the only one, or the Redis limiter's insurance. */
  readonly memory: Flexible.RateLimiterMemory;
  readonly burst: number;

  constructor(
    readonly kind: RateLimitKind,
    readonly perSecond: number,
    burst: number | undefined,
    store?: RateLimitStore,
  ) {
    this.burst = burst ?? Math.ceil(perSecond);
    const { RateLimiterMemory, RateLimiterRedis } = rateLimiterFlexible();
    if (store === undefined) {
      this.memory = new RateLimiterMemory({
        keyPrefix: '',
        points: this.burst,
        duration: this.burst / perSecond,
      });
      this.counter = this.memory;
      this.available = () => true;
      return;
    }
    const duration = Math.max(1, Math.round(this.burst / perSecond));
    this.memory = new RateLimiterMemory({ keyPrefix: '', points: this.burst, duration });
    this.counter = new RateLimiterRedis({
      storeClient: store.redis,
      keyPrefix: `${store.keyPrefix}${kind}`,
      points: this.burst,
      duration,
      insuranceLimiter: this.memory,
    });
    this.available = store.available ?? (() => true);
  }

  /** Where this call counts: the shared counter, or its insurance alone while the store is degraded. */
  get limiter(): Flexible.RateLimiterMemory | Flexible.RateLimiterRedis {
    return this.available() ? this.counter : this.memory;
  }

  async spend(key: string, units: number): Promise<void> {
    try {
      await this.limiter.consume(key, units);
    } catch (error) {
      if (error instanceof rateLimiterFlexible().RateLimiterRes)
        throw this.exceeded(error.msBeforeNext);
      throw error;
    }
  }

  /** Refuses while a previous charge left the budget below zero. */
  async checkDebt(key: string): Promise<void> {
    const state = await this.limiter.get(key);
    if (state !== null && state.consumedPoints > this.burst)
      throw this.exceeded(state.msBeforeNext);
  }

  /** Charges units already spent; new debt lengthens the window by debt / perSecond. */
  async charge(key: string, units: number): Promise<void> {
    const state = await this.limiter.penalty(key, units);
    const debtBefore = Math.max(0, state.consumedPoints - units - this.burst);
    const debtAfter = state.consumedPoints - this.burst;
    if (debtAfter <= debtBefore) return;
    const windowMs =
      Math.max(0, state.msBeforeNext) + ((debtAfter - debtBefore) / this.perSecond) * 1000;
    await this.limiter.set(key, state.consumedPoints, windowMs / 1000);
  }

  private exceeded(msBeforeNext: number): ReservoirError {
    const retryAfterMs = Math.max(1, Math.ceil(msBeforeNext));
    const what = this.kind === 'requests' ? 'requests' : 'bytes read';
    return new ReservoirError(
      'limit_exceeded',
      `Rate limit exceeded: at most ${this.perSecond} ${what} per second (burst ${this.burst}); retry in ${formatDelay(retryAfterMs)}`,
      { data: { limit: this.perSecond, retryAfterMs, kind: this.kind } },
    );
  }
}

function whole(value: number, what: string): number {
  if (!Number.isSafeInteger(value) || value < 0)
    throw new RangeError(`${what} must be a whole number of at least 0, got ${value}`);
  return value;
}

function formatDelay(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}
