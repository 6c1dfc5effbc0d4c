// Exercises the operations kit without a container engine or systemd on the test machine: the
// Dockerfile parses, copies only files that exist and are not docker-ignored, runs as a non-root
// user, and its HEALTHCHECK command — run for real against the image's own config served by the
// built CLI (root and port swapped for a temp dir and a free port) — passes while the server is up
// and fails once it is gone. The systemd unit passes `systemd-analyze verify` (when present) and
// its ExecStart uses only flags `reservoir serve` accepts. docs/operations.md has the smoke runs.
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dockerInstructions } from '../../scripts/dockerfile.mjs';
import { parseConfig } from '../../src/config/load.js';
import { CLI_PATH, ensureBuilt, REPO_ROOT } from '../helpers/build.js';
import { Cleanup, spawnHttpServer } from '../helpers/clients.js';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';

const run = promisify(execFile);
const cleanup = new Cleanup();
afterAll(() => cleanup.run());
beforeAll(() => ensureBuilt());

const KNOWN = new Set([
  'FROM',
  'WORKDIR',
  'RUN',
  'COPY',
  'ENV',
  'USER',
  'EXPOSE',
  'VOLUME',
  'HEALTHCHECK',
  'ENTRYPOINT',
  'CMD',
  'ARG',
  'LABEL',
]);
const dockerfile = dockerInstructions(readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8'));
const ignored = readFileSync(join(REPO_ROOT, '.dockerignore'), 'utf8').split('\n').filter(Boolean);
const TOKEN_DIGEST = 'a'.repeat(64);

describe('Dockerfile', () => {
  it('uses only known instructions, two stages on Node 24 LTS, and runs the final stage as the non-root node user', () => {
    expect(dockerfile.filter((i) => !KNOWN.has(i.op))).toEqual([]);
    expect(dockerfile.filter((i) => i.op === 'FROM').map((i) => i.args)).toEqual([
      'node:24-bookworm-slim AS build',
      'node:24-bookworm-slim',
    ]);
    const users = dockerfile.filter((i) => i.op === 'USER');
    expect(users.at(-1)?.args).toBe('node');
    expect(dockerfile.findIndex((i) => i.op === 'USER')).toBeGreaterThan(
      dockerfile.findLastIndex((i) => i.op === 'FROM'),
    );
  });

  it('copies from the build context only files that exist and that .dockerignore lets through', () => {
    const sources = dockerfile
      .filter((i) => i.op === 'COPY' && !i.args.startsWith('--from'))
      .flatMap((i) => i.args.split(/\s+/).slice(0, -1));
    expect(sources.length).toBeGreaterThan(5);
    for (const source of sources) {
      expect(existsSync(join(REPO_ROOT, source)), source).toBe(true);
      expect(
        ignored.some((pattern) => source === pattern || source.startsWith(`${pattern}/`)),
        source,
      ).toBe(false);
    }
    // What the last stage takes from the build stage is made there: dist by `npm ci` (prepare), schema by COPY.
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
      bin: Record<string, string>;
    };
    expect(pkg.scripts['prepare']).toBe('npm run build');
    expect(dockerfile.find((i) => i.op === 'ENTRYPOINT')?.args).toBe(
      `["node", "/app/${pkg.bin['reservoir']}"]`,
    );
  });

  it('ships a config that the real validator accepts once its two variables are set', () => {
    const text = readFileSync(join(REPO_ROOT, 'deploy', 'reservoir.yaml'), 'utf8');
    const dir = makeTempDir();
    cleanup.add(() => removeTree(dir));
    const config = parseConfig(text.replace('root: /data', `root: ${dir}`), {
      file: join(dir, 'reservoir.yaml'),
      env: { RESERVOIR_HOSTNAME: 'mcp.example.com', RESERVOIR_TOKEN_SHA256: TOKEN_DIGEST },
    });
    expect(config.server.http).toMatchObject({
      host: '0.0.0.0',
      port: 7337,
      allowedHosts: ['mcp.example.com'],
    });
    expect(() => parseConfig(text, { file: join(dir, 'reservoir.yaml'), env: {} })).toThrow(
      'RESERVOIR_TOKEN_SHA256',
    );
  });

  it('has a HEALTHCHECK that passes against the running server and fails once it stops', async () => {
    const health = dockerfile.find((i) => i.op === 'HEALTHCHECK')!.args;
    const command = JSON.parse(health.slice(health.indexOf('CMD') + 3).trim()) as string[];
    expect(command[0]).toBe('node');
    expect(command.join(' ')).toContain('http://127.0.0.1:7337/healthz');
    expect(dockerfile.find((i) => i.op === 'EXPOSE')?.args).toBe('7337');

    const dir = makeTempDir();
    cleanup.add(() => removeTree(dir));
    writeTree(dir, { 'data/a.md': '# a\n' });
    const config = readFileSync(join(REPO_ROOT, 'deploy', 'reservoir.yaml'), 'utf8')
      .replace('root: /data', `root: ${join(dir, 'data')}`)
      .replace('host: 0.0.0.0', 'host: 127.0.0.1');
    writeFileSync(join(dir, 'reservoir.yaml'), config);
    const env = {
      ...process.env,
      RESERVOIR_HOSTNAME: 'localhost',
      RESERVOIR_TOKEN_SHA256: TOKEN_DIGEST,
    };
    const server = await spawnHttpServer(
      [],
      ['--config', join(dir, 'reservoir.yaml')],
      cleanup,
      env,
    );
    const port = new URL(server.url).port;
    const check = command.slice(1).map((arg) => arg.replace('7337', port));
    expect(spawnSync('node', check, { timeout: 10_000 }).status).toBe(0);
    await server.stop();
    expect(spawnSync('node', check, { timeout: 10_000 }).status).toBe(1);
  });
});

describe('systemd unit', () => {
  const unit = readFileSync(join(REPO_ROOT, 'deploy', 'reservoir.service'), 'utf8');

  it('passes systemd-analyze verify without a warning about the unit', (context) => {
    const analyze = spawnSync(
      'systemd-analyze',
      ['verify', join(REPO_ROOT, 'deploy', 'reservoir.service')],
      { encoding: 'utf8', timeout: 30_000 },
    );
    if (analyze.error !== undefined) return context.skip('systemd-analyze is not installed');
    const about = analyze.stderr.split('\n').filter((line) => line.includes('reservoir.service'));
    expect(about).toEqual([]);
    expect(analyze.status).toBe(0);
  });

  it('starts `reservoir serve` with flags the command accepts and the config file the kit ships', async () => {
    const exec = /^ExecStart=(.*)$/m.exec(unit)?.[1] ?? '';
    expect(exec).toMatch(/^\/usr\/bin\/env reservoir serve /);
    const { stdout: help } = await run(process.execPath, [CLI_PATH, 'serve', '--help']);
    const flags = exec.match(/--[a-z-]+/g) ?? [];
    expect(flags.length).toBeGreaterThan(0);
    for (const flag of flags) expect(help, flag).toContain(flag);
    expect(exec).toContain('/etc/reservoir/reservoir.yaml');
    expect(unit).toMatch(/^DynamicUser=yes$/m);
    expect(unit).toMatch(/^ProtectSystem=strict$/m);
  });
});
