// `reservoir serve --redis`: cluster mode from the command line, its shared secret, and the
// errors a user sees when either is wrong.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_PATH, ensureBuilt } from '../helpers/build.js';
import { Cleanup, connectHttp, spawnHttpServer } from '../helpers/clients.js';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { REDIS_URL, SECRET, uniquePrefix } from './harness.js';

let dir: string;
const cleanup = new Cleanup();

beforeAll(async () => {
  await ensureBuilt();
  dir = makeTempDir();
  writeTree(dir, { 'docs/a.md': '# a\n' });
});

afterAll(async () => {
  await cleanup.run();
  removeTree(dir);
});

/** Runs `reservoir serve ARGS…` expecting it to refuse to start; resolves with its exit code and stderr. */
function refusal(
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [CLI_PATH, 'serve', join(dir, 'docs'), '--http', '127.0.0.1:0', ...args],
      {
        env: { ...process.env, RESERVOIR_SECRET: '', ...env },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    // 'close', not 'exit': it comes once stderr is read to its end.
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

describe('reservoir serve --redis', () => {
  it('refuses to start cluster mode without a shared secret, saying how to make one', async () => {
    const { code, stderr } = await refusal(['--redis', 'redis://127.0.0.1:1']);
    expect(code).toBe(1);
    expect(stderr).toContain(
      'server.secret: cluster mode (--redis / server.redis) needs a secret shared by every instance',
    );
    expect(stderr).toContain('reservoir token');
    expect(stderr).toContain('RESERVOIR_SECRET');
  });

  it('refuses a secret shorter than 32 bytes, naming where it came from', async () => {
    const { code, stderr } = await refusal(['--redis', 'redis://127.0.0.1:1'], {
      RESERVOIR_SECRET: 'short',
    });
    expect(code).toBe(1);
    expect(stderr).toContain('RESERVOIR_SECRET: the secret is 5 bytes; at least 32 are needed');
  });

  it('refuses a secret file it cannot read', async () => {
    const { code, stderr } = await refusal([
      '--redis',
      'redis://127.0.0.1:1',
      '--secret-file',
      join(dir, 'missing.key'),
    ]);
    expect(code).toBe(1);
    expect(stderr).toContain(`--secret-file: cannot read ${join(dir, 'missing.key')}: ENOENT`);
  });

  it('refuses a --redis URL that is not redis:// or rediss://', async () => {
    const { code, stderr } = await refusal(['--redis', 'http://127.0.0.1:6379'], {
      RESERVOIR_SECRET: SECRET,
    });
    expect(code).toBe(1);
    expect(stderr).toContain('--redis: expected a redis:// or rediss:// URL');
  });

  it.skipIf(REDIS_URL === undefined)(
    'serves in cluster mode with the secret from --secret-file, reporting Redis up on /readyz and the instance on /metrics',
    async () => {
      const secretFile = join(dir, 'secret.key');
      writeFileSync(secretFile, `${SECRET}\n`);
      const config = join(dir, 'cluster.yaml');
      writeFileSync(
        config,
        `sources:\n  - type: files\n    root: ${join(dir, 'docs')}\nserver:\n  redis:\n    url: ${REDIS_URL}\n    keyPrefix: "${uniquePrefix()}"\n`,
      );
      const server = await spawnHttpServer(
        [],
        ['--config', config, '--secret-file', secretFile],
        cleanup,
      );
      const connection = await connectHttp('2026', server.url, cleanup);
      const { resources } = await connection.client.listResources();
      expect(resources.map((r) => r.name)).toContain('a.md');
      const ready = await fetch(new URL('/readyz', server.url));
      expect(await ready.json()).toMatchObject({ status: 'ready', redis: { status: 'up' } });
      const metrics = await (await fetch(new URL('/metrics', server.url))).text();
      expect(metrics).toMatch(/^reservoir_cluster_redis_up\{instance="[^"]+"\} 1$/m);
    },
  );
});
