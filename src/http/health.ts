/**
 * Health and metrics endpoints. /healthz says the process answers; /readyz says whether every
 * source can answer now (each provider's `ready()`, or, for a source without one that a list found
 * failing, a one-item list), naming those that cannot with the failure kind and since when. Both
 * need no credentials and say nothing about the data. In cluster mode /readyz also reports Redis:
 * `degraded` (still 200, the instance serves on) while Redis is unreachable.
 *
 * Without credentials /readyz names no path, host or error text: a source mounted from a directory
 * (a `file:` root, an absolute path) is named `files:<n>` (its place among the mounts, from 1), and
 * neither a source's error message nor Redis's reason is given. An authenticated caller (the same
 * check as /mcp and /metrics) gets the details: every root as mounted, the error's message with
 * credentials removed, and Redis's reason. /metrics renders Prometheus text behind the same
 * authentication as /mcp (the caller passes the check in).
 */
import type { ServerResponse } from 'node:http';
import type { Registry } from '../core/registry.js';
import { probeSource, type SourceReadiness } from '../core/source-health.js';
import { METRICS_CONTENT_TYPE, type Metrics } from '../policy/index.js';
import { runtimeMetricsText } from '../policy/runtime-metrics.js';
import { definedProps } from '../core/defined.js';

export const HEALTH_PATH = '/healthz';
export const READY_PATH = '/readyz';
export const METRICS_PATH = '/metrics';

/** /healthz: the process answers. /readyz: every source can answer now (503 naming those that cannot). */
export async function health(
  path: string,
  res: ServerResponse,
  registry: Registry | undefined,
  cluster?: { health(): { status: 'up' } | { status: 'degraded'; reason: string } },
  /** Whether the caller authenticated: only then are roots, error messages and Redis's reason shown. */
  detailed = false,
): Promise<void> {
  if (path === HEALTH_PATH || registry === undefined) {
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ status: 'ok' }));
    return;
  }
  const checks = await Promise.all(
    registry
      .providers()
      .map((provider) => probeSource(provider, registry.health, registry.sourceListTimeoutMs)),
  );
  const ready = checks.every((c) => c.ready);
  // Cluster mode without Redis still serves (reads, lists, searches): degraded, not unavailable.
  const redis = cluster?.health();
  const status = !ready ? 'unavailable' : redis?.status === 'degraded' ? 'degraded' : 'ready';
  const sources = detailed ? checks : checks.map((check, index) => publicReadiness(check, index));
  const redisReport =
    redis === undefined
      ? undefined
      : redis.status === 'up' || !detailed
        ? { status: redis.status }
        : { status: 'degraded', reason: redis.reason };
  const body = { status, sources, ...definedProps({ redis: redisReport }) };
  res
    .writeHead(ready ? 200 : 503, { 'content-type': 'application/json' })
    .end(JSON.stringify(body));
}

/**
 * What /readyz says of a source to a caller without credentials: no error text, and a directory's
 * root (an absolute path) replaced by its place among the mounts.
 */
export function publicReadiness(check: SourceReadiness, index: number): SourceReadiness {
  const { source, ready, reason, since } = check;
  return {
    source: source.startsWith('file:') ? `files:${index + 1}` : source,
    ready,
    ...definedProps({ reason, since }),
  };
}

/** /metrics in Prometheus text format: Reservoir's series, then the process and runtime ones. */
export function serveMetrics(res: ServerResponse, metrics: Metrics): void {
  const own = metrics.render();
  void runtimeMetricsText().then(
    (runtime) => res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE }).end(own + runtime),
    () => res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE }).end(own),
  );
}
