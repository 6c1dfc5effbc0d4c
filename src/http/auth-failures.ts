/**
 * Requests refused by authentication are visible and bounded: each one (401, 403, 400) goes to the
 * audit log as an `http/authenticate` record — the credential kind presented, the reason, the client's
 * address, never the token — and to `/metrics` (`reservoir_auth_failures_total{status,reason}`); and
 * an address that keeps failing is answered 429 with `Retry-After`, before any credential is looked
 * at, until its window has passed. Counting is per address in fixed windows, in memory: each instance
 * of a cluster bounds what reaches it.
 */
import type { AuditLog } from '../policy/audit.js';
import type { Metrics } from '../policy/metrics.js';

export interface AuthFailureLimit {
  /** Refusals an address may collect in one window before it is answered 429. @default 30 */
  failures: number;
  /** The window, ms. @default 60000 */
  windowMs: number;
}

export const DEFAULT_AUTH_FAILURE_LIMIT: AuthFailureLimit = { failures: 30, windowMs: 60_000 };

/** Addresses tracked at once; past it the oldest window is dropped (an attacker with many addresses gets no more from memory). */
const MAX_ADDRESSES = 10_000;

export interface AuthRefusal {
  address: string;
  status: number;
  /** The OAuth error code, or `missing_token` when no credentials came. */
  reason: string;
  /** What was presented: `none`, `bearer`, or the other scheme's name. */
  presented: string;
}

export interface AuthFailureGuard {
  /** Seconds the address must wait, when it is over its limit now. */
  retryAfter(address: string, now?: number): number | undefined;
  /** Records a refusal (audit, metrics, the address's count). */
  refused(refusal: AuthRefusal, now?: number): void;
}

export function createAuthFailureGuard(deps: {
  audit?: AuditLog | undefined;
  metrics?: Metrics | undefined;
  limit?: AuthFailureLimit | undefined;
}): AuthFailureGuard {
  const limit = deps.limit ?? DEFAULT_AUTH_FAILURE_LIMIT;
  const windows = new Map<string, { start: number; count: number }>();
  const current = (address: string, now: number): { start: number; count: number } | undefined => {
    const window = windows.get(address);
    if (window === undefined || now - window.start >= limit.windowMs) {
      windows.delete(address);
      return undefined;
    }
    return window;
  };
  return {
    retryAfter(address, now = Date.now()) {
      const window = current(address, now);
      if (window === undefined || window.count < limit.failures) return undefined;
      return Math.max(1, Math.ceil((window.start + limit.windowMs - now) / 1000));
    },
    refused(refusal, now = Date.now()) {
      deps.metrics?.refused(refusal.status, refusal.reason);
      deps.audit?.record({
        principal: 'unauthenticated',
        principalKind: refusal.presented,
        method: 'http/authenticate',
        outcome: 'error',
        code: refusal.reason,
        durationMs: 0,
        address: refusal.address,
      });
      if (refusal.status === 429) return;
      const window = current(refusal.address, now);
      if (window !== undefined) {
        window.count += 1;
        return;
      }
      if (windows.size >= MAX_ADDRESSES) windows.delete(windows.keys().next().value!);
      windows.set(refusal.address, { start: now, count: 1 });
    },
  };
}

/** The credential kind a request's Authorization header presents, for the record (never the value). */
export function presentedCredential(authorization: string | undefined): string {
  if (authorization === undefined || authorization.trim() === '') return 'none';
  const scheme =
    /^\s*([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)/.exec(authorization)?.[1]?.toLowerCase() ??
    'malformed';
  return scheme.length > 16 ? 'other' : scheme;
}
