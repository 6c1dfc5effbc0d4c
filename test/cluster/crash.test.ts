// Issue 25, item 7: the load balancer config survives a crash. Two `reservoir serve` processes in
// cluster mode behind a real HAProxy running deploy/haproxy.cfg itself (test/cluster/haproxy.ts);
// a 2025-era SDK client (one session, its record in Redis) and a 2026-07-28 one send about 50
// reads a second through it, paced but never waiting on each other, while instance A is killed
// with SIGKILL — no drain: connections refused, requests in flight cut off unanswered. HAProxy
// retries each on B (retry-on conn-failure empty-response junk-response, redispatch), B adopts the
// session, the health check takes A out; A then starts again and is taken back. Not one read fails.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import {
  Cleanup,
  connectHttp,
  spawnHttpServer,
  type HttpServerProcess,
} from '../helpers/clients.js';
import { fileUri, makeTempDir, removeTree } from '../helpers/tree.js';
import { waitFor } from '../subscriptions/harness.js';
import { REDIS_URL, SECRET, uniquePrefix } from './harness.js';
import { freePort, HAPROXY, startHaproxy } from './haproxy.js';

/** Reads started a second, across both clients. */
const READS_PER_SECOND = 50;

const cleanup = new Cleanup();
let dir: string;
let config: string;

beforeAll(async () => {
  await ensureBuilt();
  dir = makeTempDir('reservoir-crash-');
  mkdirSync(join(dir, 'docs'));
  writeFileSync(join(dir, 'docs', 'a.md'), 'alpha\n');
  config = join(dir, 'reservoir.yaml');
  writeFileSync(
    config,
    `sources:\n  - type: files\n    root: ${join(dir, 'docs')}\nserver:\n  redis:\n    url: ${REDIS_URL ?? 'redis://127.0.0.1:6379'}\n    keyPrefix: "${uniquePrefix()}"\n`,
  );
}, 300_000); // ensureBuilt may rebuild dist/ first
afterAll(async () => {
  await cleanup.run();
  removeTree(dir);
});

function startInstance(port: number): Promise<HttpServerProcess> {
  return spawnHttpServer([], ['--config', config, '--http', `127.0.0.1:${port}`], cleanup, {
    ...process.env,
    RESERVOIR_SECRET: SECRET,
  });
}

/**
 * Starts a read every 1000/rate ms, taking the clients in turn, without waiting for earlier ones:
 * the load does not slow down while an instance is dying. Counts answers, keeps every failure.
 */
function pacedReads(
  clients: Client[],
  uri: string,
  rate: number,
): { ok: () => number; failures: unknown[]; stop: () => Promise<void> } {
  let ok = 0;
  let sent = 0;
  const failures: unknown[] = [];
  const inFlight = new Set<Promise<void>>();
  const timer = setInterval(() => {
    const client = clients[sent % clients.length]!;
    sent += 1;
    const read = client.readResource({ uri }).then(
      (result) => {
        if ((result.contents[0] as { text?: string }).text === 'alpha\n') ok += 1;
        else failures.push(result);
      },
      (error: unknown) => void failures.push(error),
    );
    inFlight.add(read);
    void read.finally(() => inFlight.delete(read));
  }, 1000 / rate);
  return {
    ok: () => ok,
    failures,
    stop: async () => {
      clearInterval(timer);
      await Promise.all([...inFlight]);
    },
  };
}

describe.skipIf(REDIS_URL === undefined || HAPROXY === undefined)(
  'a crash behind HAProxy (deploy/haproxy.cfg)',
  () => {
    it('fails no read of either era while one of two instances is SIGKILLed under load, and takes it back when it restarts', async () => {
      const ports = [await freePort(), await freePort()];
      const instances = [await startInstance(ports[0]!), await startInstance(ports[1]!)];
      const haproxy = await startHaproxy(instances.map((i) => i.url));
      cleanup.add(() => haproxy.stop());
      const uri = fileUri(join(dir, 'docs'), 'a.md');
      const legacy = await connectHttp('2025', haproxy.url, cleanup);
      const modern = await connectHttp('2026', haproxy.url, cleanup);
      const load = pacedReads([legacy.client, modern.client], uri, READS_PER_SECOND);
      cleanup.add(() => load.stop());
      await waitFor(
        () => load.ok() >= 50,
        'reads to flow through HAProxy to both instances',
        30_000,
      );

      // The crash: no drain, no goodbye.
      instances[0]!.child.kill('SIGKILL');
      expect(await instances[0]!.exited).toEqual({ code: null, signal: 'SIGKILL' });
      await waitFor(
        () => haproxy.downs().some((line) => line.includes('/m0 ')),
        () =>
          `HAProxy's health check to take the killed instance out; stderr so far: ${haproxy.downs().join(' | ')}`,
        30_000,
      );
      const afterCrash = load.ok();
      await waitFor(
        () => load.ok() >= afterCrash + 100,
        'reads to go on through the survivor',
        30_000,
      );

      // It comes back on its port; the health check takes it back, and reads go on over both.
      instances[0] = await startInstance(ports[0]!);
      await waitFor(
        () => haproxy.ups().some((line) => line.includes('/m0 ')),
        'HAProxy to take the restarted instance back',
        30_000,
      );
      const afterRestart = load.ok();
      await waitFor(
        () => load.ok() >= afterRestart + 100,
        'reads to flow after the restart',
        30_000,
      );

      await load.stop();
      expect(load.failures).toEqual([]);
      expect(load.ok()).toBeGreaterThan(250);
    }, 180_000);
  },
);
