/**
 * One upstream GET, with every safety rule applied where it cannot be bypassed: node:http(s) agents
 * whose DNS `lookup` refuses non-public addresses (checked at connect time), IP-literal hosts checked
 * before the request, same-origin redirects only (bounded), one deadline for redirects and body, and
 * a body cap enforced while streaming (after decompression) — over it, reading stops and the read is
 * a TooLargeError, never a truncated success. Errors name the api:// URI, never the upstream URL or
 * a header, so configured secrets cannot leak through them.
 */
import {
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { ReservoirError, TooLargeError, UnavailableError } from '../../core/errors.js';
import {
  BlockedAddressError,
  checkLiteralHost,
  guardedLookup,
  type AddressPolicy,
} from '../utils/address.js';
import { definedProps } from '../../core/defined.js';

export interface ClientOptions {
  /** The only origin requests and redirects may reach. */
  origin: string;
  headers: Record<string, string>;
  timeoutMs: number;
  maxBytes: number;
  maxRedirects: number;
  policy: AddressPolicy;
  /** DNS resolution before the address check. @default dns.lookup */
  resolve?: LookupFunction | undefined;
}

export interface UpstreamResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body of a 2xx response; empty otherwise (other bodies are discarded unread). */
  body: Buffer;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Unread bodies up to this size are drained to keep the connection; larger ones close it. */
const DRAIN_LIMIT = 64 * 1024;
const USER_AGENT = 'reservoir-http-provider';

export class UpstreamClient {
  private readonly http: HttpAgent;
  private readonly https: HttpsAgent;

  constructor(private readonly options: ClientOptions) {
    const lookup = guardedLookup(options.policy, options.resolve);
    this.http = new HttpAgent({ keepAlive: true, lookup });
    this.https = new HttpsAgent({ keepAlive: true, lookup });
  }

  /** GETs `url` for the resource `uri`, following same-origin redirects. Never resolves with a 3xx redirect. */
  async get(
    url: URL,
    conditional: Record<string, string>,
    uri: string,
    signal: AbortSignal,
    /** Most body bytes this read may take. @default the source's `maxBytes` */
    maxBytes = this.options.maxBytes,
  ): Promise<UpstreamResponse> {
    const { timeoutMs } = this.options;
    signal.throwIfAborted();
    // One controller for the caller's signal and the deadline; both are released when the read ends
    // (cheaper than AbortSignal.any + AbortSignal.timeout, whose timer outlives the request).
    const combined = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      combined.abort(new Error('upstream deadline passed'));
    }, timeoutMs);
    const onAbort = (): void => combined.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      return await this.follow(url, conditional, uri, combined.signal, maxBytes);
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (timedOut) {
        throw unavailable(
          uri,
          `the upstream did not answer within ${timeoutMs} ms`,
          { timeoutMs },
          error,
        );
      }
      if (error instanceof ReservoirError) throw error;
      if (error instanceof BlockedAddressError)
        throw unavailable(
          uri,
          error.message,
          { address: error.address, addressKind: error.kind },
          error,
        );
      const code = (error as NodeJS.ErrnoException).code;
      throw unavailable(
        uri,
        `the upstream cannot be reached (${code ?? 'connection failed'})`,
        {},
        error,
      );
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    }
  }

  close(): void {
    this.http.destroy();
    this.https.destroy();
  }

  private async follow(
    url: URL,
    conditional: Record<string, string>,
    uri: string,
    signal: AbortSignal,
    /** Most body bytes this read may take. @default the source's `maxBytes` */
    maxBytes = this.options.maxBytes,
  ): Promise<UpstreamResponse> {
    let current = url;
    for (let hop = 0; ; hop += 1) {
      const res = await this.send(current, conditional, signal);
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if (!REDIRECTS.has(status) || location === undefined) {
        if (status < 200 || status > 299) {
          discard(res);
          return { status, headers: res.headers, body: Buffer.alloc(0) };
        }
        // The caller bounds it: the source's cap, or the document cap for a rendition.
        const body = await readBody(res, maxBytes, uri, signal);
        return { status, headers: res.headers, body };
      }
      discard(res);
      if (hop >= this.options.maxRedirects)
        throw unavailable(uri, `too many upstream redirects (over ${this.options.maxRedirects})`, {
          status,
        });
      let next: URL;
      try {
        next = new URL(location, current);
      } catch {
        throw unavailable(uri, 'the upstream redirected to a malformed URL', { status });
      }
      if (next.protocol !== 'http:' && next.protocol !== 'https:')
        throw unavailable(uri, 'the upstream redirected to a non-HTTP(S) URL; refused', { status });
      if (next.origin !== this.options.origin)
        throw unavailable(uri, 'the upstream redirected to another origin; refused', { status });
      current = next;
    }
  }

  private send(
    url: URL,
    conditional: Record<string, string>,
    signal: AbortSignal,
  ): Promise<IncomingMessage> {
    checkLiteralHost(this.options.policy, url.hostname);
    const https = url.protocol === 'https:';
    const headers: OutgoingHttpHeaders = {
      'user-agent': USER_AGENT,
      accept: '*/*',
      ...this.options.headers,
      'accept-encoding': 'gzip, deflate, br',
      ...conditional,
    };
    return new Promise((resolve, reject) => {
      const req = (https ? httpsRequest : httpRequest)(
        url,
        { method: 'GET', headers, agent: https ? this.https : this.http, signal },
        resolve,
      );
      req.on('error', reject); // later errors (after the response) are the body reader's to report
      req.end();
    });
  }
}

