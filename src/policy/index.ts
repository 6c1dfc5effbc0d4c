/**
 * Policy as steps in fixed lifecycle slots, composed around every MCP handler Koa-style (Hono's
 * `compose`): each step is `(ctx, next) => Promise<T>` and may act before and after `next()`.
 *
 * Slots, outermost first: `audit` (sees every outcome, including refusals by the steps inside it,
 * and records after everything else), `authorize` (authorize.ts: access control's decision for
 * calls addressed by name), `rate-limit`, `concurrency`, `deadline`, then the handler (the
 * provider call), or the refusal the authorize step left in its place. Steps are sorted into their slots whatever order they are given
 * in; steps sharing a slot keep their given order.
 */
import { signalOf, type CallerSignal } from '../core/cancellation.js';
import { isReservoirError } from '../core/errors.js';
import type { Principal } from '../core/principal.js';
import type { AuditLog } from './audit.js';
import { runWithDeadline, type Lease } from './deadline.js';
import type { ConcurrencyLimiter } from './limits.js';
import type { Metrics } from './metrics.js';
import type { RateLimiter } from './rate-limit.js';
import { definedProps } from '../core/defined.js';

/** What every step sees: one operation. Steps and the handler share one object. */
export class PolicyContext {
  principal: Principal;
  /** The MCP method, e.g. `resources/read`, `tools/call`. */
  method: string;
  /** The resource URI for `resources/*` methods; the tool or prompt name otherwise. */
  target: string | undefined;
  /** Bytes of content read; the handler sets it after a read. */
  bytes: number | undefined = undefined;
  /** The resource a tool or prompt acted on (e.g. `read_resource`'s URI), for the audit log. */
  resource: string | undefined = undefined;
  /** The error code of a failure the handler answered as a result (a tool's `isError`), not by throwing. */
  failure: string | undefined = undefined;
  /** Why the operation is refused (the authorize step's); answered where the handler would run. */
  refusal: Error | undefined = undefined;
  private readonly callerSignal: CallerSignal;
  private lease: Lease | undefined = undefined;

  constructor(init: {
    principal: Principal;
    method: string;
    target?: string | undefined;
    signal: CallerSignal;
  }) {
    this.principal = init.principal;
    this.method = init.method;
    this.target = init.target;
    this.callerSignal = init.signal;
  }

  /** Aborts when the request is cancelled, or — under the deadline step — at the deadline. */
  get signal(): AbortSignal {
    return signalOf(this.cancellation);
  }

  /** What a deadline step listens to: the caller's cancellation as given (no signal made for it), or an outer deadline's signal. */
  get cancellation(): CallerSignal {
    return this.lease === undefined ? this.callerSignal : this.lease.signal;
  }

  /**
   * Refuses the operation: the steps inside the caller's slot still run, then `error` is thrown in
   * the handler's place (so a refusal costs what a failed call costs, and the handler never runs).
   */
  refuse(error: Error): void {
    this.refusal ??= error;
  }

  /** The deadline step's: from now on the signal is the lease's (made when first read). */
  underDeadline(lease: Lease): void {
    this.lease = lease;
  }
}

export const POLICY_SLOTS = [
  'audit',
  'authorize',
  'rate-limit',
  'concurrency',
  'deadline',
] as const;
export type PolicySlot = (typeof POLICY_SLOTS)[number];

export interface PolicyStep {
  readonly slot: PolicySlot;
  run<T>(ctx: PolicyContext, next: () => Promise<T>): Promise<T>;
}

/** Runs `handler` inside the composed steps. */
export type Policy = <T>(
  ctx: PolicyContext,
  handler: (ctx: PolicyContext) => Promise<T>,
) => Promise<T>;

/**
 * Composes steps into one policy, each in its slot.
 *
 * @example
 * const policy = composePolicy([auditStep(audit, metrics), rateLimitStep(rateLimiter), concurrencyStep(concurrency), deadlineStep(30_000)]);
 * const result = await policy({ principal, method: 'resources/read', target: uri, signal }, async (ctx) => {
 *   const contents = await registry.read(uri, ctx.signal);
 *   ctx.bytes = sizeOf(contents);
 *   return contents;
 * });
 */
