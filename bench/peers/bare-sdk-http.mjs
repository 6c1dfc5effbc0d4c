#!/usr/bin/env node
/**
 * Bench peer for the Streamable HTTP benchmark: node:http plus the SDK's
 * `NodeStreamableHTTPServerTransport` (from `@modelcontextprotocol/node`) with 2025-era sessions,
 * the pattern the SDK documents: an `initialize` POST without a session opens a new transport and a
 * new `McpServer` (one per client), later requests carry `Mcp-Session-Id`. One file is registered
 * as a resource and read with `fs.promises.readFile` on every request.
 *
 * Usage: node bench/peers/bare-sdk-http.mjs FILE PORT   (binds 127.0.0.1 only)
 * Prints `listening PORT` to stdout when ready.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { basename, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import { isInitializeRequest, McpServer } from '@modelcontextprotocol/server';

const [file, portArg] = process.argv.slice(2);
if (file === undefined || portArg === undefined) {
  process.stderr.write('usage: bare-sdk-http.mjs FILE PORT\n');
  process.exit(2);
}
const path = resolve(file);
const uri = pathToFileURL(path).href;
const MAX_BODY = 4 * 1024 * 1024;
const MAX_SESSIONS = 1000;

/** @type {Map<string, NodeStreamableHTTPServerTransport>} */
const sessions = new Map();

function newServer() {
  const server = new McpServer(
    { name: 'bare-sdk-http', version: '1.0.0' },
    { capabilities: { resources: {} } },
  );
  server.registerResource(basename(path), uri, { mimeType: 'text/plain' }, async (u) => ({
    contents: [{ uri: u.href, mimeType: 'text/plain', text: await readFile(path, 'utf8') }],
  }));
  return server;
}

function readBody(req) {
  return new Promise((resolveBody, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        reject(new Error('body too large'));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolveBody(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function fail(res, status, message) {
  res
    .writeHead(status, { 'content-type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message } }));
}

const http = createServer(async (req, res) => {
  try {
    if ((req.url ?? '/').split('?')[0] !== '/mcp') return fail(res, 404, 'not found');
    const id = req.headers['mcp-session-id'];
    if (typeof id === 'string') {
      const transport = sessions.get(id);
      if (transport === undefined) return fail(res, 404, 'Session not found');
      const body = req.method === 'POST' ? JSON.parse(await readBody(req)) : undefined;
      await transport.handleRequest(req, res, body);
      return;
    }
    if (req.method !== 'POST') return fail(res, 400, 'Mcp-Session-Id header is required');
    const body = JSON.parse(await readBody(req));
    if (!isInitializeRequest(body)) return fail(res, 400, 'no session; send initialize first');
    if (sessions.size >= MAX_SESSIONS) return fail(res, 503, 'too many sessions');
    const transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => sessions.set(sid, transport),
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    };
    await newServer().connect(transport);
    await transport.handleRequest(req, res, body);
  } catch (error) {
    if (!res.headersSent) fail(res, 500, String(error?.message ?? error));
    else res.end();
  }
});
http.keepAliveTimeout = 10_000;
http.listen(Number(portArg), '127.0.0.1', () => {
  process.stdout.write(`listening ${http.address().port}\n`);
});
const stop = () => {
  for (const t of sessions.values()) void t.close();
  http.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 1000).unref();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
