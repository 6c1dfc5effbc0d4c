/**
 * Builds the policy every handler runs through from the server's options: the audit log and
 * metrics (always, so /metrics has numbers), access control's decision for calls by name (when
 * given), per-principal rate limits and concurrency caps when configured, and a deadline on every
 * operation.
 */
import type { AccessControl } from '../core/access-control.js';
import type { Logger } from '../core/log.js';
import type { Subscriptions } from '../core/subscriptions.js';
import {
  auditStep,
  composePolicy,
  concurrencyStep,
  createAuditLog,
  createConcurrencyLimiter,
  createMetrics,
  createRateLimiter,
  deadlineStep,
  rateLimitStep,
  type AuditLog,
  type AuditOptions,
  type ConcurrencyLimiter,
  type ConcurrencyOptions,
  type Metrics,
  type Policy,
  type PolicyStep,
  type RateLimitOptions,
} from '../policy/index.js';
import { authorizeStep } from '../policy/authorize.js';
import type { RateLimitStore } from '../policy/rate-limit.js';
import { definedProps } from '../core/defined.js';

export interface PolicyOptions {
  /** Per-principal requests and bytes per second. @default none */
  rateLimit?: RateLimitOptions | undefined;
  /**
   * Per-principal concurrent requests and notification streams. Left out, the library applies none;
   * `reservoir serve --http` always passes one (the defaults: 16 requests, 8 streams).
   * @default none
   */
  concurrency?: ConcurrencyOptions | undefined;
  /** Deadline of every operation, ms. @default 30000 */
  deadlineMs?: number | undefined;
  /** Where the audit log goes. @default none */
  audit?: AuditOptions | undefined;
}

export interface BuiltPolicy {
  policy: Policy;
  metrics: Metrics;
  concurrency: ConcurrencyLimiter | undefined;
  audit: AuditLog | undefined;
}

/** Cluster mode: budgets counted in Redis, and the instance label on every metric. */
export interface SharedPolicy {
  rateLimitStore?: RateLimitStore;
  labels?: Record<string, string>;
}

export function buildPolicy(
  options: PolicyOptions,
  subscriptions: Subscriptions,
  logger: Logger,
  shared: SharedPolicy = {},
  access?: AccessControl,
): BuiltPolicy {
  const metrics = createMetrics(definedProps({ labels: shared.labels }));
  metrics.gauge(
    'reservoir_active_subscriptions',
    'Resources with at least one subscriber.',
    () => subscriptions.stats().watches,
  );
  const audit =
    options.audit === undefined || options.audit.sink === 'none'
      ? undefined
      : createAuditLog(options.audit, { logger });
  const steps: PolicyStep[] = [
    auditStep(audit, metrics),
    deadlineStep(options.deadlineMs ?? 30_000),
  ];
  if (access !== undefined) steps.push(authorizeStep(access));
  const concurrency =
    options.concurrency === undefined ? undefined : createConcurrencyLimiter(options.concurrency);
  if (concurrency !== undefined) steps.push(concurrencyStep(concurrency));
  if (options.rateLimit !== undefined)
    steps.push(rateLimitStep(createRateLimiter(options.rateLimit, shared.rateLimitStore)));
  return { policy: composePolicy(steps), metrics, concurrency, audit };
}