export function composePolicy(steps: readonly PolicyStep[]): Policy {
  for (const step of steps) {
    if (!POLICY_SLOTS.includes(step.slot))
      throw new RangeError(
        `unknown policy slot '${String(step.slot)}'; slots are ${POLICY_SLOTS.join(', ')}`,
      );
  }
  const ordered = [...steps].sort(
    (a, b) => POLICY_SLOTS.indexOf(a.slot) - POLICY_SLOTS.indexOf(b.slot),
  );
  return <T>(ctx: PolicyContext, handler: (ctx: PolicyContext) => Promise<T>): Promise<T> => {
    let called = -1;
    const dispatch = (i: number): Promise<T> => {
      if (i <= called)
        return Promise.reject(new Error('next() called multiple times in a policy step'));
      called = i;
      const step = ordered[i];
      try {
        if (step !== undefined) return step.run(ctx, () => dispatch(i + 1));
        return ctx.refusal === undefined ? handler(ctx) : Promise.reject(ctx.refusal);
      } catch (error) {
        return Promise.reject(error);
      }
    };
    return dispatch(0);
  };
}

/** Spends one request before the handler; charges `ctx.bytes` after it, whatever the outcome. */
export function rateLimitStep(limiter: RateLimiter): PolicyStep {
  return {
    slot: 'rate-limit',
    async run(ctx, next) {
      await limiter.take(ctx.principal, { requests: 1 });
      try {
        return await next();
      } finally {
        if (ctx.bytes !== undefined && ctx.bytes > 0)
          await limiter.take(ctx.principal, { bytes: ctx.bytes });
      }
    },
  };
}

/** Holds one of the principal's request slots while the inner steps and the handler run. */
export function concurrencyStep(limiter: ConcurrencyLimiter): PolicyStep {
  return {
    slot: 'concurrency',
    async run(ctx, next) {
      const release = limiter.acquire(ctx.principal, 'request');
      try {
        return await next();
      } finally {
        release();
      }
    },
  };
}

/**
 * Gives the handler `ms` milliseconds: `ctx.signal` becomes one that aborts at the deadline (made
 * when first read, so work that never looks at it costs no AbortController).
 */
export function deadlineStep(ms: number): PolicyStep {
  if (!(Number.isFinite(ms) && ms > 0))
    throw new RangeError(`deadline must be a positive number of milliseconds, got ${ms}`);
  return {
    slot: 'deadline',
    run(ctx, next) {
      return runWithDeadline(ms, ctx.cancellation, (lease) => {
        ctx.underDeadline(lease);
        return next();
      });
    },
  };
}

/** Records every operation, refused or not, in the audit log and the metrics (either may be left out). */
export function auditStep(audit: AuditLog | undefined, metrics?: Metrics): PolicyStep {
  return {
    slot: 'audit',
    async run(ctx, next) {
      const time = audit === undefined ? '' : new Date().toISOString();
      const start = performance.now();
      let code: string | undefined;
      try {
        return await next();
      } catch (error) {
        code = isReservoirError(error) ? error.code : 'internal';
        throw error;
      } finally {
        code ??= ctx.failure;
        const durationMs = performance.now() - start;
        if (audit !== undefined) {
          audit.record({
            time,
            principal: ctx.principal.id,
            principalKind: ctx.principal.kind,
            method: ctx.method,
            ...definedProps(targetFields(ctx.method, ctx.target)),
            ...definedProps({ uri: ctx.resource }),
            outcome: code === undefined ? 'ok' : 'error',
            code,
            bytes: ctx.bytes,
            durationMs,
          });
        }
        metrics?.observe({
          method: ctx.method,
          outcome: code === undefined ? 'ok' : 'error',
          code,
          bytes: ctx.bytes,
          durationMs,
        });
      }
    },
  };
}

export {
  createAuditLog,
  auditOptions,
  OPERATION_CHANNEL,
  type AuditLog,
  type AuditOptions,
  type OperationEntry,
  type OperationRecord,
} from './audit.js';
export { runWithDeadline, withDeadline, type Lease } from './deadline.js';
export {
  createConcurrencyLimiter,
  concurrencyOptions,
  type ConcurrencyLimiter,
  type ConcurrencyOptions,
  type Release,
} from './limits.js';
export { createMetrics, METRICS_CONTENT_TYPE, type Metrics, type MetricsEntry } from './metrics.js';
export {
  createRateLimiter,
  rateLimitOptions,
  type RateLimiter,
  type RateLimitOptions,
  type RateLimitStats,
} from './rate-limit.js';

/** Where an operation's target goes in its audit entry: a URI for resources, a name otherwise. */
function targetFields(
  method: string,
  target: string | undefined,
): { uri?: string | undefined; name?: string | undefined } {
  return method.startsWith('resources/') ? { uri: target } : { name: target };
}
