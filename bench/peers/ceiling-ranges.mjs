#!/usr/bin/env node
/**
 * Bench ceiling for byte ranges over stdio: newline-delimited JSON-RPC on stdin/stdout with no SDK
 * and no policy, registry or checks. Answers `initialize` (2025 handshake), ignores notifications,
 * and answers `resources/read` of `FILE?bytes=START-END` by reading the range with one positional
 * read and writing the same result line Reservoir writes (`{"result":{"contents":[{uri, mimeType,
 * blob}]},"jsonrpc":"2.0","id":N}`), the base64 encoded in pieces that go to stdout as they are
 * made. This is about what a Node server can do on this machine for the same answers.
 *
 * Usage: node bench/peers/ceiling-ranges.mjs FILE
 */
import { openSync, readSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const file = process.argv[2];
if (file === undefined) {
  process.stderr.write('usage: ceiling-ranges.mjs FILE\n');
  process.exit(2);
}
const fd = openSync(resolve(file), 'r');
const base = pathToFileURL(resolve(file)).href;
/** Base64 pieces: a multiple of 3 bytes each. */
const PIECE = 48 * 1024;
const buffer = Buffer.allocUnsafe(8 * 1024 * 1024);

function answer(message) {
  const { id, method, params } = message;
  if (id === undefined) return;
  if (method === 'initialize') {
    const result = {
      protocolVersion: params?.protocolVersion ?? '2025-11-25',
      capabilities: { resources: {} },
      serverInfo: { name: 'ceiling-ranges', version: '1.0.0' },
    };
    process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id, result })}\n`);
    return;
  }
  const uri = params?.uri;
  const match = typeof uri === 'string' ? /^(.*)\?bytes=(\d+)-(\d+)$/.exec(uri) : null;
  if (method !== 'resources/read' || match === null || match[1] !== base) {
    const error = { code: -32602, message: `Not served here: ${method} ${uri}` };
    process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id, error })}\n`);
    return;
  }
  const start = Number(match[2]);
  const length = Number(match[3]) - start + 1;
  const bytes = buffer.subarray(0, readSync(fd, buffer, 0, Math.min(length, buffer.length), start));
  const out = process.stdout;
  out.cork();
  out.write(
    `{"result":{"contents":[{"uri":${JSON.stringify(uri)},"mimeType":"application/octet-stream","blob":"`,
  );
  for (let at = 0; at < bytes.length; at += PIECE)
    out.write(bytes.toString('base64', at, Math.min(bytes.length, at + PIECE)));
  out.write(`"}]},"jsonrpc":"2.0","id":${JSON.stringify(id)}}\n`);
  out.uncork();
}

let pending = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  pending += chunk;
  let nl;
  while ((nl = pending.indexOf('\n')) >= 0) {
    const line = pending.slice(0, nl);
    pending = pending.slice(nl + 1);
    if (line.trim() !== '') answer(JSON.parse(line));
  }
});
process.stdin.on('end', () => process.exit(0));
