/**
 * Runs Debian's `haproxy` in front of cluster members for tests and the bench: deploy/haproxy.cfg
 * itself (round robin, its retries and health checks), on a free port.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../helpers/build.js';
import { eventually } from '../helpers/eventually.js';
import { freePort } from '../helpers/ports.js';

export const HAPROXY = ['/usr/sbin/haproxy', '/usr/bin/haproxy', '/usr/local/sbin/haproxy'].find(
  (p) => existsSync(p),
);

/** The shipped deploy/haproxy.cfg. */
export const SHIPPED_HAPROXY_CFG = join(REPO_ROOT, 'deploy', 'haproxy.cfg');

/**
 * deploy/haproxy.cfg as shipped, made to run here: bound to 127.0.0.1:`port`, without Docker's
 * resolver, its `server` lines replaced by `members` (host:port each). Every other setting —
 * timeouts, retries, redispatch, retry-on, health checks — is the file's own.
 */
export function shippedHaproxyConfig(port: number, members: string[]): string {
  const lines = readFileSync(SHIPPED_HAPROXY_CFG, 'utf8').split('\n');
  const out: string[] = [];
  let inResolvers = false;
  for (const line of lines) {
    if (/^resolvers /.test(line)) inResolvers = true;
    else if (/^\S/.test(line)) inResolvers = false;
    if (inResolvers) continue;
    if (/^\s*server /.test(line)) continue;
    if (/^\s*bind /.test(line)) out.push(`  bind 127.0.0.1:${port}`);
    else if (/^\s*default-server /.test(line))
      out.push(line.replace(/ resolvers \S+/, '').replace(/ init-addr \S+/, ''));
    else out.push(line);
  }
  const text = out.join('\n').trimEnd();
  if (
    !/^\s*bind 127/m.test(text) ||
    !/^backend reservoir$/m.test(text) ||
    !text.trimEnd().split('\n').at(-1)!.includes('default-server')
  ) {
    throw new Error(
      'deploy/haproxy.cfg changed shape: the test harness expects bind, then backend reservoir ending in default-server and server lines',
    );
  }
  return `${text}\n${members.map((m, i) => `  server m${i} ${m} check`).join('\n')}\n`;
}

/** Starts HAProxy with deploy/haproxy.cfg's settings in front of `memberUrls`, on a free port. */
export async function startHaproxy(
  memberUrls: string[],
): Promise<{ url: string; stop(): Promise<void>; downs(): string[]; ups(): string[] }> {
  const port = await freePort();
  const config = shippedHaproxyConfig(
    port,
    memberUrls.map((u) => new URL(u).host),
  );
  const file = join(tmpdir(), `reservoir-haproxy-${port}.cfg`);
  writeFileSync(file, config);
  const child = spawn(HAPROXY!, ['-f', file, '-db'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  await eventually(
    async () => {
      if (child.exitCode !== null) throw new Error(`haproxy exited (${child.exitCode}): ${stderr}`);
      return new Promise<boolean>((resolve) => {
        const socket = connect(port, '127.0.0.1', () => {
          socket.destroy();
          resolve(true);
        });
        socket.once('error', () => resolve(false));
      });
    },
    () => `haproxy to listen on ${port}: ${stderr}`,
    { deadlineMs: 10_000, stepMs: 50 },
  );
  return {
    url: `http://localhost:${port}/mcp`,
    /** HAProxy's lines saying a server went down (a failed health check) so far. */
    downs: () => stderr.split('\n').filter((line) => line.includes(' is DOWN')),
    /** HAProxy's lines saying a server came (back) up so far. */
    ups: () => stderr.split('\n').filter((line) => line.includes(' is UP')),
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
