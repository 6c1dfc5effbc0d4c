/**
 * The options of the per-principal 2025-era session limits, in zod: `server.http.sessions` in
 * reservoir.yaml and `sessions` of `listen()`. Kept apart from the limiter (session-quota.ts), so
 * the config schema loads no HTTP machinery.
 */
import { z } from 'zod';

/** Options of the per-principal session limits (config `server.http.sessions`). */
export const sessionLimitOptions = z.strictObject({
  /** Sessions one principal holds at once; opening one more closes its least recently used. @default 100 */
  perPrincipal: z.int().min(1).default(100),
  /** `initialize` requests per principal (per address for anonymous callers). @default { perSecond: 5, burst: 50 } */
  initialize: z
    .strictObject({
      perSecond: z.number().positive().max(1_000_000),
      burst: z.int().min(1).optional(),
    })
    .default({ perSecond: 5, burst: 50 }),
});

export type SessionLimitOptions = z.input<typeof sessionLimitOptions>;
