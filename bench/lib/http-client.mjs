/**
 * A minimal Streamable HTTP MCP client on node:http for the bench: one keep-alive connection per
 * client, 2025-era sessions (`initialize` → `Mcp-Session-Id`) or 2026-07-28 per-request `_meta`
 * envelopes with the standard `Mcp-Method` / `Mcp-Name` headers. Parses JSON and SSE responses.
 */
import http from 'node:http';

export const MODERN_VERSION = '2026-07-28';
export const LEGACY_VERSION = '2025-11-25';

const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
};

/** Headers whose values the SEP-2243 `Mcp-Name` mirrors, per method. */
const NAME_FIELD = { 'resources/read': 'uri', 'tools/call': 'name', 'prompts/get': 'name' };

export class HttpMcpClient {
  /** @param {{ port: number, era: 'legacy' | 'modern', timeoutMs?: number, token?: string }} options `token`: sent as `Authorization: Bearer …` */
  constructor({ port, era, timeoutMs = 15_000, token }) {
    this.port = port;
    this.era = era;
    this.timeoutMs = timeoutMs;
    this.authorization = token === undefined ? undefined : `Bearer ${token}`;
    this.agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    this.sessionId = undefined;
    this.nextId = 1;
  }

  async initialize() {
    if (this.era === 'modern') return undefined;
    const { message, headers } = await this.post('initialize', {
      protocolVersion: LEGACY_VERSION,
      capabilities: {},
      clientInfo: { name: 'reservoir-bench', version: '1' },
    });
    const sid = headers['mcp-session-id'];
    if (typeof sid !== 'string') throw new Error('initialize: no Mcp-Session-Id in the response');
    this.sessionId = sid;
    const status = await this.postRaw(
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      'notifications/initialized',
    );
    if (status.status !== 202 && status.status !== 200)
      throw new Error(`notifications/initialized: HTTP ${status.status}`);
    return message.result;
  }

  /** Sends a request; resolves { message, headers, status }; rejects on transport trouble or non-2xx. */
  async post(method, params) {
    const id = this.nextId++;
    const body = {
      jsonrpc: '2.0',
      id,
      method,
      params: this.era === 'modern' ? { ...params, _meta: MODERN_META } : params,
    };
    const reply = await this.postRaw(body, method, params);
    if (reply.status < 200 || reply.status >= 300) {
      throw new Error(`${method}: HTTP ${reply.status}: ${reply.text.slice(0, 300)}`);
    }
    const message = parseReply(reply.text, reply.headers['content-type'] ?? '', id);
    if (message === undefined)
      throw new Error(
        `${method}: no JSON-RPC response with id ${id} in: ${reply.text.slice(0, 300)}`,
      );
    return { message, headers: reply.headers, status: reply.status };
  }

  /** Sends a request and returns its result; throws on a JSON-RPC error. */
  async request(method, params) {
    const { message } = await this.post(method, params);
    if (message.error !== undefined)
      throw new Error(`${method}: JSON-RPC ${message.error.code}: ${message.error.message}`);
    return message.result;
  }

  postRaw(body, method, params) {
    const payload = JSON.stringify(body);
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'content-length': Buffer.byteLength(payload),
      'mcp-protocol-version': this.era === 'modern' ? MODERN_VERSION : LEGACY_VERSION,
    };
    if (this.sessionId !== undefined) headers['mcp-session-id'] = this.sessionId;
    if (this.authorization !== undefined) headers.authorization = this.authorization;
    if (this.era === 'modern' && body.id !== undefined) {
      headers['mcp-method'] = method;
      const field = NAME_FIELD[method];
      if (field !== undefined && typeof params?.[field] === 'string')
        headers['mcp-name'] = params[field];
    }
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port: this.port,
          path: '/mcp',
          method: 'POST',
          headers,
          agent: this.agent,
          timeout: this.timeoutMs,
        },
        (res) => {
          const chunks = [];
          res.setEncoding('utf8');
          res.on('data', (c) => chunks.push(c));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, text: chunks.join('') }),
          );
          res.on('error', reject);
        },
      );
      req.on('timeout', () =>
        req.destroy(new Error(`${method}: no response within ${this.timeoutMs} ms`)),
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  close() {
    this.agent.destroy();
  }
}

/** The JSON-RPC message with `id` from a JSON or SSE (`event: message\ndata: {...}`) body. */
export function parseReply(text, contentType, id) {
  if (contentType.includes('text/event-stream')) {
    for (const event of text.split(/\r?\n\r?\n/)) {
      const data = event
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(l.startsWith('data: ') ? 6 : 5))
        .join('\n');
      if (data === '') continue;
      let message;
      try {
        message = JSON.parse(data);
      } catch {
        continue;
      }
      if (message?.id === id) return message;
    }
    return undefined;
  }
  if (text === '') return undefined;
  const parsed = JSON.parse(text);
  if (Array.isArray(parsed)) return parsed.find((m) => m?.id === id);
  return parsed;
}
