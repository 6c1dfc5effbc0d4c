/**
 * Health and metrics endpoints. /healthz says the process answers; /readyz says whether every
 * source can answer now (each provider's `ready()`), naming those that cannot; both need no
 * credentials and say nothing about the data. /metrics renders Prometheus text behind the same
 * authentication as /mcp (the caller passes the check in).
 */
import type { ServerResponse } from 'node:http';
import type { Registry } from '../core/registry.js';
import { METRICS_CONTENT_TYPE, type Metrics } from '../policy/index.js';
import { runtimeMetricsText } from '../policy/runtime-metrics.js';

export const HEALTH_PATH = '/healthz';
export const READY_PATH = '/readyz';
export const METRICS_PATH = '/metrics';

/** /healthz: the process answers. /readyz: every source can answer now (503 naming those that cannot). */
export async function health(path: string, res: ServerResponse, registry: Registry | undefined): Promise<void> {
  if (path === HEALTH_PATH || registry === undefined) {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'ok' }));
    return;
  }
  const checks = await Promise.all(
    registry.providers().map(async (provider) => {
      try {
        await provider.ready?.();
        return { source: provider.root, ready: true };
      } catch (error) {
        return { source: provider.root, ready: false, reason: error instanceof Error ? error.message : String(error) };
      }
    }),
  );
  const ready = checks.every((c) => c.ready);
  res.writeHead(ready ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify({ status: ready ? 'ready' : 'unavailable', sources: checks }));
}

/** /metrics in Prometheus text format: Reservoir's series, then the process and runtime ones. */
export function serveMetrics(res: ServerResponse, metrics: Metrics): void {
  const own = metrics.render();
  void runtimeMetricsText().then(
    (runtime) => res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE }).end(own + runtime),
    () => res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE }).end(own),
  );
}

