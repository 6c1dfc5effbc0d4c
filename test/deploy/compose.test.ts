// deploy/compose.yaml and deploy/haproxy.cfg cannot be run here (no container engine, no image
// registry): their structure is checked instead. Three Reservoir services share one definition in
// cluster mode on the compose file's Redis, with the secret and the token digest required from the
// environment; the config they mount passes the real validator with the environment compose gives
// them, and serves a path a volume provides; `reservoir serve` accepts every flag of the command;
// HAProxy publishes the port its frontend binds, balances over exactly the three services on the
// port they serve, checks /readyz, and `haproxy -c` accepts the file (where haproxy is installed).
import { execFile, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { dockerInstructions } from '../../scripts/dockerfile.mjs';
import { parseConfig } from '../../src/config/load.js';
import { CLI_PATH, ensureBuilt, REPO_ROOT } from '../helpers/build.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';

const run = promisify(execFile);
const DEPLOY = join(REPO_ROOT, 'deploy');

interface Service {
  image?: string;
  build?: { context?: string; dockerfile?: string };
  command?: string;
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  depends_on?: string[];
}

const compose = parse(readFileSync(join(DEPLOY, 'compose.yaml'), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
};
const haproxyCfg = readFileSync(join(DEPLOY, 'haproxy.cfg'), 'utf8');
const instances = Object.entries(compose.services).filter(([, s]) =>
  /^serve\s/.test(s.command ?? ''),
);

/** A compose `${NAME:?message}` / `${NAME:-default}` value as the container would see it, given `env`. */
function interpolate(value: string, env: Record<string, string>): string {
  return value.replace(
    /\$\{(\w+)(?::([?-])([^}]*))?\}/g,
    (_all, name: string, kind?: string, rest?: string) => {
      if (env[name] !== undefined) return env[name];
      if (kind === '-') return rest ?? '';
      throw new Error(`compose needs ${name}: ${rest ?? ''}`);
    },
  );
}

describe('deploy/compose.yaml and deploy/haproxy.cfg', () => {
  beforeAll(() => ensureBuilt());

  it('runs three Reservoir services from one definition, in cluster mode on its own Redis, needing the shared secret from the environment', () => {
    expect(instances.map(([name]) => name).sort()).toEqual([
      'reservoir-a',
      'reservoir-b',
      'reservoir-c',
    ]);
    expect(compose.services['redis']?.image).toMatch(/^redis:/);
    for (const [name, service] of instances) {
      expect(service, name).toEqual(instances[0]![1]);
      expect(service.command, name).toMatch(/--redis redis:\/\/redis:6379(\s|$)/);
      expect(service.depends_on, name).toContain('redis');
      expect(service.environment?.['RESERVOIR_SECRET'], name).toMatch(/^\$\{RESERVOIR_SECRET:\?/);
      expect(() => interpolate(service.environment!['RESERVOIR_SECRET']!, {})).toThrow(
        /compose needs RESERVOIR_SECRET: set RESERVOIR_SECRET \(make one with `reservoir token`\)/,
      );
    }
  });

  it('runs the image the repository Dockerfile builds, whose ENTRYPOINT is the CLI the command gives arguments to', () => {
    const [, service] = instances[0]!;
    expect(
      join(DEPLOY, service.build?.context ?? '.', service.build?.dockerfile ?? 'Dockerfile'),
    ).toBe(join(REPO_ROOT, 'Dockerfile'));
    expect(service.image).toMatch(/^reservoir(:|$)/);
    const entrypoint = dockerInstructions(
      readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8'),
    ).findLast((i) => i.op === 'ENTRYPOINT');
    expect(entrypoint?.args).toBe('["node", "/app/dist/cli/index.js"]');
    expect(service.command).toMatch(/^serve --config /);
  });

  it('mounts a config the real validator accepts with the environment compose gives, serving a path a volume provides', () => {
    const [, service] = instances[0]!;
    const configPath = /--config (\S+)/.exec(service.command!)?.[1];
    const mounts = (service.volumes ?? []).map((v) => v.split(':'));
    const config = mounts.find(([, target]) => target === configPath);
    expect(config, `a volume provides ${configPath}`).toBeDefined();
    const env = Object.fromEntries(
      Object.entries(service.environment ?? {}).map(([k, v]) => [
        k,
        interpolate(v, {
          RESERVOIR_SECRET: 's'.repeat(43),
          RESERVOIR_TOKEN_SHA256: 'a'.repeat(64),
        }),
      ]),
    );
    const text = readFileSync(join(DEPLOY, config![0]!), 'utf8');
    const roots = ((parse(text) as { sources?: { root?: string }[] }).sources ?? []).map(
      (source) => source.root ?? '',
    );
    expect(roots.length).toBeGreaterThan(0);
    for (const root of roots) {
      expect(
        mounts.some(([, target]) => root === target || root.startsWith(`${target}/`)),
        `${root} is on a mounted volume (${mounts.map((m) => m[1]).join(', ')})`,
      ).toBe(true);
    }
    // The validator checks that roots exist: here they are a temporary directory standing in for the volume.
    const dir = makeTempDir();
    try {
      const loaded = parseConfig(
        roots.reduce((t, root) => t.replace(`root: ${root}`, `root: ${dir}`), text),
        { file: configPath!, env },
      );
      expect(loaded.sources.map((source) => source.root)).toEqual(roots.map(() => dir));
      expect(loaded.server.http).toMatchObject({ allowedHosts: ['localhost'] });
    } finally {
      removeTree(dir);
    }
  });

  it('starts `reservoir serve` with flags the command accepts', async () => {
    const help = (await run(process.execPath, [CLI_PATH, 'serve', '--help'])).stdout;
    const flags = instances[0]![1].command!.match(/--[a-z-]+/g) ?? [];
    expect(flags).toEqual(expect.arrayContaining(['--config', '--http', '--redis']));
    for (const flag of flags) expect(help, flag).toContain(flag);
  });

  it('puts HAProxy on the published port, round robin over exactly the three services on the port they serve, checking /readyz', () => {
    const proxy = compose.services['haproxy']!;
    expect(proxy.volumes).toContain('./haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro');
    const bind = /^\s*bind \*:(\d+)$/m.exec(haproxyCfg)?.[1];
    expect(proxy.ports?.map((p) => p.split(':')[1])).toEqual([bind]);
    const port = /--http [\d.]+:(\d+)/.exec(instances[0]![1].command!)?.[1];
    const servers = [...haproxyCfg.matchAll(/^\s*server \S+ ([\w-]+):(\d+) check$/gm)].map((m) => [
      m[1],
      m[2],
    ]);
    expect(servers.map(([host]) => host).sort()).toEqual(instances.map(([name]) => name).sort());
    for (const [, serverPort] of servers) expect(serverPort).toBe(port);
    expect(haproxyCfg).toMatch(/^\s*balance roundrobin$/m);
    expect(haproxyCfg).toMatch(/^\s*option httpchk$/m);
    expect(haproxyCfg).toMatch(
      /^\s*http-check send meth GET uri \/readyz ver HTTP\/1\.1 hdr Host localhost$/m,
    );
    // A crash or a drain loses no request (test/cluster/crash.test.ts runs this file): refused,
    // unanswered and draining requests are retried, each on another instance.
    expect(haproxyCfg).toMatch(/^\s*option redispatch 1$/m);
    const retryOn = /^\s*retry-on (.+)$/m.exec(haproxyCfg)?.[1]?.split(/\s+/);
    expect(retryOn).toEqual(
      expect.arrayContaining(['conn-failure', 'empty-response', 'junk-response', '503']),
    );
  });

  it('passes `haproxy -c` where haproxy is installed', (context) => {
    const check = spawnSync('haproxy', ['-c', '-f', join(DEPLOY, 'haproxy.cfg')], {
      encoding: 'utf8',
    });
    if (check.error !== undefined) return context.skip();
    expect(check.status, check.stderr + check.stdout).toBe(0);
  });
});
