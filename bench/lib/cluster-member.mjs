/**
 * One cluster member for bench/cluster.mjs, in its own process: serves a 4 KiB file root and a
 * polled source (`poll://bench/<name>` = the file <dir>/<name>, polled every 10 ms by the lease
 * holder) over HTTP, in cluster mode on the Redis at argv[2].
 *   node cluster-member.mjs REDIS_URL KEY_PREFIX NAME DIR PORT [rate-limit | memory-limit]
 * Prints `listening <port>` on stdout when ready, and `settled <uri> <epoch ms>` each time its
 * poller (running only on the lease holder) sees the polled file change.
 */
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { createCluster } from '../../dist/cluster/index.js';
import { createReservoir } from '../../dist/server/index.js';
import { filesProvider } from '../../dist/providers/files/index.js';
import { NotFoundError } from '../../dist/core/errors.js';

const [redisUrl, keyPrefix, name, dir, port, rateLimit] = process.argv.slice(2);
const ROOT = 'poll://bench/';
const file = (uri) => join(dir, 'polled', uri.slice(ROOT.length));

const polled = {
  name: 'poll',
  root: ROOT,
  async list() {
    return { items: [{ uri: `${ROOT}row`, name: 'row' }] };
  },
  async read(uri) {
    if (!existsSync(file(uri))) throw new NotFoundError(uri);
    return { contents: [{ uri, mimeType: 'text/plain', text: readFileSync(file(uri), 'utf8') }] };
  },
  watch(uri, onChange) {
    let last = existsSync(file(uri)) ? readFileSync(file(uri), 'utf8') : undefined;
    const timer = setInterval(() => {
      const now = existsSync(file(uri)) ? readFileSync(file(uri), 'utf8') : undefined;
      if (now !== last) {
        last = now;
        // The moment the change settles here (the lease holder's poller saw it): the bench measures
        // change → notification from this line, on the one clock all processes of the machine share.
        process.stdout.write(
          `settled ${uri} ${(performance.timeOrigin + performance.now()).toFixed(3)}\n`,
        );
        onChange();
      }
    }, 10);
    return () => clearInterval(timer);
  },
};

// `memory-limit`: the same limits on one plain process (no cluster), the baseline of `rate-limit`.
const secret = 'bench-cluster-secret-0123456789abcdef0123456789';
const cluster =
  rateLimit === 'memory-limit'
    ? undefined
    : createCluster({ url: redisUrl, keyPrefix, secret, instance: name });
const reservoir = createReservoir({
  secret,
  ...(cluster === undefined ? {} : { cluster }),
  providers: [filesProvider({ root: join(dir, 'files') }), polled],
  ...(rateLimit !== undefined
    ? { policy: { rateLimit: { requests: { perSecond: 1_000_000, burst: 1_000_000 } } } }
    : {}),
});
await cluster?.ready();
const endpoint = await reservoir.listen({ port: Number(port) });
process.stdout.write(`listening ${new URL(endpoint.url).port}\n`);
process.once('SIGTERM', () => void reservoir.close().then(() => process.exit(0)));
