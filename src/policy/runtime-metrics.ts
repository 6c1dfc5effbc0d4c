/**
 * The process and runtime series a Prometheus user expects beside Reservoir's own: CPU seconds,
 * resident memory, open file descriptors, start time, heap, event-loop lag, GC durations, active
 * handles, the Node.js version — `prom-client`'s default metrics, under their standard names
 * (`process_*`, `nodejs_*`). They live in their own prom-client registry, made (and prom-client
 * loaded) at the first scrape, so a server nobody scrapes never pays for them; the per-operation
 * series stay in metrics.ts (see docs/design.md, "Libraries").
 */
import { createRequire } from 'node:module';
import type * as PromClient from 'prom-client';

let registry: PromClient.Registry | undefined;

/** The runtime series in the Prometheus text format (version 0.0.4), ending in a newline. */
export async function runtimeMetricsText(): Promise<string> {
  if (registry === undefined) {
    const prom = createRequire(import.meta.url)('prom-client') as typeof PromClient;
    registry = new prom.Registry();
    prom.collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 10 });
  }
  const text = await registry.metrics();
  return text.endsWith('\n') ? text : `${text}\n`;
}
