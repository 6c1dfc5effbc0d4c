/**
 * The fixture of the crash and rolling-restart tests: two `reservoir serve` processes in cluster
 * mode (one files source holding docs/a.md = "alpha\n", a key prefix of their own in Redis) behind
 * a real HAProxy running deploy/haproxy.cfg, a 2025-era and a 2026-07-28 SDK client connected
 * through it, and the two read loads those tests drive (paced, and back to back).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import {
  connectHttp,
  spawnHttpServer,
  type Cleanup,
  type HttpServerProcess,
} from '../helpers/clients.js';
import { freePort } from '../helpers/ports.js';
import { fileUri, makeTempDir } from '../helpers/tree.js';
import { startHaproxy } from './haproxy.js';
import { REDIS_URL, SECRET, uniquePrefix } from './harness.js';

/** What every read of the fixture's one file answers. */
const TEXT = 'alpha\n';

export interface PairFiles {
  /** The temporary directory (remove it after). */
  dir: string;
  /** The instances' config file. */
  config: string;
  /** The one file's URI. */
  uri: string;
}

/** Writes the source and the cluster-mode config the instances share. */
export function writePairFiles(prefix: string): PairFiles {
  const dir = makeTempDir(prefix);
  mkdirSync(join(dir, 'docs'));
  writeFileSync(join(dir, 'docs', 'a.md'), TEXT);
  const config = join(dir, 'reservoir.yaml');
  writeFileSync(
    config,
    `sources:\n  - type: files\n    root: ${join(dir, 'docs')}\nserver:\n  redis:\n    url: ${REDIS_URL ?? 'redis://127.0.0.1:6379'}\n    keyPrefix: "${uniquePrefix()}"\n`,
  );
  return { dir, config, uri: fileUri(join(dir, 'docs'), 'a.md') };
}

export interface Pair {
  ports: number[];
  /** The running instances, by index (replace an entry with what `start` returns on a restart). */
  instances: HttpServerProcess[];
  haproxy: Awaited<ReturnType<typeof startHaproxy>>;
  legacy: Client;
  modern: Client;
  /** Starts an instance on `port` (again). */
  start(port: number): Promise<HttpServerProcess>;
}

/** Two instances on free ports, HAProxy in front, and a client of each era through it. */
export async function startPair(files: PairFiles, cleanup: Cleanup): Promise<Pair> {
  const start = (port: number): Promise<HttpServerProcess> =>
    spawnHttpServer([], ['--config', files.config, '--http', `127.0.0.1:${port}`], cleanup, {
      ...process.env,
      RESERVOIR_SECRET: SECRET,
    });
  const ports = [await freePort(), await freePort()];
  const instances = [await start(ports[0]!), await start(ports[1]!)];
  const haproxy = await startHaproxy(instances.map((i) => i.url));
  cleanup.add(() => haproxy.stop());
  const legacy = (await connectHttp('2025', haproxy.url, cleanup)).client;
  const modern = (await connectHttp('2026', haproxy.url, cleanup)).client;
  return { ports, instances, haproxy, legacy, modern, start };
}

/** A read load: answers counted, every failure kept. */
export interface Load {
  ok(): number;
  failures: unknown[];
  stop(): Promise<void>;
}

/** One read of the fixture's file, counted into `ok` or kept in `failures`. */
async function readOnce(
  client: Client,
  uri: string,
  counted: { ok: number; failures: unknown[] },
): Promise<void> {
  try {
    const result = await client.readResource({ uri });
    if ((result.contents[0] as { text?: string }).text === TEXT) counted.ok += 1;
    else counted.failures.push(result);
  } catch (error) {
    counted.failures.push(error);
  }
}

/**
 * Starts a read every 1000/rate ms, taking the clients in turn, without waiting for earlier ones:
 * the load does not slow down while an instance is dying.
 */
export function pacedReads(clients: Client[], uri: string, rate: number): Load {
  const counted = { ok: 0, failures: [] as unknown[] };
  let sent = 0;
  const inFlight = new Set<Promise<void>>();
  const timer = setInterval(() => {
    const read = readOnce(clients[sent % clients.length]!, uri, counted);
    sent += 1;
    inFlight.add(read);
    void read.finally(() => inFlight.delete(read));
  }, 1000 / rate);
  return {
    ok: () => counted.ok,
    failures: counted.failures,
    stop: async () => {
      clearInterval(timer);
      await Promise.all([...inFlight]);
    },
  };
}

/** `workers` loops reading through `client` back to back until stopped. */
export function readLoops(client: Client, uri: string, workers: number): Load {
  const counted = { ok: 0, failures: [] as unknown[] };
  let running = true;
  const loops = Array.from({ length: workers }, async () => {
    while (running) await readOnce(client, uri, counted);
  });
  return {
    ok: () => counted.ok,
    failures: counted.failures,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}
