/**
 * Byte ranges end to end: a 2 GiB file (sparse, with a 1 MiB random island every 64 MiB) read
 * whole in `?bytes=START-END` ranges of the default read cap (7 MiB, whose base64 still fits the SDK
 * client's 10 MiB stdio message) over stdio, `IN_FLIGHT` requests at a time, by the bench's thin
 * JSON-RPC client, which decodes every range and hashes the reassembled file. Prints the payload
 * rate (decoded bytes per second), the server's RSS before and after and its peak, and checks the
 * SHA-256 against the file's own. Target: ≥ 100 MB/s with memory flat (peak − before ≤ 256 MB).
 *
 * Usage: npm run build && node bench/run.mjs --only ranges
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  createReadStream,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { trackPid, untrackPid } from '../lib/proc.mjs';
import { JsonRpcError, StdioRpc } from '../lib/stdio-client.mjs';
import { fmtInt, printTable } from '../lib/stats.mjs';

const SIZE = 2 * 1024 ** 3;
const RANGE = 7 * 1024 * 1024;
const ISLAND = 1024 * 1024;
const ISLAND_EVERY = 64 * 1024 * 1024;
const IN_FLIGHT = 2;
const TARGET_MB_S = 100;
const FLAT_MB = 256;

export async function rangesSection(ctx) {
  const { paths, progress, target } = ctx;
  const dir = join(paths.benchDir, 'ranges');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'two-gib.bin');
  const fd = openSync(file, 'w');
  const island = randomBytes(ISLAND);
  for (let at = 0; at < SIZE; at += ISLAND_EVERY) writeSync(fd, island, 0, ISLAND, at);
  writeSync(fd, Buffer.from([0x2a]), 0, 1, SIZE - 1);
  closeSync(fd);
  progress('ranges: hashing the 2 GiB file locally');
  const expected = await sha256File(file);

  const rpc = new StdioRpc(process.execPath, [paths.cli, 'serve', dir, '--log-level', 'warn']);
  trackPid(rpc.pid);
  try {
    await rpc.initialize();
    const uri = pathToFileURL(file).href;
    const before = memory(rpc.pid);
    const hash = createHash('sha256');
    const starts = [];
    for (let at = 0; at < SIZE; at += RANGE) starts.push(at);
    const read = async (start) => {
      const end = Math.min(SIZE, start + RANGE) - 1;
      const { message } = await rpc.send('resources/read', { uri: `${uri}?bytes=${start}-${end}` });
      if (message.error !== undefined) throw new JsonRpcError('resources/read', message.error);
      const content = message.result.contents[0];
      const bytes =
        content.blob !== undefined
          ? Buffer.from(content.blob, 'base64')
          : Buffer.from(content.text);
      if (bytes.length !== end - start + 1)
        throw new Error(`range ${start}-${end}: ${bytes.length} bytes`);
      return bytes;
    };
    progress(`ranges: reading ${fmtInt(starts.length)} ranges of ${RANGE} bytes`);
    const t0 = performance.now();
    // Ranges are requested IN_FLIGHT ahead and hashed in order.
    const pending = [];
    let next = 0;
    while (next < starts.length && pending.length < IN_FLIGHT) pending.push(read(starts[next++]));
    while (pending.length > 0) {
      hash.update(await pending.shift());
      if (next < starts.length) pending.push(read(starts[next++]));
    }
    const seconds = (performance.now() - t0) / 1000;
    const after = memory(rpc.pid);
    const digest = hash.digest('hex');
    if (digest !== expected) throw new Error('ranges: the reassembled file differs from the file');
    const rate = SIZE / 1e6 / seconds;
    printTable(
      `Byte ranges: a 2 GiB file read whole in ${fmtInt(starts.length)} ranges of 7 MiB over stdio (${IN_FLIGHT} in flight)`,
      ['payload MB/s', 'seconds', 'server RSS before', 'after', 'peak', 'SHA-256'],
      [
        [
          rate.toFixed(1),
          seconds.toFixed(1),
          `${fmtInt(before.rss / 1e6)} MB`,
          `${fmtInt(after.rss / 1e6)} MB`,
          `${fmtInt(after.peak / 1e6)} MB`,
          'matches',
        ],
      ],
    );
    target(
      `ranges: 2 GiB in byte ranges over stdio ≥ ${TARGET_MB_S} MB/s`,
      `${rate.toFixed(1)} MB/s`,
      rate >= TARGET_MB_S,
    );
    target(
      `ranges: server memory flat (peak − before ≤ ${FLAT_MB} MB)`,
      `${fmtInt((after.peak - before.rss) / 1e6)} MB`,
      after.peak - before.rss <= FLAT_MB * 1e6,
    );
  } finally {
    rpc.close?.();
    untrackPid(rpc.pid);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Resident and peak resident memory of `pid`, bytes (Linux /proc). */
function memory(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

function sha256File(path) {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(path, { highWaterMark: 4 * 1024 * 1024 })
      .on('data', (chunk) => hash.update(chunk))
      .on('error', reject)
      .on('end', () => resolve(hash.digest('hex')));
  });
}
