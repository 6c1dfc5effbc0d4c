// The MCP Inspector CLI, installed on demand into .cache/inspector from scripts/inspector/ (its
// package.json pins the version, its package-lock.json every dependency). It is kept out of the
// project's own devDependencies on purpose: ~110 MB and 120 packages (vite, react, ink, its own
// copy of the MCP SDK), and `engines: node >= 22.19`, which the project's Node 20 would warn about
// on every `npm ci`. Only the test that uses it pays for it, once per checkout.
//
//   import { ensureInspector } from './inspector.mjs';
//   const { node, cli } = await ensureInspector();   // run: node cli --cli <command…> --method …
import { execFile } from 'node:child_process';
import { copyFile, mkdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ensureNode22, ROOT } from './node-release.mjs';

const PINNED = join(ROOT, 'scripts', 'inspector');
const CACHE = join(ROOT, '.cache', 'inspector');
const PACKAGE = join('node_modules', '@modelcontextprotocol', 'inspector');
const run = promisify(execFile);

async function installedVersion(dir) {
  try {
    return JSON.parse(await readFile(join(dir, PACKAGE, 'package.json'), 'utf8')).version;
  } catch {
    return undefined;
  }
}

/** Resolves with a Node >= 22.19 binary and the Inspector's launcher script, installing them if needed. */
export async function ensureInspector({ log = () => {} } = {}) {
  const node = await ensureNode22({ log });
  const wanted = JSON.parse(await readFile(join(PINNED, 'package.json'), 'utf8')).dependencies[
    '@modelcontextprotocol/inspector'
  ];
  if ((await installedVersion(CACHE)) !== wanted) {
    log(`installing @modelcontextprotocol/inspector@${wanted} into .cache/inspector`);
    const staging = `${CACHE}.staging-${process.pid}-${Date.now()}`;
    await mkdir(staging, { recursive: true });
    try {
      await copyFile(join(PINNED, 'package.json'), join(staging, 'package.json'));
      await copyFile(join(PINNED, 'package-lock.json'), join(staging, 'package-lock.json'));
      // No install scripts: the package's postinstall only sets up a source checkout.
      await run('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund'], {
        cwd: staging,
        timeout: 300_000,
        env: { ...process.env, npm_config_engine_strict: 'false' },
      });
      if ((await installedVersion(CACHE)) !== wanted) {
        await rm(CACHE, { recursive: true, force: true });
        await rename(staging, CACHE).catch(async (error) => {
          if ((await installedVersion(CACHE)) !== wanted) throw error;
        });
      }
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }
  return {
    node,
    cli: join(CACHE, PACKAGE, 'clients', 'launcher', 'build', 'index.js'),
    version: wanted,
  };
}

// Run directly, it installs what is missing and prints `{ node, cli, version }` as JSON; it exits 3
// when no Node >= 22.19 binary can be obtained (the one case the Inspector test may skip).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  let node;
  try {
    node = await ensureNode22({ log: (message) => console.error(message) });
  } catch (error) {
    console.error(
      `no Node >= 22.19 binary: ${error instanceof Error ? error.message : String(error)}`,
    );
    process.exit(3);
  }
  const found = await ensureInspector({ log: (message) => console.error(message) });
  console.log(JSON.stringify({ ...found, node }));
}
