/**
 * Runs Debian's `haproxy` in front of cluster members for tests and the bench: round robin, the
 * same settings as deploy/haproxy.cfg, on a free port.
 */
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const HAPROXY = ['/usr/sbin/haproxy', '/usr/bin/haproxy', '/usr/local/sbin/haproxy'].find((p) => existsSync(p));

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function startHaproxy(memberUrls: string[]): Promise<{ url: string; stop(): Promise<void>; downs(): string[] }> {
  const port = await freePort();
  const servers = memberUrls.map((u, i) => `  server m${i} ${new URL(u).host} check`).join('\n');
  const config = `global
  maxconn 4000
defaults
  mode http
  option http-keep-alive
  timeout connect 5s
  timeout client 1h
  timeout server 1h
  timeout http-request 15s
  option http-no-delay
frontend mcp
  bind 127.0.0.1:${port}
  default_backend reservoir
backend reservoir
  balance roundrobin
  # A connection refused (an instance restarting) or a 503 from a draining instance is retried on another.
  retries 3
  option redispatch 1
  retry-on conn-failure empty-response 503
  option httpchk
  # HTTP/1.1 with a Host the instances accept (localhost always is): a check without one is answered 403.
  http-check send meth GET uri /readyz ver HTTP/1.1 hdr Host localhost
  http-check expect status 200
  default-server inter 2s fall 2 rise 1
${servers}
`;
  const file = join(tmpdir(), `reservoir-haproxy-${port}.cfg`);
  writeFileSync(file, config);
  const child = spawn(HAPROXY!, ['-f', file, '-db'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`haproxy exited (${child.exitCode}): ${stderr}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) break;
    if (Date.now() > deadline) throw new Error(`haproxy did not listen within 10 s: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url: `http://localhost:${port}/mcp`,
    /** HAProxy's lines saying a server went down (a failed health check) so far. */
    downs: () => stderr.split('\n').filter((line) => line.includes(' is DOWN')),
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
