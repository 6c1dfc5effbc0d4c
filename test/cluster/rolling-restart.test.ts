// Issue 25, item 1: a rolling restart behind HAProxy loses no request. Two `reservoir serve`
// processes in cluster mode behind a real HAProxy (deploy/haproxy.cfg's settings); a 2025-era SDK
// client (one session) and a 2026-07-28 one read through it without pause while instance A gets
// SIGTERM, drains, exits 0 and starts again on its port, then B the same: every read succeeds.
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

const cleanup = new Cleanup();
let dir: string;
let config: string;

beforeAll(async () => {
  await ensureBuilt();
  dir = makeTempDir('reservoir-rolling-');
  mkdirSync(join(dir, 'docs'));
  writeFileSync(join(dir, 'docs', 'a.md'), 'alpha\n');
  config = join(dir, 'reservoir.yaml');
  writeFileSync(
    config,
    `sources:\n  - type: files\n    root: ${join(dir, 'docs')}\nserver:\n  redis:\n    url: ${REDIS_URL ?? 'redis://127.0.0.1:6379'}\n    keyPrefix: "${uniquePrefix()}"\n`,
  );
});
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

/** Reads through `client` until stopped, counting successes and keeping every failure. */
function traffic(
  client: Client,
  uri: string,
  workers: number,
): { ok: () => number; failures: unknown[]; stop: () => Promise<void> } {
  let running = true;
  let ok = 0;
  const failures: unknown[] = [];
  const loops = Array.from({ length: workers }, async () => {
    while (running) {
      try {
        const result = await client.readResource({ uri });
        if ((result.contents[0] as { text?: string }).text === 'alpha\n') ok += 1;
        else failures.push(result);
      } catch (error) {
        failures.push(error);
      }
    }
  });
  return {
    ok: () => ok,
    failures,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

describe.skipIf(REDIS_URL === undefined || HAPROXY === undefined)(
  'a rolling restart behind HAProxy',
  () => {
    it('loses no request of either era while each instance in turn drains on SIGTERM and starts again', async () => {
      const ports = [await freePort(), await freePort()];
      const instances = [await startInstance(ports[0]!), await startInstance(ports[1]!)];
      const haproxy = await startHaproxy(instances.map((i) => i.url));
      cleanup.add(() => haproxy.stop());
      const uri = fileUri(join(dir, 'docs'), 'a.md');
      const legacy = await connectHttp('2025', haproxy.url, cleanup);
      const modern = await connectHttp('2026', haproxy.url, cleanup);
      const flows = [traffic(legacy.client, uri, 4), traffic(modern.client, uri, 4)];
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
        instances[i] = await startInstance(port);
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
