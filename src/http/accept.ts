/**
 * What a request's `Accept` header allows, read as HTTP defines it (RFC 9110 §12.5.1): media ranges
 * with wildcards (`*\/*`, `application/*`), parameters, q-values (`q=0` means "not acceptable"), the
 * most specific range deciding for each type, and no header at all meaning anything.
 */

export interface Acceptance {
  /** `application/json` is acceptable. */
  json: boolean;
  /** `text/event-stream` is acceptable. */
  sse: boolean;
}

interface Range {
  type: string;
  subtype: string;
  q: number;
}

export function acceptance(header: string | null | undefined): Acceptance {
  if (header === null || header === undefined || header.trim() === '')
    return { json: true, sse: true };
  const ranges = parse(header);
  return {
    json: accepts(ranges, 'application', 'json'),
    sse: accepts(ranges, 'text', 'event-stream'),
  };
}

/** The canonical header the SDK's 2025-era transport checks for (it looks for both names verbatim). */
export const ACCEPT_BOTH = 'application/json, text/event-stream';

function parse(header: string): Range[] {
  const ranges: Range[] = [];
  for (const part of header.split(',')) {
    const [media = '', ...params] = part.split(';');
    const slash = media.trim().toLowerCase().split('/');
    if (slash.length !== 2 || slash[0] === '' || slash[1] === '') continue;
    let q = 1;
    for (const param of params) {
      const [name = '', value = ''] = param.split('=');
      if (name.trim().toLowerCase() !== 'q') continue;
      const parsed = Number(value.trim());
      // A malformed weight is read as the default rather than as a refusal.
      q = Number.isFinite(parsed) && parsed >= 0 && parsed <= 1 ? parsed : 1;
    }
    ranges.push({ type: slash[0]!, subtype: slash[1]!, q });
  }
  return ranges;
}

/** The q-value of the most specific range matching the type decides; none matching means no. */
function accepts(ranges: readonly Range[], type: string, subtype: string): boolean {
  let best: { specificity: number; q: number } | undefined;
  for (const range of ranges) {
    const specificity =
      range.type === type && range.subtype === subtype
        ? 2
        : range.type === type && range.subtype === '*'
          ? 1
          : range.type === '*' && range.subtype === '*'
            ? 0
            : -1;
    if (specificity < 0) continue;
    // Among equally specific ranges the highest weight counts.
    if (
      best === undefined ||
      specificity > best.specificity ||
      (specificity === best.specificity && range.q > best.q)
    )
      best = { specificity, q: range.q };
  }
  return best !== undefined && best.q > 0;
}

/**
 * A 2025-era request as the SDK's session transport must see it: its `Accept` rewritten to the
 * canonical form when the client accepts what the method needs (a POST: JSON, with SSE used only
 * when the client accepts it too; a GET: SSE), or the 406 to answer. `jsonOnly` tells the caller a
 * POST's client takes no SSE: its answer must be JSON.
 */
export function negotiate(request: Request): { request: Request; jsonOnly: boolean } | Response {
  if (request.method !== 'POST' && request.method !== 'GET') return { request, jsonOnly: false };
  const header = request.headers.get('accept');
  const allowed = acceptance(header);
  if (request.method === 'GET' ? !allowed.sse : !allowed.json) {
    const needed = request.method === 'GET' ? 'text/event-stream' : 'application/json';
    return new Response(
      JSON.stringify({
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32000,
          message: `Not Acceptable: the Accept header (${header ?? ''}) must allow ${needed}`,
        },
      }),
      {
        status: 406,
        headers: { 'content-type': 'application/json' },
      },
    );
  }
  if (header === ACCEPT_BOTH) return { request, jsonOnly: false };
  const headers = new Headers(request.headers);
  headers.set('accept', ACCEPT_BOTH);
  // The POST body was read and parsed before; the SDK is handed it beside the request.
  return {
    request: new Request(request.url, { method: request.method, headers, signal: request.signal }),
    jsonOnly: request.method === 'POST' && !allowed.sse,
  };
}
