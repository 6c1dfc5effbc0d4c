/**
 * Raw wire access, below the SDK client (which normalises some error codes): newline-delimited
 * JSON-RPC written straight to a spawned CLI's stdin, and bare HTTP requests to `/mcp`.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { CLI_PATH } from './build.js';
import { CLIENT_INFO, LEGACY_VERSION, MODERN_VERSION, type Era } from './clients.js';

export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

export interface JsonRpcResponse {
  jsonrpc: '2.0';
  id: number | string | null;
  result?: Record<string, unknown>;
  error?: JsonRpcError;
}

/** The per-request envelope a 2026-07-28 request carries in `params._meta` (no `initialize`). */
export function modernMeta(): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': CLIENT_INFO,
  };
}

/** `params` for `era`: as given for 2025, with the `_meta` envelope added for 2026. */
export function eraParams(era: Era, params: Record<string, unknown> = {}): Record<string, unknown> {
  return era === '2025' ? params : { ...params, _meta: modernMeta() };
}

export function initializeParams(): Record<string, unknown> {
  return { protocolVersion: LEGACY_VERSION, capabilities: {}, clientInfo: CLIENT_INFO };
}

/** A CLI spawned in stdio mode, driven by hand. Every stdout line is kept for inspection. */
export class RawStdio {
  readonly child: ChildProcessWithoutNullStreams;
  /** Every line the server wrote to stdout, in order. */
  readonly lines: string[] = [];
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private buffer = '';
  private nextId = 1;
  private readonly waiting = new Map<number | string, (response: JsonRpcResponse) => void>();
  private readonly lineWatchers = new Set<(line: string) => void>();

  constructor(args: string[]) {
    this.child = spawn(process.execPath, [CLI_PATH, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.exited = new Promise((resolve) =>
      // 'close', not 'exit': it comes once stdout and stderr are read to their end.
      this.child.once('close', (code, signal) => resolve({ code, signal })),
    );
    this.child.stdout.on('data', (chunk: Buffer) => this.onData(chunk.toString('utf8')));
    this.child.stderr.on('data', (chunk: Buffer) => (this.stderr += chunk.toString('utf8')));
    this.child.stdin.on('error', () => undefined);
  }

  /** Spawns `reservoir serve ROOTS… ARGS…` (stdio mode). */
  static serve(roots: string[], args: string[] = ['--log-level', 'warn']): RawStdio {
    return new RawStdio(['serve', ...roots, ...args]);
  }

  /**
   * The 2025 handshake at `revision` (any 2025-era revision): `initialize` asking for it — an error if
   * the server answers another — then `notifications/initialized`.
   */
  async initializeAt(revision: string): Promise<void> {
    const init = await this.request('initialize', {
      ...initializeParams(),
      protocolVersion: revision,
    });
    const agreed = (init.result as { protocolVersion?: unknown } | undefined)?.protocolVersion;
    if (agreed !== revision)
      throw new Error(`initialize at ${revision} answered ${String(agreed)}`);
    this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  }

  /** Writes one message as one line. */
  send(message: unknown): void {
    this.child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  /** Sends a request and resolves with the response carrying its id. */
  request(
    method: string,
    params: Record<string, unknown> = {},
    timeoutMs = 30_000,
  ): Promise<JsonRpcResponse> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(
          new Error(
            `no response to ${method} #${id} within ${timeoutMs} ms; stderr: ${this.stderr}`,
          ),
        );
      }, timeoutMs);
      this.waiting.set(id, (response) => {
        clearTimeout(timer);
        resolve(response);
      });
      this.send({ jsonrpc: '2.0', id, method, params });
    });
  }

  /** Resolves with the first stdout line from now on that `matches` (parsed as JSON). */
  nextLine(matches: (parsed: unknown) => boolean, timeoutMs = 30_000): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.lineWatchers.delete(watch);
        reject(new Error(`no matching line within ${timeoutMs} ms; stderr: ${this.stderr}`));
      }, timeoutMs);
      const watch = (line: string): void => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(line);
        } catch {
          return;
        }
        if (!matches(parsed)) return;
        clearTimeout(timer);
        this.lineWatchers.delete(watch);
        resolve(parsed);
      };
      this.lineWatchers.add(watch);
    });
  }

  /**
   * Sends a request and resolves with the raw line the server wrote in answer: its bytes as written,
   * for comparing two answers byte for byte (the same `id` may be sent twice).
   */
  async requestLine(method: string, id: string, params: Record<string, unknown>): Promise<string> {
    const answered = this.nextLine((parsed) => (parsed as { id?: unknown }).id === id);
    this.send({ jsonrpc: '2.0', id, method, params });
    await answered;
    const line = this.lines.findLast((l) => l.includes(`"id":${JSON.stringify(id)}`));
    if (line === undefined) throw new Error(`no line for ${id}`);
    return line;
  }

  /** The 2025 handshake: `initialize`, then `notifications/initialized`. */
  async initialize(): Promise<JsonRpcResponse> {
    const response = await this.request('initialize', initializeParams());
    this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return response;
  }

  /** Ends stdin (the client hangs up) and resolves when the process has exited. */
  async end(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    this.child.stdin.end();
    return this.exited;
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }

  private onData(text: string): void {
    this.buffer += text;
    let newline: number;
    while ((newline = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, newline).replace(/\r$/, '');
      this.buffer = this.buffer.slice(newline + 1);
      this.lines.push(line);
      for (const watch of [...this.lineWatchers]) watch(line);
      let message: JsonRpcResponse;
      try {
        message = JSON.parse(line) as JsonRpcResponse;
      } catch {
        continue; // kept in `lines`; tests that care check every line parses
      }
      if (message.id !== undefined && message.id !== null) {
        const resolve = this.waiting.get(message.id);
        this.waiting.delete(message.id);
        resolve?.(message);
      }
    }
  }
}

