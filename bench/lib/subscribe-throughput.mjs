/**
 * Subscribe throughput and memory over stdio: N `resources/subscribe` requests (2025 era, 500 in
 * flight) to one server process, timed from the first request to the last answer, and the
 * process's RSS before and after (the process's own heap is not visible from here; RSS is what
 * the host pays), and the server's CPU time per subscribe (meaningful on a loaded machine, where
 * the rate is not).
 * Used by bench/sections/subscriptions.mjs for Reservoir and for the bare-SDK peer
 * (bare-subscribe-server.mjs) in the same run.
 */
import { pathToFileURL } from 'node:url';
import { cpuMicros } from './cpu.mjs';
import { memoryOf } from './proc.mjs';
import { StdioRpc } from './stdio-client.mjs';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Subscribes to `files` (absolute paths) through a server started as `command args`. */
export async function subscribeThroughput(command, args, files, inFlight = 500) {
  const rpc = new StdioRpc(command, args);
  try {
    await rpc.initialize();
    // One subscription first: the server's watcher machinery is started and warm before timing.
    await rpc.request('resources/subscribe', { uri: pathToFileURL(files[0]).href });
    await sleep(300);
    const rssBefore = memoryOf(rpc.pid).rss;
    const uris = files.slice(1).map((f) => pathToFileURL(f).href);
    const cpu0 = cpuMicros(rpc.pid);
    const t0 = performance.now();
    let next = 0;
    const worker = async () => {
      while (next < uris.length) {
        const uri = uris[next++];
        await rpc.request('resources/subscribe', { uri });
      }
    };
    await Promise.all(Array.from({ length: inFlight }, worker));
    const ms = performance.now() - t0;
    const cpuUs = cpuMicros(rpc.pid) - cpu0;
    await sleep(300);
    const rssAfter = memoryOf(rpc.pid).rss;
    return {
      subscriptions: uris.length,
      ms,
      per_s: (uris.length / ms) * 1000,
      // Server CPU per subscribe: what the rate would be on a free core, whatever the load.
      cpu_us_per_sub: cpuUs / uris.length,
      rss_per_sub: (rssAfter - rssBefore) / uris.length,
    };
  } finally {
    await rpc.close();
  }
}
