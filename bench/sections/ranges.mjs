/**
 * Byte ranges end to end: a 2 GiB file (sparse, with a 1 MiB random island every 64 MiB) read
 * whole in `?bytes=START-END` ranges of the default read cap (7 MiB, whose base64 still fits the SDK
 * client's 10 MiB stdio message) over stdio, `IN_FLIGHT` requests at a time, by the bench's thin
 * JSON-RPC client, which decodes every range and hashes the reassembled file. The client reads each
 * answer as a client expecting large blobs can (bench/lib/blob-line.mjs): the base64 decoded
 * straight from the pipe's bytes, the rest of the line `JSON.parse`d and its shape checked.
 *
 * The same client first reads the same ranges from the no-SDK ceiling (bench/peers/ceiling-ranges.mjs:
 * a bare Node loop writing the same result lines), so the row shows Reservoir's ratio to what a
 * Node server reaches on this machine under the same load. Prints the payload rate (decoded bytes
 * per second), CPU per range of the server and of the client, the server's RSS before and after
 * and its peak, and checks the SHA-256 against the file's own. Target: ≥ 100 MB/s with memory flat
 * (peak − before ≤ 256 MB).
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
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cpuMicros } from '../lib/cpu.mjs';
import { trackPid, untrackPid } from '../lib/proc.mjs';
import { JsonRpcError, StdioRpc } from '../lib/stdio-client.mjs';
import { fmtInt, fmtRatio, printTable } from '../lib/stats.mjs';

const SIZE = 2 * 1024 ** 3;
const RANGE = 7 * 1024 * 1024;
const ISLAND = 1024 * 1024;
const ISLAND_EVERY = 64 * 1024 * 1024;
const IN_FLIGHT = 2;
const TARGET_MB_S = 100;
const FLAT_MB = 256;
const CEILING = join(dirname(fileURLToPath(import.meta.url)), '../peers/ceiling-ranges.mjs');

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
  try {
    progress('ranges: hashing the 2 GiB file locally');
    const expected = await sha256File(file);
    const uri = pathToFileURL(file).href;
    progress(`ranges: the no-SDK ceiling, ${fmtInt(Math.ceil(SIZE / RANGE))} ranges`);
    const ceiling = await readWhole([CEILING, file], uri, expected);
    progress('ranges: Reservoir');
    const ours = await readWhole([paths.cli, 'serve', dir, '--log-level', 'warn'], uri, expected);
    const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    const row = (name, r) => [
      name,
      r.rate.toFixed(1),
      fmtRatio(r.rate, ceiling.rate),
      r.seconds.toFixed(1),
      r.serverMs.toFixed(1),
      r.clientMs.toFixed(1),
      `${fmtInt(r.before.rss / 1e6)} MB`,
      `${fmtInt(r.after.rss / 1e6)} MB`,
      `${fmtInt(r.after.peak / 1e6)} MB`,
      'matches',
    ];
    printTable(
      `Byte ranges: a 2 GiB file read whole in ${fmtInt(ours.ranges)} ranges of 7 MiB over stdio (${IN_FLIGHT} in flight; load after: ${load})`,
      [
        'server',
        'payload MB/s',
        '÷ ceiling',
        'seconds',
        'server CPU ms/range',
        'client CPU ms/range',
        'RSS before',
        'after',
        'peak',
        'SHA-256',
      ],
      [row('no-SDK ceiling', ceiling), row('Reservoir', ours)],
    );
    target(
      `ranges: 2 GiB in byte ranges over stdio ≥ ${TARGET_MB_S} MB/s`,
      `${ours.rate.toFixed(1)} MB/s (ceiling ${ceiling.rate.toFixed(1)}, ${fmtRatio(ours.rate, ceiling.rate)})`,
      ours.rate >= TARGET_MB_S,
    );
    target(
      `ranges: server memory flat (peak − before ≤ ${FLAT_MB} MB)`,
      `${fmtInt((ours.after.peak - ours.before.rss) / 1e6)} MB`,
      ours.after.peak - ours.before.rss <= FLAT_MB * 1e6,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Reads the whole file from the server `node ...args` in ranges, IN_FLIGHT at a time, hashed in
 * order; throws unless the hash is `expected`. Returns the rate, CPU per range and memory.
 */
async function readWhole(args, uri, expected) {
  const rpc = new StdioRpc(process.execPath, args, { decodeBlobs: true });
  trackPid(rpc.pid);
  try {
    await rpc.initialize();
    const before = memory(rpc.pid);
    const hash = createHash('sha256');
    const starts = [];
    for (let at = 0; at < SIZE; at += RANGE) starts.push(at);
    const read = async (start) => {
      const end = Math.min(SIZE, start + RANGE) - 1;
      const { message, blob } = await rpc.send('resources/read', {
        uri: `${uri}?bytes=${start}-${end}`,
      });
      if (message.error !== undefined) throw new JsonRpcError('resources/read', message.error);
      const content = message.result.contents[0];
      const bytes =
        blob ??
        (content.blob !== undefined
          ? Buffer.from(content.blob, 'base64')
          : Buffer.from(content.text));
      if (bytes.length !== end - start + 1)
        throw new Error(`range ${start}-${end}: ${bytes.length} bytes`);
      return bytes;
    };
    const serverCpu = cpuMicros(rpc.pid);
    const clientCpu = process.cpuUsage();
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
    const client = process.cpuUsage(clientCpu);
    const serverMs = (cpuMicros(rpc.pid) - serverCpu) / 1000 / starts.length;
    const after = memory(rpc.pid);
    if (hash.digest('hex') !== expected)
      throw new Error(`ranges (${args[0]}): the reassembled file differs from the file`);
    return {
      ranges: starts.length,
      rate: SIZE / 1e6 / seconds,
      seconds,
      serverMs,
      clientMs: (client.user + client.system) / 1000 / starts.length,
      before,
      after,
    };
  } finally {
    await rpc.close();
    untrackPid(rpc.pid);
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
