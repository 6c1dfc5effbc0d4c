// Issue 25, item 1: a rolling restart behind HAProxy loses no request. Two `reservoir serve`
// processes in cluster mode behind a real HAProxy (deploy/haproxy.cfg's settings); a 2025-era SDK
// client (one session) and a 2026-07-28 one read through it without pause while instance A gets
// SIGTERM, drains, exits 0 and starts again on its port, then B the same: every read succeeds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { Cleanup } from '../helpers/clients.js';
import { removeTree } from '../helpers/tree.js';
import { waitFor } from '../subscriptions/harness.js';
import { HAPROXY } from './haproxy.js';
import { readLoops, startPair, writePairFiles, type PairFiles } from './haproxy-pair.js';
import { REDIS_URL } from './harness.js';

const cleanup = new Cleanup();
let files: PairFiles;

beforeAll(async () => {
  await ensureBuilt();
  files = writePairFiles('reservoir-rolling-');
});
afterAll(async () => {
  await cleanup.run();
  removeTree(files.dir);
});

describe.skipIf(REDIS_URL === undefined || HAPROXY === undefined)(
  'a rolling restart behind HAProxy',
  () => {
    it('loses no request of either era while each instance in turn drains on SIGTERM and starts again', async () => {
      const { ports, instances, haproxy, legacy, modern, start } = await startPair(files, cleanup);
      const flows = [readLoops(legacy, files.uri, 4), readLoops(modern, files.uri, 4)];
      cleanup.add(() => Promise.all(flows.map((flow) => flow.stop())));
      const total = (): number => flows.reduce((sum, flow) => sum + flow.ok(), 0);
      await waitFor(() => total() >= 50, 'traffic to flow through HAProxy', 30_000);

      for (const [i, port] of ports.entries()) {
        const old = instances[i]!;
        old.child.kill('SIGTERM');
        expect(await old.exited, `instance ${i} exits 0 after draining`).toEqual({
          code: 0,
          signal: null,
        });
        instances[i] = await start(port);
        // Traffic goes on (on the other instance, then on both) before the next one restarts, and
        // HAProxy has this one back in its rotation: on a loaded machine its health checks can
        // still hold it down when the next one is stopped, which leaves no server at all.
        const before = total();
        await waitFor(() => total() >= before + 100, 'traffic to flow after the restart', 30_000);
        const mentions = (lines: string[]): number =>
          lines.filter((line) => line.includes(`/m${i} is `)).length;
        await waitFor(
          () => mentions(haproxy.ups()) >= mentions(haproxy.downs()),
          `HAProxy to see instance ${i} up again`,
          30_000,
        );
      }
      await Promise.all(flows.map((flow) => flow.stop()));
      expect(flows.flatMap((flow) => flow.failures)).toEqual([]);
      expect(total()).toBeGreaterThan(250);
    }, 180_000);
  },
);
