// Issue 25, item 7: the load balancer config survives a crash. Two `reservoir serve` processes in
// cluster mode behind a real HAProxy running deploy/haproxy.cfg itself (test/cluster/haproxy.ts);
// a 2025-era SDK client (one session, its record in Redis) and a 2026-07-28 one send about 50
// reads a second through it, paced but never waiting on each other, while instance A is killed
// with SIGKILL — no drain: connections refused, requests in flight cut off unanswered. HAProxy
// retries each on B (retry-on conn-failure empty-response junk-response, redispatch), B adopts the
// session, the health check takes A out; A then starts again and is taken back. Not one read fails.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { Cleanup } from '../helpers/clients.js';
import { removeTree } from '../helpers/tree.js';
import { waitFor } from '../subscriptions/harness.js';
import { HAPROXY } from './haproxy.js';
import { pacedReads, startPair, writePairFiles, type PairFiles } from './haproxy-pair.js';
import { REDIS_URL } from './harness.js';

/** Reads started a second, across both clients. */
const READS_PER_SECOND = 50;

const cleanup = new Cleanup();
let files: PairFiles;

beforeAll(async () => {
  await ensureBuilt();
  files = writePairFiles('reservoir-crash-');
}, 300_000); // ensureBuilt may rebuild dist/ first
afterAll(async () => {
  await cleanup.run();
  removeTree(files.dir);
});

describe.skipIf(REDIS_URL === undefined || HAPROXY === undefined)(
  'a crash behind HAProxy (deploy/haproxy.cfg)',
  () => {
    it('fails no read of either era while one of two instances is SIGKILLed under load, and takes it back when it restarts', async () => {
      const { ports, instances, haproxy, legacy, modern, start } = await startPair(files, cleanup);
      const load = pacedReads([legacy, modern], files.uri, READS_PER_SECOND);
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
      instances[0] = await start(ports[0]!);
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
