/**
 * Concurrency limits around a provider call: the limiter caps in-flight requests and open listen
 * streams per principal. It never waits in a queue: over a limit is an immediate, clear error.
 * (Deadlines are in deadline.ts.)
 */
import { z } from 'zod';
import { ReservoirError } from '../core/errors.js';
import type { Principal } from '../core/principal.js';
import { parseOptions } from './options.js';

/** Options of {@link createConcurrencyLimiter}. */
export const concurrencyOptions = z.strictObject({
  /** Requests one principal may have in flight at once. @default 16 */
  perPrincipal: z.int().min(1).default(16),
  /** Notification streams one principal may hold open: 2026 `subscriptions/listen` streams and 2025-era GET streams. @default 8 */
  maxListenStreamsPerPrincipal: z.int().min(1).default(8),
});

export type ConcurrencyOptions = z.input<typeof concurrencyOptions>;
export type ConcurrencyKind = 'request' | 'listen';
/** Gives the slot back; calling it again does nothing. */
export type Release = () => void;

export interface ConcurrencyLimiter {
  /** Takes a slot or throws ReservoirError('limit_exceeded') with `data: { limit, kind, active }`. */
  acquire(principal: Principal, kind: ConcurrencyKind): Release;
  /** Slots held now, summed over principals; `principals` counts those holding any. */
  stats(): { principals: number; request: number; listen: number };
}

/**
 * Builds the per-principal caps; options are checked now (ConfigError on `concurrency.<field>`).
 *
 * @example
 * const limiter = createConcurrencyLimiter({ perPrincipal: 8, maxListenStreamsPerPrincipal: 4 });
 * const release = limiter.acquire(principal, 'listen'); // throws limit_exceeded when over
 * stream.on('close', release);
 */
export function createConcurrencyLimiter(options: ConcurrencyOptions = {}): ConcurrencyLimiter {
  const parsed = parseOptions(concurrencyOptions, options, 'concurrency');
  const limits: Record<ConcurrencyKind, number> = {
    request: parsed.perPrincipal,
    listen: parsed.maxListenStreamsPerPrincipal,
  };
  // Only principals holding a slot have an entry, so the map is bounded by what is in flight.
  const held = new Map<string, Record<ConcurrencyKind, number>>();

  return {
    acquire(principal, kind) {
      const key = `${principal.kind}:${principal.id}`;
      const counts = held.get(key) ?? { request: 0, listen: 0 };
      const limit = limits[kind];
      if (counts[kind] >= limit) {
        const what =
          kind === 'request'
            ? `requests in flight`
            : `open notification streams (subscriptions/listen, 2025-era GET)`;
        const hint = kind === 'request' ? 'wait for one to finish' : 'close one first';
        throw new ReservoirError(
          'limit_exceeded',
          `Too many concurrent ${what}: at most ${limit} per principal; ${hint}`,
          {
            data: {
              limit,
              kind: kind === 'request' ? 'concurrent_requests' : 'listen_streams',
              active: counts[kind],
            },
          },
        );
      }
      counts[kind] += 1;
      held.set(key, counts);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        counts[kind] -= 1;
        if (counts.request === 0 && counts.listen === 0 && held.get(key) === counts)
          held.delete(key);
      };
    },
    stats() {
      let request = 0;
      let listen = 0;
      for (const counts of held.values()) {
        request += counts.request;
        listen += counts.listen;
      }
      return { principals: held.size, request, listen };
    },
  };
}
