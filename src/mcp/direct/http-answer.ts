/**
 * How the HTTP entries (stateless.ts, session.ts) write a direct read's answer: `application/json`
 * with its length, corked into one write. What the endpoint hands them: the read, its verdict on
 * `Accept` (http/accept.ts, which this folder does not import: the endpoint is the layer above),
 * and the registry of 2026-07-28 reads in flight, keyed by their responses.
 */
import type { ServerResponse } from 'node:http';
import { Base64Run, type EncodedLine } from './base64-run.js';
import type { DirectRead } from './read.js';
import type { ReadsInFlight, RunningRead } from './reads-in-flight.js';

export interface HttpDirectEntry {
  read: DirectRead;
  /** Whether an `Accept` header allows `application/json`. */
  acceptsJson(header: string | undefined): boolean;
  /** 2026-07-28 reads in flight: closing it (the endpoint's close) aborts them. */
  stateless: ReadsInFlight<ServerResponse>;
}

/**
 * Runs a direct read and writes its answer as `application/json` with `headers`; resolves false
 * (nothing written) when the read declines the request. The read is cancelled when the client
 * goes away before the answer (nothing is written then), and when its scope cancels it
 * (`running`): then no answer is sent for it. In a 2025 session the client cancelled it, and the
 * POST is closed with 202 and no body, as for a message that has no answer (`cancelled:
 * 'accepted'`); a 2026-07-28 request is cancelled only by the endpoint closing, and its response is
 * destroyed, as closing the connection would (`cancelled: 'destroy'`).
 */
export async function answerWith(
  res: ServerResponse,
  read: (cancel: RunningRead['cancel']) => ReturnType<DirectRead>,
  headers: Record<string, string>,
  running: RunningRead,
  cancelled: 'accepted' | 'destroy',
): Promise<boolean> {
  const { cancel } = running;
  const pending = read(cancel);
  if (pending === undefined) return false;
  const onClose = (): void => cancel.abort();
  res.once('close', onClose);
  let encoded: EncodedLine;
  try {
    encoded = await pending;
  } finally {
    res.off('close', onClose);
  }
  if (res.destroyed) return true;
  if (running.cancelled()) {
    if (cancelled === 'accepted') res.writeHead(202, headers).end();
    else res.destroy();
    return true;
  }
  const parts = typeof encoded === 'string' ? [encoded] : encoded;
  let length = 0;
  for (const part of parts)
    length += typeof part === 'string' ? Buffer.byteLength(part) : part.length;
  res.writeHead(200, { 'content-type': 'application/json', ...headers, 'content-length': length });
  res.cork();
  for (const part of parts) {
    if (!(part instanceof Base64Run)) res.write(part);
    else for (const piece of part.pieces()) res.write(piece, 'latin1');
  }
  res.end();
  res.uncork();
  return true;
}
