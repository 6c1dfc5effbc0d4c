/**
 * A deliberately thin MCP client over a child's stdio pipes: newline-delimited JSON-RPC, a map of
 * pending ids, the 2025 `initialize` + `notifications/initialized` handshake, and a closed-loop
 * load generator that keeps N requests in flight and times every one of them.
 *
 * With `{ decodeBlobs: true }` a long answer line carrying one blob is read by blob-line.mjs: its
 * base64 decoded straight from the pipe's bytes and the rest of the line parsed and checked, instead
 * of one `JSON.parse` of the whole line; the decoded bytes come back as `blob` beside the message.
 */
import { decodeBlobLine } from './blob-line.mjs';
import { spawnTracked, stopChild } from './proc.mjs';

const NEWLINE = 0x0a;
/** Lines at least this long are tried as blob answers when `decodeBlobs` is on. */
const BLOB_LINE_MIN = 256 * 1024;

export const LEGACY_VERSION = '2025-11-25';

export class JsonRpcError extends Error {
  constructor(method, error) {
    super(`${method} failed: JSON-RPC ${error?.code}: ${error?.message}`);
    this.rpc = error;
  }
}

export class StdioRpc {
  /** Spawns `command args` and speaks JSON-RPC over its pipes. */
  constructor(command, args, options = {}) {
    const { decodeBlobs: _, ...spawnOptions } = options;
    this.child = spawnTracked(command, args, spawnOptions);
    this.pending = new Map();
    this.nextId = 1;
    this.parts = [];
    this.partBytes = 0;
    this.decodeBlobs = options.decodeBlobs === true;
    this.closed = false;
    /** Called with every notification the server sends (method, no id). */
    this.onNotification = undefined;
    this.child.stdout.on('data', (chunk) => this.onData(chunk));
    this.child.stdin.on('error', () => undefined);
    this.child.once('exit', (code, signal) => {
      this.closed = true;
      const error = new Error(
        `server exited (code ${code}, signal ${signal}); stderr: ${this.child.stderrTail.trim().slice(-800)}`,
      );
      for (const { reject } of this.pending.values()) reject(error);
      this.pending.clear();
    });
  }

  get pid() {
    return this.child.pid;
  }

  onData(chunk) {
    // Only the new chunk is scanned for a newline, so a many-megabyte response line costs O(n);
    // its pieces are decoded once the line is whole (a UTF-8 character may straddle two chunks).
    let start = 0;
    let nl;
    while ((nl = chunk.indexOf(NEWLINE, start)) >= 0) {
      const pieces = this.parts;
      const length = this.partBytes + nl - start;
      if (nl > start) pieces.push(chunk.subarray(start, nl));
      this.parts = [];
      this.partBytes = 0;
      start = nl + 1;
      this.onLine(pieces, length);
    }
    if (start < chunk.length) {
      this.parts.push(chunk.subarray(start));
      this.partBytes += chunk.length - start;
    }
  }

  onLine(pieces, length) {
    if (length === 0) return;
    const decoded =
      this.decodeBlobs && length >= BLOB_LINE_MIN ? decodeBlobLine(pieces, length) : undefined;
    if (decoded !== undefined) return this.onMessage(decoded.message, length + 1, decoded.blob);
    const line = (pieces.length === 1 ? pieces[0] : Buffer.concat(pieces, length)).toString();
    if (line.trim() === '') return;
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      return; // not protocol output; ignore
    }
    this.onMessage(message, length + 1);
  }

  onMessage(message, bytes, blob) {
    if (message.method !== undefined) {
      if (message.id === undefined) this.onNotification?.(message);
      return; // server requests are not answered by this client
    }
    if (message.id === undefined) return;
    const entry = this.pending.get(message.id);
    if (entry === undefined) return;
    this.pending.delete(message.id);
    entry.resolve({ message, bytes, blob });
  }

  /**
   * Sends a request; resolves { message, bytes, blob } (the raw response, its size in bytes with
   * the newline, and a blob decoded by blob-line.mjs when `decodeBlobs` is on and the answer
   * carries one: its `blob` field in `message` is then "") — errors are left to the caller.
   */
  send(method, params) {
    if (this.closed) return Promise.reject(new Error('server has exited'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  }

  /** Sends a request and returns its result; throws JsonRpcError on an error response. */
  async request(method, params, timeoutMs = 30_000) {
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${method}: no response within ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    try {
      const { message } = await Promise.race([this.send(method, params), timeout]);
      if (message.error !== undefined) throw new JsonRpcError(method, message.error);
      return message.result;
    } finally {
      clearTimeout(timer);
    }
  }

  notify(method, params) {
    this.child.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }) })}\n`,
    );
  }

  async initialize(timeoutMs = 15_000) {
    const result = await this.request(
      'initialize',
      {
        protocolVersion: LEGACY_VERSION,
        capabilities: {},
        clientInfo: { name: 'reservoir-bench', version: '1' },
      },
      timeoutMs,
    );
    this.notify('notifications/initialized');
    return result;
  }

  close() {
    return stopChild(this.child);
  }
}

/**
 * Closed-loop load: `concurrency` workers each send, await, record, repeat — until `durationMs`
 * passes or `maxRequests` have been sent. `call()` returns a promise that rejects on failure.
 * Returns { count, seconds, rate, latencies (ms, Float64Array) }.
 */
export async function closedLoop(
  call,
  { concurrency, durationMs, maxRequests = 10_000_000, stallMs = 15_000 },
) {
  const latencies = new Float64Array(Math.min(maxRequests, 5_000_000));
  let sent = 0;
  let done = 0;
  const start = performance.now();
  const deadline = start + durationMs;
  const worker = async () => {
    while (sent < maxRequests && performance.now() < deadline) {
      sent += 1;
      const t0 = performance.now();
      await call();
      const t1 = performance.now();
      if (done < latencies.length) latencies[done] = t1 - t0;
      done += 1;
    }
  };
  let timer;
  const stall = new Promise((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(`load loop did not finish within ${durationMs + stallMs} ms (a request hung)`),
        ),
      durationMs + stallMs,
    );
  });
  try {
    await Promise.race([Promise.all(Array.from({ length: concurrency }, worker)), stall]);
  } finally {
    clearTimeout(timer);
  }
  const seconds = (performance.now() - start) / 1000;
  return {
    count: done,
    seconds,
    rate: done / seconds,
    latencies: latencies.subarray(0, Math.min(done, latencies.length)),
  };
}

/** Several closed loops run side by side (one per client) as one: total count and all latencies. */
export function mergeRuns(runs) {
  const latencies = new Float64Array(runs.reduce((n, r) => n + r.latencies.length, 0));
  let offset = 0;
  for (const r of runs) {
    latencies.set(r.latencies, offset);
    offset += r.latencies.length;
  }
  return { count: runs.reduce((n, r) => n + r.count, 0), latencies };
}
