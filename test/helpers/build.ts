/**
 * Where the built CLI lives, and a guard that (re)builds it when `src/` is newer than `dist/`, so
 * `npx vitest run test/e2e` never drives a stale build. Test files run in parallel forks; a lock
 * directory makes sure only one of them runs the compiler.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually } from './eventually.js';

export const REPO_ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const CLI_PATH = join(REPO_ROOT, 'dist', 'cli', 'index.js');
const LOCK = join(REPO_ROOT, 'dist', '.e2e-build.lock');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const time = entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs;
    if (time > newest) newest = time;
  }
  return newest;
}

function isFresh(): boolean {
  const built = statSync(CLI_PATH, { throwIfNoEntry: false });
  if (built === undefined) return false;
  const sources = Math.max(
    newestMtime(join(REPO_ROOT, 'src')),
    statSync(join(REPO_ROOT, 'package.json')).mtimeMs,
  );
  return built.mtimeMs >= sources;
}

/** Takes the build lock (a directory): true once this process holds it; a lock left by a crashed build (older than 2 min) is removed. */
function takeLock(): boolean {
  try {
    mkdirSync(LOCK);
    return true;
  } catch {
    const lock = statSync(LOCK, { throwIfNoEntry: false });
    if (lock !== undefined && Date.now() - lock.mtimeMs > 120_000) rmdirSync(LOCK);
    return false;
  }
}

/** Makes sure `dist/` reflects `src/`, building it once if not. */
export async function ensureBuilt(): Promise<void> {
  if (isFresh()) return;
  mkdirSync(join(REPO_ROOT, 'dist'), { recursive: true });
  await eventually(takeLock, 'another test file to build dist/', {
    deadlineMs: 90_000,
    stepMs: 200,
  });
  try {
    if (isFresh()) return;
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    try {
      execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], {
        cwd: REPO_ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (error) {
      // tsc still emits on type errors; only a build with no CLI at all is fatal here.
      if (statSync(CLI_PATH, { throwIfNoEntry: false }) === undefined) throw error;
      const output = String((error as { stdout?: unknown }).stdout ?? '');
      process.stderr.write(
        `e2e: dist/ rebuilt with type errors (tests run against what tsc emitted):\n${output}\n`,
      );
    }
    // The CLI as one bundle (dist/cli/index.js + lazy chunks), as `npm run build` leaves it.
    execFileSync(process.execPath, [join(REPO_ROOT, 'scripts', 'build-cli.mjs')], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // The explorer's bundle (dist/ui/), which the HTTP endpoint serves and the MCP App resource holds.
    execFileSync(process.execPath, [join(REPO_ROOT, 'scripts', 'build-ui.mjs')], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } finally {
    rmdirSync(LOCK);
  }
}

/** What one run of the built CLI left: its exit code (null when killed) and its two streams. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built CLI with `args` (in `cwd`), stdin closed at once, for at most 30 s: a ceiling for
 * a hung run, which a start on a loaded machine (four workers on two cores) must stay well under.
 */
export function runCli(args: string[], cwd?: string, timeoutMs = 30_000): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [CLI_PATH, ...args],
      { ...(cwd === undefined ? {} : { cwd }), timeout: timeoutMs },
      (error, stdout, stderr) => {
        resolve({
          code: error === null ? 0 : typeof error.code === 'number' ? error.code : null,
          stdout,
          stderr,
        });
      },
    );
    child.stdin?.end();
  });
}
