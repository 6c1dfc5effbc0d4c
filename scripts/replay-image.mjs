// Builds and starts the container image without a container engine: replays the Dockerfile's stages
// in a scratch directory that stands in for each stage's root filesystem, on the Node release the
// image's FROM names (the npm-packaged binary, scripts/node-release.mjs), then starts the final
// stage's ENTRYPOINT + CMD with its own config and asks its HEALTHCHECK and an authenticated
// `initialize` until both pass. It checks what `docker build` would break on: a COPY of a file the
// context lacks or .dockerignore drops, a RUN that fails (`npm ci` runs the build), a CMD that does
// not start; and that the running server wrote nothing into its root filesystem (the image runs with
// --read-only). What it cannot replay: RUN steps that install system packages (apt-get; the machine
// has the compilers), and USER (it runs as the caller). Container paths are mapped into the scratch
// root: /app → <scratch>/app, the config's `root: /data` → <scratch>/data, its port → a free one.
//
//   node scripts/replay-image.mjs        # exits 0 when the image would build and serve
import { spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join, posix, relative } from 'node:path';
import {
  dockerCommand,
  dockerCopy,
  dockerEnv,
  dockerInstructions,
  dockerStages,
} from './dockerfile.mjs';
import { ensureNodeRelease, ROOT } from './node-release.mjs';

const log = (message) => console.error(`replay-image: ${message}`);
const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l !== '' && !l.startsWith('#'));
/** Whether .dockerignore leaves `path` (relative to the context) out: its simple name and prefix patterns. */
const isIgnored = (path) =>
  ignored.some((p) =>
    p.startsWith('*.') ? path.endsWith(p.slice(1)) : path === p || path.startsWith(`${p}/`),
  );
const stages = dockerStages(dockerInstructions(readFileSync(join(ROOT, 'Dockerfile'), 'utf8')));
const scratch = mkdtempSync(join(tmpdir(), 'reservoir-image-'));
const keep = process.argv.includes('--keep');

function nodeLine(from) {
  const match = /^node:(\d+)[.-]/.exec(from);
  if (match === null) throw new Error(`FROM ${from} is not an official node image`);
  return Number(match[1]);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** Every file under `dir`, relative, for the before/after comparison of the running image's root. */
function listTree(dir, base = dir, out = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    out.push(`${relative(base, path)} ${entry.isFile() ? statSync(path).size : ''}`);
    if (entry.isDirectory()) listTree(path, base, out);
  }
  return out;
}

