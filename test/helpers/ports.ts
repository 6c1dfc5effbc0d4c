/**
 * The one free-port helper of the tests: for a server a test starts by port number (redis-server,
 * HAProxy, `reservoir serve --port N` as a user would type it) rather than on port 0.
 */
import { createServer } from 'node:net';

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
