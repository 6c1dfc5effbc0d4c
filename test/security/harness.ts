/**
 * Shared by the security tests: static tokens, the real SDK client over a real socket with a bearer
 * token (either era), a fetch wrapper that records every request and response body the client
 * exchanges (read incrementally, so long-lived SSE streams are captured too), and raw 2025 sessions
 * with an Authorization header.
 */
import { StreamableHTTPClientTransport, type Client } from '@modelcontextprotocol/client';
import { generateToken } from '../../src/http/auth.js';
import { newClient, type Era } from '../helpers/clients.js';
import {
  initializeParams,
  rawHttp,
  type JsonRpcResponse,
  type RawHttpResponse,
} from '../helpers/wire.js';
import { LEGACY_VERSION } from '../helpers/clients.js';
import { eventually } from '../helpers/eventually.js';

export const ACCEPT = 'application/json, text/event-stream';

export interface Token {
  name: string;
  token: string;
  sha256: string;
  scopes: string[];
}

export function makeToken(name: string, scopes: string[]): Token {
  const { token, sha256 } = generateToken();
  return { name, token, sha256, scopes };
}

/** One exchange the client made: what it sent, and everything received so far. */
export interface Exchange {
  url: string;
  method: string;
  request: string;
  status: number;
  response: string;
}

/** Records every exchange of the clients given its `fetch`. */
export class WireLog {
  readonly exchanges: Exchange[] = [];
  private readonly reading = new Set<Promise<void>>();

  readonly fetch = async (url: string | URL, init?: RequestInit): Promise<Response> => {
    const response = await fetch(url, init);
    const exchange: Exchange = {
      url: String(url),
      method: init?.method ?? 'GET',
      request: typeof init?.body === 'string' ? init.body : '',
      status: response.status,
      response: '',
    };
    this.exchanges.push(exchange);
    if (response.body !== null) {
      const reader = response.clone().body!.getReader();
      const decoder = new TextDecoder();
      const read = (async () => {
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            exchange.response += decoder.decode(value, { stream: true });
          }
        } catch {
          // the client aborted the stream: what arrived is kept
        }
      })();
      this.reading.add(read);
      void read.finally(() => this.reading.delete(read));
    }
    return response;
  };

  /** Adds an exchange made outside the SDK client (raw requests). */
  add(url: string, request: string, response: RawHttpResponse): void {
    this.exchanges.push({
      url,
      method: 'POST',
      request,
      status: response.status,
      response: `${JSON.stringify(response.headers)}\n${response.body}`,
    });
  }

  /** Waits (bounded) for the responses still being read. */
  async settle(timeoutMs = 500): Promise<void> {
    await Promise.race([
      Promise.allSettled([...this.reading]),
      new Promise((resolve) => setTimeout(resolve, timeoutMs).unref()),
    ]);
  }
}

/** Connects the real SDK client with `Authorization: Bearer <token>` (none when undefined). */
export async function connectWithToken(
  era: Era,
  url: string,
  token: string | undefined,
  log?: WireLog,
): Promise<Client> {
  const client = newClient(era);
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    ...(token === undefined
      ? {}
      : { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
    ...(log === undefined ? {} : { fetch: log.fetch }),
  });
  await client.connect(transport);
  return client;
}

/** Closes a client, ending its 2025 session first; never throws. */
export async function closeClient(client: Client | undefined): Promise<void> {
  if (client === undefined) return;
  const transport = client.transport as StreamableHTTPClientTransport | undefined;
  await transport?.terminateSession?.().catch(() => undefined);
  await client.close().catch(() => undefined);
}

/** A hand-driven 2025 session opened with a bearer token; requests may be sent as another token. */
export class AuthedLegacySession {
  private nextId = 2;

  private constructor(
    readonly url: string,
    readonly sessionId: string,
    readonly token: string,
    private readonly log?: WireLog,
  ) {}

  static async open(url: string, token: string, log?: WireLog): Promise<AuthedLegacySession> {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: initializeParams(),
    });
    const response = await rawHttp(url, {
      headers: {
        'content-type': 'application/json',
        accept: ACCEPT,
        authorization: `Bearer ${token}`,
      },
      body,
    });
    log?.add(url, body, response);
    const id = response.headers['mcp-session-id'];
    if (response.status !== 200 || typeof id !== 'string')
      throw new Error(`initialize failed: ${response.status} ${response.body}`);
    const session = new AuthedLegacySession(url, id, token, log);
    await session.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return session;
  }

  headers(token = this.token): Record<string, string> {
    return {
      'content-type': 'application/json',
      accept: ACCEPT,
      'mcp-session-id': this.sessionId,
      'mcp-protocol-version': LEGACY_VERSION,
      authorization: `Bearer ${token}`,
    };
  }

  async send(message: Record<string, unknown>, token = this.token): Promise<RawHttpResponse> {
    const body = JSON.stringify(message);
    const response = await rawHttp(this.url, { headers: this.headers(token), body });
    this.log?.add(this.url, body, response);
    return response;
  }

  /** Sends a request (as `token`, default the opener) and returns the raw response and its JSON-RPC message. */
  async request(
    method: string,
    params: Record<string, unknown> = {},
    token = this.token,
  ): Promise<{ raw: RawHttpResponse; message: JsonRpcResponse | undefined }> {
    const id = this.nextId++;
    const raw = await this.send({ jsonrpc: '2.0', id, method, params }, token);
    return { raw, message: raw.messages.find((m) => m.id === id) ?? raw.messages[0] };
  }

  async close(): Promise<void> {
    await rawHttp(this.url, { method: 'DELETE', headers: this.headers() }).catch(() => undefined);
  }
}

/** The JSON-RPC error code of a rejection from the SDK client, if it has one. */
export function errorCode(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

/** Settles a promise into { ok, value | error } for assertions. */
export async function settle<T>(
  promise: Promise<T>,
): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  try {
    return { ok: true, value: await promise };
  } catch (error) {
    return { ok: false, error };
  }
}

/** Polls `check` until true; fails after `timeoutMs` (see eventually()). */
export async function waitFor(
  check: () => boolean,
  what: string,
  timeoutMs = 5_000,
): Promise<void> {
  await eventually(check, what, { deadlineMs: timeoutMs });
}
