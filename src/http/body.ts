/**
 * Reads a POST body once, bounded, and parses it as JSON. The parsed value is handed to the era
 * classifier and to whichever leg serves the request, so no request body is cloned, teed or parsed
 * twice on the hot path.
 */
import type { IncomingMessage } from 'node:http';

export type BodyResult =
  | { ok: true; value: unknown }
  | { ok: false; status: 400 | 413; code: number; message: string };

export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<BodyResult> {
  const chunks: Buffer[] = [];
  let received = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    received += chunk.length;
    if (received > maxBytes) return { ok: false, status: 413, code: -32600, message: `Request body too large (limit ${maxBytes} bytes)` };
    chunks.push(chunk);
  }
  const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, status: 400, code: -32700, message: 'Parse error: the request body is not valid JSON' };
  }
}
