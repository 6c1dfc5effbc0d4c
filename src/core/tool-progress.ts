/**
 * Progress for tool work that gives no count of its own (one SQL statement, one listing page, one
 * read): a client that asked for progress (a `progressToken`) is told at once that the work is
 * under way, then every `everyMs` while it runs, with how long it has run — so a host shows the
 * call alive and can keep its request timeout from firing. Each notification's `progress` is one
 * more than the last, as the spec requires; there is no `total`. Without a token `ctx.progress`
 * sends nothing, and this costs one timer.
 */
import type { ToolContext } from './tools.js';

/** How often a long call says it is still running, ms. */
export const HEARTBEAT_MS = 1_000;

export async function withProgress<T>(
  ctx: Pick<ToolContext, 'progress'>,
  what: string,
  work: () => Promise<T>,
  everyMs = HEARTBEAT_MS,
): Promise<T> {
  const started = Date.now();
  let beats = 0;
  // The first report is awaited: it reaches the client before the result does.
  await ctx.progress(0, undefined, what).catch(() => undefined);
  const timer = setInterval(() => {
    beats += 1;
    const seconds = Math.round((Date.now() - started) / 1000);
    void ctx.progress(beats, undefined, `${what}: running for ${seconds} s`).catch(() => undefined);
  }, everyMs);
  timer.unref();
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}
