/**
 * Child-process plumbing for the bench: spawn with tracking (every child is killed on exit, error
 * or signal), memory readings from /proc, a free loopback port, and bounded waits.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';

/** @type {Set<import('node:child_process').ChildProcess>} */
const children = new Set();

/** Spawns `node ...args` (or another command) and tracks it so it is always killed. */
export function spawnTracked(command, args, options = {}) {
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], ...options });
  children.add(child);
  child.stderrTail = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk) => {
    child.stderrTail = (child.stderrTail + chunk).slice(-4000);
  });
  child.exited = new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );
  child.once('error', () => children.delete(child));
  return child;
}

/** Ends a child: closes stdin, then SIGTERM, then SIGKILL; resolves when it has exited. */
export async function stopChild(child, graceMs = 1500) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  try {
    child.stdin?.end();
  } catch {
    /* already closed */
  }
  const exited = child.exited;
  if (await within(exited, 300)) return;
  child.kill('SIGTERM');
  if (await within(exited, graceMs)) return;
  child.kill('SIGKILL');
  await within(exited, 2000);
}

/** Synchronous last resort on process exit. */
export function killAllChildren() {
  for (const child of children) {
    try {
      child.kill('SIGKILL');
    } catch {
      /* gone */
    }
  }
  children.clear();
}

async function within(promise, ms) {
  let timer;
  const timeout = new Promise((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const done = await Promise.race([promise.then(() => true), timeout]);
  clearTimeout(timer);
  return done;
}

/** { rss, hwm } in bytes from /proc/PID/status (undefined where /proc is missing). */
export function memoryOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name) => {
      const m = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status);
      return m === null ? undefined : Number(m[1]) * 1024;
    };
    return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
  } catch {
    return { rss: undefined, hwm: undefined };
  }
}

/** Samples VmRSS of `pid` every `intervalMs`; stop() returns { peak, samples }. */
export function sampleRss(pid, intervalMs = 50) {
  let peak = 0;
  const samples = [];
  const take = () => {
    const { rss } = memoryOf(pid);
    if (rss !== undefined) {
      peak = Math.max(peak, rss);
      samples.push(rss);
    }
  };
  take();
  const timer = setInterval(take, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      take();
      return { peak, samples };
    },
  };
}

/** A free TCP port on 127.0.0.1 (tiny race between closing it and the server binding it). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Waits until 127.0.0.1:port accepts a connection (bounded by timeoutMs). */
export async function waitForPort(port, timeoutMs, child) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child !== undefined && child.exitCode !== null) {
      throw new Error(`server exited (${child.exitCode}) before listening: ${child.stderrTail}`);
    }
    const ok = await new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`nothing listening on 127.0.0.1:${port} after ${timeoutMs} ms`);
}

/** Tracks a pid spawned by someone else (e.g. the SDK's StdioClientTransport) for last-resort kill. */
const foreignPids = new Set();
export function trackPid(pid) {
  if (pid) foreignPids.add(pid);
}
export function untrackPid(pid) {
  foreignPids.delete(pid);
}
export function killForeignPids() {
  for (const pid of foreignPids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  foreignPids.clear();
}

/**
 * Spawns a server that listens on a free port (`argsFor(port)` builds its argv, `optionsFor(port)`
 * its spawn options) and resolves once the port accepts connections: { child, port }. The child is
 * stopped if it never does.
 */
export async function spawnListening(command, argsFor, optionsFor = () => ({})) {
  const port = await freePort();
  const child = spawnTracked(command, argsFor(port), optionsFor(port));
  try {
    await waitForPort(port, 20_000, child);
  } catch (error) {
    await stopChild(child);
    throw error;
  }
  return { child, port };
}
