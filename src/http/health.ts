/**
 * Health and metrics endpoints. /healthz says the process answers; /readyz says whether every
 * source can answer now (each provider's `ready()`, or, for a source without one that a list found
 * failing, a one-item list), naming those that cannot with the failure kind, since when, and the
 * error's message with credentials removed; both need no credentials and say nothing about the data. In cluster mode /readyz also reports Redis: `degraded`
 * (still 200, the instance serves on) with the reason while Redis is unreachable. /metrics renders Prometheus text behind the same
 * authentication as /mcp (the caller passes the check in).
 */
import type { ServerResponse } from 'node:http';
import type { Registry } from '../core/registry.js';
import { probeSource } from '../core/source-health.js';
import { METRICS_CONTENT_TYPE, type Metrics } from '../policy/index.js';
import { runtimeMetricsText } from '../policy/runtime-metrics.js';

export const HEALTH_PATH = '/healthz';
export const READY_PATH = '/readyz';
export const METRICS_PATH = '/metrics';

/** /healthz: the process answers. /readyz: every source can answer now (503 naming those that cannot). */
export async function health(
  path: string,
  res: ServerResponse,
  registry: Registry | undefined,
  cluster?: { health(): { status: 'up' } | { status: 'degraded'; reason: string } },
): Promise<void> {
  if (path === HEALTH_PATH || registry === undefined) {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'ok' }));
    return;
  }
  const checks = await Promise.all(registry.providers().map((provider) => probeSource(provider, registry.health, registry.sourceListTimeoutMs)));
  const ready = checks.every((c) => c.ready);
  // Cluster mode without Redis still serves (reads, lists, searches): degraded, not unavailable.
  const redis = cluster?.health();
  const status = !ready ? 'unavailable' : redis?.status === 'degraded' ? 'degraded' : 'ready';
  const body = { status, sources: checks, ...(redis === undefined ? {} : { redis: redis.status === 'up' ? { status: 'up' } : { status: 'degraded', reason: redis.reason } }) };
  res.writeHead(ready ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** /metrics in Prometheus text format: Reservoir's series, then the process and runtime ones. */
export function serveMetrics(res: ServerResponse, metrics: Metrics): void {
  const own = metrics.render();
  void runtimeMetricsText().then(
    (runtime) => res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE }).end(own + runtime),
    () => res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE }).end(own),
  );
}

