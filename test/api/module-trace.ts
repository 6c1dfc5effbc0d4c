/**
 * Which modules a Node process loads. `traced()` gives the node arguments and environment that
 * preload module-trace/preload.mjs; `readTrace()` reads what it recorded: the ESM modules the
 * loader resolved and the CommonJS modules required, as paths (or `node:` names).
 */
import { readFileSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REPO_ROOT } from '../helpers/build.js';

const PRELOAD = fileURLToPath(new URL('./module-trace/preload.mjs', import.meta.url));

/** Node arguments (before the script) and environment that record the modules loaded into `file`. */
export function traced(file: string): { execArgv: string[]; env: NodeJS.ProcessEnv } {
  return { execArgv: ['--import', PRELOAD], env: { ...process.env, RESERVOIR_MODULE_TRACE: file } };
}

export interface Trace {
  /** Every module loaded, once each. */
  modules: string[];
  /** Whether the process exited normally, so the CommonJS modules are in the list too. */
  complete: boolean;
}

export function readTrace(file: string): Trace {
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '');
  const complete = lines.at(-1) === 'exit';
  const modules = new Set(
    lines
      .filter((line) => line !== 'exit')
      .map((line) => (line.startsWith('file:') ? fileURLToPath(line) : line)),
  );
  return { modules: [...modules], complete };
}

/** The modules of these npm packages among `modules`. */
export function fromPackages(modules: readonly string[], packages: readonly string[]): string[] {
  return modules.filter((path) => packages.some((name) => path.includes(`/node_modules/${name}/`)));
}

/** The path of a built module, e.g. `config/schema.js` → REPO_ROOT/dist/config/schema.js. */
export function distModule(path: string): string {
  return join(REPO_ROOT, 'dist', path);
}

/**
 * The built CLI is one esbuild bundle (scripts/build-cli.mjs): what it loads are dist/cli/index.js
 * and chunk files. This maps each loaded output file back to the modules it holds (from
 * dist/cli/bundle-modules.json), so a test can still ask "was the config schema loaded?".
 */
export function unbundled(modules: readonly string[]): string[] {
  const cliDir = join(REPO_ROOT, 'dist', 'cli');
  const holds = JSON.parse(readFileSync(join(cliDir, 'bundle-modules.json'), 'utf8')) as Record<
    string,
    string[]
  >;
  return modules.flatMap((path) => {
    const inputs = dirname(path) === cliDir ? holds[basename(path)] : undefined;
    return inputs === undefined ? [path] : inputs.map((input) => join(REPO_ROOT, input));
  });
}

/** Bytes of JavaScript the process read from files among `modules` (what it had to parse). */
export function bytesOf(modules: readonly string[]): number {
  return modules
    .filter((path) => path.startsWith('/'))
    .reduce((sum, path) => sum + statSync(path).size, 0);
}
