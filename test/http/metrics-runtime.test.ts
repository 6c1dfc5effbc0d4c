// Pins what a Prometheus scrape of `reservoir serve --http` gets: Reservoir's own series (counting
// the SDK client's reads in both eras) and the process and runtime series a Prometheus user expects
// under their standard names — CPU, resident memory, open file descriptors, start time, heap,
// event-loop lag, GC, Node.js version — in one valid text exposition.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import {
  Cleanup,
  connectHttp,
  ERAS,
  spawnHttpServer,
  type HttpServerProcess,
} from '../helpers/clients.js';
import { fileUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';

const cleanup = new Cleanup();
let root: string;
let server: HttpServerProcess;

beforeAll(async () => {
  await ensureBuilt();
  root = makeTempDir();
  cleanup.add(() => removeTree(root));
  writeTree(root, { 'a.md': '# a\n' });
  server = await spawnHttpServer([join(root)], [], cleanup);
});
afterAll(() => cleanup.run());

async function scrape(): Promise<{
  types: Map<string, string>;
  text: string;
  contentType: string | null;
}> {
  const response = await fetch(new URL('/metrics', server.url));
  expect(response.status).toBe(200);
  const text = await response.text();
  const types = new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
  return { types, text, contentType: response.headers.get('content-type') };
}

describe('/metrics', () => {
  it.each(ERAS)("counts the SDK client's reads in the %s era", async (era) => {
    const { client, close } = await connectHttp(era, server.url);
    await client.readResource({ uri: fileUri(root, 'a.md') });
    await close();
    const { text } = await scrape();
    expect(text).toMatch(
      /^reservoir_requests_total\{method="resources\/read",outcome="ok"\} [1-9]\d*$/m,
    );
  });

  it('carries the process and runtime series under their standard names, each family declared once', async () => {
    const { types, text, contentType } = await scrape();
    expect(contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(
      Object.fromEntries(
        [
          'process_cpu_user_seconds_total',
          'process_cpu_seconds_total',
          'process_resident_memory_bytes',
          'process_open_fds',
          'process_start_time_seconds',
          'nodejs_heap_size_used_bytes',
          'nodejs_eventloop_lag_p99_seconds',
          'nodejs_gc_duration_seconds',
          'nodejs_version_info',
          'nodejs_active_handles_total',
          'reservoir_requests_total',
          'reservoir_request_duration_seconds',
        ].map((name) => [name, types.get(name)]),
      ),
    ).toEqual({
      process_cpu_user_seconds_total: 'counter',
      process_cpu_seconds_total: 'counter',
      process_resident_memory_bytes: 'gauge',
      process_open_fds: 'gauge',
      process_start_time_seconds: 'gauge',
      nodejs_heap_size_used_bytes: 'gauge',
      nodejs_eventloop_lag_p99_seconds: 'gauge',
      nodejs_gc_duration_seconds: 'histogram',
      nodejs_version_info: 'gauge',
      nodejs_active_handles_total: 'gauge',
      reservoir_requests_total: 'counter',
      reservoir_request_duration_seconds: 'histogram',
    });
    const declared = [...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]);
    expect(new Set(declared).size).toBe(declared.length);
    const rss = Number(/^process_resident_memory_bytes (\d+)$/m.exec(text)?.[1]);
    expect(rss).toBeGreaterThan(10 * 1024 * 1024);
    expect(text).toMatch(
      new RegExp(
        `^nodejs_version_info\\{version="${process.version}",major="\\d+",minor="\\d+",patch="\\d+"\\} 1$`,
        'm',
      ),
    );
  });
});