/** Replays one stage into `root`; returns what the final stage needs to start. */
async function replayStage(stage, root, roots) {
  const state = {
    workdir: '/',
    env: {},
    entrypoint: [],
    cmd: [],
    healthcheck: undefined,
    exposed: undefined,
    volumes: [],
  };
  const inRoot = (path) => join(root, posix.resolve(state.workdir, path));
  const line = nodeLine(stage.from);
  const release = await ensureNodeRelease(line, { log });
  const runEnv = () => ({
    ...process.env,
    ...state.env,
    PATH: `${join(release, 'bin')}:${process.env.PATH}`,
    npm_config_nodedir: release,
    npm_config_build_from_source: 'true',
    HOME: join(root, 'root'),
  });
  for (const { op, args } of stage.instructions) {
    if (op === 'WORKDIR') {
      state.workdir = posix.resolve(state.workdir, args.trim());
      mkdirSync(join(root, state.workdir), { recursive: true });
    } else if (op === 'ENV') {
      Object.assign(state.env, dockerEnv(args));
    } else if (op === 'COPY') {
      const { from, sources, dest } = dockerCopy(args);
      const intoDir = dest.endsWith('/') || sources.length > 1;
      for (const source of sources) {
        let origin;
        if (from === undefined) {
          if (isIgnored(source))
            throw new Error(`COPY ${source}: .dockerignore leaves it out of the build context`);
          origin = join(ROOT, source);
        } else {
          if (roots[from] === undefined) throw new Error(`COPY --from=${from}: no such stage`);
          origin = join(roots[from], source);
        }
        if (!existsSync(origin))
          throw new Error(
            `COPY ${from === undefined ? '' : `--from=${from} `}${source}: not found`,
          );
        const target =
          intoDir && statSync(origin).isFile()
            ? join(inRoot(dest), basename(source))
            : inRoot(dest);
        mkdirSync(statSync(origin).isDirectory() ? target : join(target, '..'), {
          recursive: true,
        });
        cpSync(origin, target, {
          recursive: true,
          filter: (path) => from !== undefined || !isIgnored(relative(ROOT, path)),
        });
      }
    } else if (op === 'RUN') {
      if (/^apt-get\b/.test(args.trim())) {
        log(
          `skipping a system-package step (the machine has the tools it installs): RUN ${args.slice(0, 60)}…`,
        );
        continue;
      }
      log(`RUN ${args}`);
      const result = spawnSync('/bin/sh', ['-c', args], {
        cwd: join(root, state.workdir),
        env: runEnv(),
        stdio: ['ignore', 'inherit', 'inherit'],
      });
      if (result.status !== 0)
        throw new Error(`RUN ${args}: exit ${result.status ?? result.signal}`);
    } else if (op === 'ENTRYPOINT') {
      state.entrypoint = dockerCommand(args);
    } else if (op === 'CMD') {
      state.cmd = dockerCommand(args);
    } else if (op === 'HEALTHCHECK') {
      state.healthcheck = dockerCommand(args.slice(args.indexOf('CMD') + 3));
    } else if (op === 'VOLUME') {
      const paths = args.trim().startsWith('[') ? JSON.parse(args) : args.trim().split(/\s+/);
      state.volumes.push(...paths.map((path) => path.replace(/^\//, '')));
    } else if (op === 'EXPOSE') {
      state.exposed = Number(args.trim().split('/')[0]);
    }
  }
  return { ...state, release, runEnv };
}

async function waitFor(what, check, ms = 90_000) {
  const until = Date.now() + ms;
  for (;;) {
    if (await check()) return;
    if (Date.now() > until) throw new Error(`${what}: not within ${ms / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

const roots = {};
let server;
try {
  let final;
  for (const [index, stage] of stages.entries()) {
    const root = join(scratch, `stage-${index}`);
    mkdirSync(root, { recursive: true });
    log(`stage ${index} FROM ${stage.from}${stage.name === undefined ? '' : ` AS ${stage.name}`}`);
    final = await replayStage(stage, root, roots);
    final.root = root;
    if (stage.name !== undefined) roots[stage.name] = root;
  }

  // The run: the image's config with its container paths mapped, a token, a free port.
  const { root } = final;
  const command = [...final.entrypoint, ...final.cmd];
  const configArg = command.indexOf('--config');
  if (configArg < 0) throw new Error('the image CMD passes no --config');
  const configPath = join(root, command[configArg + 1]);
  const port = await freePort();
  mkdirSync(join(root, 'data'), { recursive: true });
  writeFileSync(join(root, 'data', 'hello.md'), '# served from the image\n');
  writeFileSync(
    configPath,
    readFileSync(configPath, 'utf8')
      .replace(/^(\s*root:\s*)\/data\s*$/m, `$1${join(root, 'data')}`)
      .replace(new RegExp(`^(\\s*port:\\s*)${final.exposed}\\s*$`, 'm'), `$1${port}`)
      .replace(/^(\s*host:\s*)0\.0\.0\.0\s*$/m, '$1127.0.0.1'),
  );
  const token = randomBytes(32).toString('base64url');
  // The image's own environment, its absolute paths mapped into the scratch root like the files.
  const imageEnv = Object.fromEntries(
    Object.entries(final.env).map(([name, value]) => [
      name,
      value.startsWith('/') ? join(root, value) : value,
    ]),
  );
  const env = {
    ...final.runEnv(),
    ...imageEnv,
    HOME: join(root, 'home', 'node'),
    RESERVOIR_HOSTNAME: 'localhost',
    RESERVOIR_TOKEN_SHA256: createHash('sha256').update(token).digest('hex'),
  };
  const node = join(final.release, 'bin', 'node');
  const mapped = command.map((arg, i) =>
    i === 0 && arg === 'node'
      ? node
      : arg.startsWith('/') && existsSync(join(root, arg))
        ? join(root, arg)
        : arg,
  );
  // The volumes and the tmpfs of a --read-only run are where it may write.
  const writable = (path) =>
    ['data', 'tmp', ...final.volumes].some(
      (dir) => path === dir || path.startsWith(`${dir}/`) || path.startsWith(`${dir} `),
    );
  const before = listTree(root).filter((path) => !writable(path));
  log(`starting ${command.join(' ')}`);
  server = spawn(mapped[0], mapped.slice(1), {
    cwd: join(root, final.workdir),
    env,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exited = new Promise((resolve) =>
    server.on('exit', (code, signal) => resolve(code ?? signal)),
  );
  server.on('exit', (code) => code !== 0 && log(`the server exited with ${code}`));

  const health = final.healthcheck.map((arg, i) =>
    i === 0 && arg === 'node' ? node : arg.replace(`:${final.exposed}/`, `:${port}/`),
  );
  await waitFor(
    'the HEALTHCHECK passing',
    () => spawnSync(health[0], health.slice(1), { timeout: 10_000 }).status === 0,
  );
  log('HEALTHCHECK passes');
  const answer = await fetch(`http://127.0.0.1:${port}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'replay-image', version: '1' },
      },
    }),
  });
  const body = await answer.text();
  if (answer.status !== 200 || !body.includes('"serverInfo"'))
    throw new Error(`initialize with the token answered ${answer.status}: ${body.slice(0, 300)}`);
  log('an authenticated initialize is answered');
  server.kill('SIGTERM');
  const status = await Promise.race([
    exited,
    new Promise((resolve) => setTimeout(() => resolve('still running 30 s after SIGTERM'), 30_000)),
  ]);
  if (typeof status === 'string') throw new Error(status);
  const after = listTree(root).filter((path) => !writable(path));
  const written = after.filter((path) => !before.includes(path));
  if (written.length > 0)
    throw new Error(
      `the running image wrote into its root filesystem (it runs --read-only): ${written.slice(0, 5).join(', ')}`,
    );
  log(`stopped by SIGTERM (exit ${status}); nothing written outside /data`);
  console.log('replay-image: ok');
} catch (error) {
  server?.kill('SIGKILL');
  console.error(`replay-image: FAILED: ${error instanceof Error ? error.message : error}`);
  process.exitCode = 1;
} finally {
  if (!keep) rmSync(scratch, { recursive: true, force: true });
}