export interface RawHttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** JSON-RPC messages in the body: a JSON body, or the `data:` lines of an SSE body. */
  messages: JsonRpcResponse[];
}

export interface RawHttpOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Send the body chunked, without Content-Length. */
  chunked?: boolean;
  timeoutMs?: number;
}

/** One HTTP request through node:http, which (unlike fetch) lets a test set `Host` freely. */
export function rawHttp(url: string, options: RawHttpOptions = {}): Promise<RawHttpResponse> {
  const target = new URL(url);
  const body = options.body === undefined ? undefined : Buffer.from(options.body);
  const headers: Record<string, string> = { ...options.headers };
  if (body !== undefined && options.chunked !== true)
    headers['content-length'] = String(body.length);
  if (options.chunked === true) headers['transfer-encoding'] = 'chunked';
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: options.method ?? 'POST',
        headers,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: text,
            messages: parseMessages(res.headers['content-type'], text),
          });
        });
        res.on('error', reject);
      },
    );
    req.setTimeout(options.timeoutMs ?? 30_000, () =>
      req.destroy(new Error(`HTTP request to ${url} timed out`)),
    );
    // The server may answer (413) and close before the whole body is written.
    req.on('error', (error: NodeJS.ErrnoException) =>
      error.code === 'EPIPE' || error.code === 'ECONNRESET' ? undefined : reject(error),
    );
    if (body !== undefined) {
      if (options.chunked === true) {
        for (let offset = 0; offset < body.length; offset += 64 * 1024)
          req.write(body.subarray(offset, offset + 64 * 1024));
      } else req.write(body);
    }
    req.end();
  });
}

function parseMessages(contentType: string | undefined, text: string): JsonRpcResponse[] {
  const type = contentType ?? '';
  try {
    if (type.includes('application/json')) {
      const parsed = JSON.parse(text) as JsonRpcResponse | JsonRpcResponse[];
      return Array.isArray(parsed) ? parsed : [parsed];
    }
    if (type.includes('text/event-stream')) {
      return text
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trim())
        .filter((data) => data !== '')
        .map((data) => JSON.parse(data) as JsonRpcResponse);
    }
  } catch {
    return [];
  }
  return [];
}

const ACCEPT = 'application/json, text/event-stream';

/** POSTs one 2026-07-28 request with the headers the era requires (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`). */
export async function modernHttpRequest(
  url: string,
  id: number,
  method: string,
  params: Record<string, unknown> = {},
): Promise<RawHttpResponse> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: ACCEPT,
    'mcp-protocol-version': MODERN_VERSION,
    'mcp-method': method,
  };
  if (typeof params['uri'] === 'string') headers['mcp-name'] = headerSafe(params['uri']);
  return rawHttp(url, {
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method,
      params: { ...params, _meta: modernMeta() },
    }),
  });
}

/** `Mcp-Name` carries non-ASCII or control-bearing values in the SDK's base64 sentinel form. */
function headerSafe(value: string): string {
  return /^[\x20-\x7e]*$/.test(value)
    ? value
    : `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

/** A hand-driven 2025 Streamable HTTP session: `initialize` opens it, requests carry its id. */
export class LegacyHttpSession {
  private nextId = 2;

  private constructor(
    readonly url: string,
    readonly sessionId: string,
  ) {}

  static async open(url: string): Promise<LegacyHttpSession> {
    const response = await rawHttp(url, {
      headers: { 'content-type': 'application/json', accept: ACCEPT },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: initializeParams(),
      }),
    });
    const id = response.headers['mcp-session-id'];
    if (response.status !== 200 || typeof id !== 'string')
      throw new Error(`initialize failed: ${response.status} ${response.body}`);
    const session = new LegacyHttpSession(url, id);
    await rawHttp(url, {
      headers: session.headers(),
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    return session;
  }

  headers(): Record<string, string> {
    return {
      'content-type': 'application/json',
      accept: ACCEPT,
      'mcp-session-id': this.sessionId,
      'mcp-protocol-version': LEGACY_VERSION,
    };
  }

  async request(method: string, params: Record<string, unknown> = {}): Promise<JsonRpcResponse> {
    const id = this.nextId++;
    const response = await rawHttp(this.url, {
      headers: this.headers(),
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
    });
    const message = response.messages.find((m) => m.id === id);
    if (message === undefined)
      throw new Error(`no response to ${method}: ${response.status} ${response.body}`);
    return message;
  }

  async close(): Promise<void> {
    await rawHttp(this.url, { method: 'DELETE', headers: this.headers() });
  }
}
