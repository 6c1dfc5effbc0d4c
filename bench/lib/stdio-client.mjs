/**
 * A deliberately thin MCP client over a child's stdio pipes: newline-delimited JSON-RPC, a map of
 * pending ids, the 2025 `initialize` + `notifications/initialized` handshake, and a closed-loop
 * load generator that keeps N requests in flight and times every one of them.
 */
import { spawnTracked, stopChild } from './proc.mjs';

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
    this.child = spawnTracked(command, args, options);
    this.pending = new Map();
    this.nextId = 1;
    this.parts = [];
    this.closed = false;
    /** Called with every notification the server sends (method, no id). */
    this.onNotification = undefined;
    this.child.stdout.setEncoding('utf8');
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
    // Only the new chunk is scanned for a newline, so a many-megabyte response line costs O(n).
    let start = 0;
    let nl;
    while ((nl = chunk.indexOf('\n', start)) >= 0) {
      this.parts.push(chunk.slice(start, nl));
      const line = this.parts.length === 1 ? this.parts[0] : this.parts.join('');
      this.parts = [];
      start = nl + 1;
      this.onLine(line);
    }
    if (start < chunk.length) this.parts.push(chunk.slice(start));
  }

  onLine(line) {
    if (line.trim() === '') return;
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      return; // not protocol output; ignore
    }
    if (message.method !== undefined) {
      if (message.id === undefined) this.onNotification?.(message);
      return; // server requests are not answered by this client
    }
    if (message.id === undefined) return;
    const entry = this.pending.get(message.id);
    if (entry === undefined) return;
    this.pending.delete(message.id);
    entry.resolve({ message, bytes: line.length + 1 }); // characters; the bench traffic is ASCII
  }

  /** Sends a request; resolves { message, bytes } (the raw response) — errors are left to the caller. */
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