/** Drops a body we do not read: drained when small (the keep-alive socket is reused), else the socket is closed. */
function discard(res: IncomingMessage): void {
  res.on('error', () => undefined); // a reset while draining an unread body is nobody's concern
  const declared = Number(
    res.headers['content-length'] ?? (res.statusCode === 304 || res.statusCode === 204 ? 0 : NaN),
  );
  if (Number.isSafeInteger(declared) && declared <= DRAIN_LIMIT) res.resume();
  else res.destroy();
}

/** Reads a body up to `limit` bytes (decoded); over it, stops and throws TooLargeError. */
async function readBody(
  res: IncomingMessage,
  limit: number,
  uri: string,
  signal: AbortSignal,
): Promise<Buffer> {
  const encoding = String(res.headers['content-encoding'] ?? 'identity')
    .trim()
    .toLowerCase();
  const declared = Number(res.headers['content-length']);
  if (encoding === 'identity' && Number.isSafeInteger(declared) && declared > limit) {
    res.destroy();
    throw new TooLargeError(uri, declared, limit);
  }
  let stream: Readable = res;
  if (encoding === 'gzip' || encoding === 'x-gzip') stream = res.pipe(createGunzip());
  else if (encoding === 'deflate') stream = res.pipe(createInflate());
  else if (encoding === 'br') stream = res.pipe(createBrotliDecompress());
  else if (encoding !== 'identity') {
    res.destroy();
    throw new UnavailableError(
      uri,
      `the upstream sent an unsupported Content-Encoding (${encoding})`,
    );
  }
  if (stream !== res) res.once('error', (error) => stream.destroy(error));
  const abort = (): void => void stream.destroy(signal.reason as Error);
  signal.addEventListener('abort', abort, { once: true });
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > limit) {
        res.destroy();
        stream.destroy();
        throw new TooLargeError(
          uri,
          total,
          limit,
          encoding === 'identity'
            ? 'bytes received before reading stopped'
            : 'decoded bytes before reading stopped',
        );
      }
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof ReservoirError || signal.aborted) throw error;
    throw new UnavailableError(
      uri,
      `the upstream response could not be read (${(error as NodeJS.ErrnoException).code ?? 'broken stream'})`,
      { cause: error },
    );
  } finally {
    signal.removeEventListener('abort', abort);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
}

/** An UnavailableError carrying extra structured detail (a status, the limit passed). */
export function unavailable(
  uri: string,
  reason: string,
  data: Record<string, unknown> = {},
  cause?: unknown,
): UnavailableError {
  const error = new UnavailableError(uri, reason, definedProps({ cause }));
  Object.assign(error.data, data);
  return error;
}
