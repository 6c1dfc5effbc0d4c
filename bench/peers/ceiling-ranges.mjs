#!/usr/bin/env node
/**
 * Bench ceiling for byte ranges over stdio: newline-delimited JSON-RPC on stdin/stdout with no SDK
 * and no policy, registry or checks. Answers `initialize` (2025 handshake), ignores notifications,
 * and answers `resources/read` of `FILE?bytes=START-END` by reading the range with one positional
 * read and writing the same result line Reservoir writes (`{"result":{"contents":[{uri, mimeType,
 * blob}]},"jsonrpc":"2.0","id":N}`), the base64 encoded 64 KiB at a time into two reused slabs
 * that go to stdout as they are filled (a slab is refilled once its write called back), answers one
 * after another. This is about what a Node server can do on this machine for the same answers.
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

const slabs = [Buffer.allocUnsafeSlow((PIECE / 3) * 4), Buffer.allocUnsafeSlow((PIECE / 3) * 4)];
const writes = [undefined, undefined];

function written(chunk) {
  return new Promise((resolve, reject) =>
    process.stdout.write(chunk, (error) => (error ? reject(error) : resolve())),
  );
}

async function answer(message) {
  const { id, method, params } = message;
  if (id === undefined) return;
  if (method === 'initialize') {
    const result = {
      protocolVersion: params?.protocolVersion ?? '2025-11-25',
      capabilities: { resources: {} },
      serverInfo: { name: 'ceiling-ranges', version: '1.0.0' },
    };
    await written(`${JSON.stringify({ jsonrpc: '2.0', id, result })}\n`);
    return;
  }
  const uri = params?.uri;
  const match = typeof uri === 'string' ? /^(.*)\?bytes=(\d+)-(\d+)$/.exec(uri) : null;
  if (method !== 'resources/read' || match === null || match[1] !== base) {
    const error = { code: -32602, message: `Not served here: ${method} ${uri}` };
    await written(`${JSON.stringify({ jsonrpc: '2.0', id, error })}\n`);
    return;
  }
  const start = Number(match[2]);
  const length = Number(match[3]) - start + 1;
  const bytes = buffer.subarray(0, readSync(fd, buffer, 0, Math.min(length, buffer.length), start));
  process.stdout.write(
    `{"result":{"contents":[{"uri":${JSON.stringify(uri)},"mimeType":"application/octet-stream","blob":"`,
  );
  let slab = 0;
  for (let at = 0; at < bytes.length; at += PIECE) {
    await writes[slab];
    const n = slabs[slab].write(
      bytes.toString('base64', at, Math.min(bytes.length, at + PIECE)),
      0,
      'latin1',
    );
    writes[slab] = written(slabs[slab].subarray(0, n));
    slab ^= 1;
  }
  await Promise.all(writes);
  await written(`"}]},"jsonrpc":"2.0","id":${JSON.stringify(id)}}\n`);
}

/** Requests are answered one after another, in order. */
let queue = Promise.resolve();

let pending = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  pending += chunk;
  let nl;
  while ((nl = pending.indexOf('\n')) >= 0) {
    const line = pending.slice(0, nl);
    pending = pending.slice(nl + 1);
    if (line.trim() === '') continue;
    const message = JSON.parse(line);
    queue = queue.then(() => answer(message));
  }
});
process.stdin.on('end', () => process.exit(0));
