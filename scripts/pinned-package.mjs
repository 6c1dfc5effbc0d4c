// A tool kept out of the project's own devDependencies (large, or wanting a newer Node than the
// project's) installed on demand into .cache/<name> from scripts/<name>/: its package.json pins the
// version, its package-lock.json every dependency, both from the npm registry. Only what uses the tool
// pays for it, once per checkout.
//
//   import { ensurePinned } from './pinned-package.mjs';
//   const { dir, version } = await ensurePinned('inspector', '@modelcontextprotocol/inspector');
//   // the package is at join(dir, 'node_modules', '@modelcontextprotocol/inspector')
import { execFile } from 'node:child_process';
import { copyFile, mkdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './node-release.mjs';

const run = promisify(execFile);

async function installedVersion(dir, pkg) {
  try {
    return JSON.parse(await readFile(join(dir, 'node_modules', pkg, 'package.json'), 'utf8'))
      .version;
  } catch {
    return undefined;
  }
}

/**
 * Resolves with { dir, version } once .cache/<name> holds `pkg` at the version scripts/<name>/pins,
 * installing it (without install scripts, with `npm ci` from the pinned lockfile) if needed.
 */
export async function ensurePinned(name, pkg, { log = () => {} } = {}) {
  const pinned = join(ROOT, 'scripts', name);
  const cache = join(ROOT, '.cache', name);
  const wanted = JSON.parse(await readFile(join(pinned, 'package.json'), 'utf8')).dependencies[pkg];
  if ((await installedVersion(cache, pkg)) !== wanted) {
    log(`installing ${pkg}@${wanted} into .cache/${name}`);
    const staging = `${cache}.staging-${process.pid}-${Date.now()}`;
    await mkdir(staging, { recursive: true });
    try {
      await copyFile(join(pinned, 'package.json'), join(staging, 'package.json'));
      await copyFile(join(pinned, 'package-lock.json'), join(staging, 'package-lock.json'));
      await run('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund'], {
        cwd: staging,
        timeout: 300_000,
        env: { ...process.env, npm_config_engine_strict: 'false' },
      });
      if ((await installedVersion(cache, pkg)) !== wanted) {
        await rm(cache, { recursive: true, force: true });
        await rename(staging, cache).catch(async (error) => {
          if ((await installedVersion(cache, pkg)) !== wanted) throw error;
        });
      }
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }
  return { dir: cache, version: wanted };
}
