#!/usr/bin/env node
/**
 * Bench ceiling for Streamable HTTP reads: a bare `node:http` JSON-RPC endpoint with keep-alive and
 * no SDK. POST /mcp answers in plain JSON, both eras with the same code: a 2025-style `initialize`
 * gets an `Mcp-Session-Id` (checked on later requests), a 2026-07-28 request (per-request `_meta`,
 * `Mcp-Method` header, no session) is answered directly. `resources/read` of the one file reads it
 * with `readFileSync`; notifications get 202. Nothing is validated beyond what routing needs: this
 * is the limit, not a server.
 *
 * Usage: node bench/peers/ceiling-http.mjs FILE PORT   (binds 127.0.0.1 only)
 * Prints `listening PORT` to stdout when ready.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [file, portArg] = process.argv.slice(2);
if (file === undefined || portArg === undefined) {
  process.stderr.write('usage: ceiling-http.mjs FILE PORT\n');
  process.exit(2);
}
const path = resolve(file);
const uri = pathToFileURL(path).href;
const sessions = new Set();

function send(res, status, body, headers = {}) {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

function answer(req, res, message) {
  const { id, method, params } = message;
  if (id === undefined) return send(res, 202);
  if (method === 'initialize') {
    const sid = randomUUID();
    sessions.add(sid);
    const result = {
      protocolVersion: params?.protocolVersion ?? '2025-11-25',
      capabilities: { resources: {} },
      serverInfo: { name: 'ceiling-http', version: '1.0.0' },
    };
    return send(res, 200, { jsonrpc: '2.0', id, result }, { 'mcp-session-id': sid });
  }
  const sid = req.headers['mcp-session-id'];
  if (sid !== undefined && !sessions.has(sid))
    return send(res, 404, {
      jsonrpc: '2.0',
      id,
      error: { code: -32001, message: 'Session not found' },
    });
  if (method === 'resources/read') {
    if (params?.uri !== uri)
      return send(res, 200, {
        jsonrpc: '2.0',
        id,
        error: { code: -32002, message: `Resource not found: ${params?.uri}` },
      });
    return send(res, 200, {
      jsonrpc: '2.0',
      id,
      result: { contents: [{ uri, mimeType: 'text/plain', text: readFileSync(path, 'utf8') }] },
    });
  }
  return send(res, 200, {
    jsonrpc: '2.0',
    id,
    error: { code: -32601, message: `Method not found: ${method}` },
  });
}

const http = createServer((req, res) => {
  if (req.method !== 'POST' || (req.url ?? '/').split('?')[0] !== '/mcp')
    return send(res, 404, {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, message: 'not found' },
    });
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let message;
    try {
      message = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return send(res, 400, {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32700, message: 'Parse error' },
      });
    }
    answer(req, res, message);
  });
});
http.keepAliveTimeout = 10_000;
http.listen(Number(portArg), '127.0.0.1', () => {
  process.stdout.write(`listening ${http.address().port}\n`);
});
const stop = () => {
  http.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 500).unref();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
