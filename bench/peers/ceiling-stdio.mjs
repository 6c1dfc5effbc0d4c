#!/usr/bin/env node
/**
 * Bench ceiling for stdio reads: newline-delimited JSON-RPC on stdin/stdout with no SDK at all.
 * Answers `initialize` (2025 handshake), ignores notifications, and answers `resources/read` for
 * the one file with a synchronous `readFileSync` and one `JSON.stringify` per answer. Anything
 * else gets -32601. This is the limit a Node MCP server can reach on this machine: no validation,
 * no routing table, no per-request objects beyond the answer itself.
 *
 * Usage: node bench/peers/ceiling-stdio.mjs FILE
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const file = process.argv[2];
if (file === undefined) {
  process.stderr.write('usage: ceiling-stdio.mjs FILE\n');
  process.exit(2);
}
const path = resolve(file);
const uri = pathToFileURL(path).href;

function answer(message) {
  const { id, method, params } = message;
  if (id === undefined) return undefined;
  if (method === 'resources/read') {
    if (params?.uri !== uri)
      return {
        jsonrpc: '2.0',
        id,
        error: { code: -32002, message: `Resource not found: ${params?.uri}` },
      };
    return {
      jsonrpc: '2.0',
      id,
      result: { contents: [{ uri, mimeType: 'text/plain', text: readFileSync(path, 'utf8') }] },
    };
  }
  if (method === 'initialize') {
    return {
      jsonrpc: '2.0',
      id,
      result: {
        protocolVersion: params?.protocolVersion ?? '2025-11-25',
        capabilities: { resources: {} },
        serverInfo: { name: 'ceiling-stdio', version: '1.0.0' },
      },
    };
  }
  if (method === 'ping') return { jsonrpc: '2.0', id, result: {} };
  return { jsonrpc: '2.0', id, error: { code: -32601, message: `Method not found: ${method}` } };
}

let pending = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  pending += chunk;
  let out = '';
  let nl;
  while ((nl = pending.indexOf('\n')) >= 0) {
    const line = pending.slice(0, nl);
    pending = pending.slice(nl + 1);
    if (line.trim() === '') continue;
    let reply;
    try {
      reply = answer(JSON.parse(line));
    } catch {
      reply = { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } };
    }
    if (reply !== undefined) out += JSON.stringify(reply) + '\n';
  }
  if (out !== '') process.stdout.write(out);
});
process.stdin.on('end', () => process.exit(0));
