/**
 * `reservoir check --connect`: builds every source the config declares, asks each whether it can
 * answer now — its own connection check (an HTTP source reads its first listed endpoint), else its
 * readiness check (a SQL source runs a query), else a one-item list — within a
 * budget, and reports each with its latency or its real failure (credentials removed), then closes
 * them. What an operator runs before `serve`, or when a host says a source "cannot answer".
 */
import { performance } from 'node:perf_hooks';
import { listWithin } from '../core/bounded-list.js';
import { ReservoirError } from '../core/errors.js';
import { redactCredentials } from '../core/source-health.js';
import type { Provider } from '../core/types.js';
import type { Settings } from '../config/merge.js';
import { withSources } from './open.js';

export interface ConnectReport {
  source: string;
  ok: boolean;
  ms: number;
  /** Why it cannot answer (credentials removed). */
  message?: string;
}

/** Time each source may take to answer, ms. */
export const CONNECT_BUDGET_MS = 10_000;

async function answers(provider: Provider, budgetMs: number): Promise<void> {
  const check =
    provider.connect?.bind(provider, AbortSignal.timeout(budgetMs)) ??
    provider.ready?.bind(provider);
  if (check === undefined) {
    await listWithin(provider, undefined, 1, { signal: AbortSignal.timeout(budgetMs) }, budgetMs);
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  const ready = check();
  ready.catch(() => undefined);
  try {
    await Promise.race([
      ready,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new ReservoirError('timeout', `no answer within ${budgetMs} ms`)),
          budgetMs,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Each source's answer, in config order. */
export async function connectEverySource(
  settings: Settings,
  budgetMs = CONNECT_BUDGET_MS,
): Promise<ConnectReport[]> {
  return withSources(settings, (providers) =>
    Promise.all(
      providers.map(async (provider): Promise<ConnectReport> => {
        const started = performance.now();
        try {
          await answers(provider, budgetMs);
          return { source: provider.root, ok: true, ms: performance.now() - started };
        } catch (error) {
          const message = redactCredentials(error instanceof Error ? error.message : String(error));
          return { source: provider.root, ok: false, ms: performance.now() - started, message };
        }
      }),
    ),
  );
}
