/**
 * What Reservoir keeps, and so never serves: the state directory (search indexes with their WAL,
 * SHM and journal files, the cursor key, anything made there later), the TLS key and certificate,
 * the secret file, the audit log (and its rotated files) and the config file. Computed once, where
 * the settings are merged, from the same inputs that decide where those files are; every files
 * source (skills catalogs' included) hides them by real path and inode, and `reservoir check`
 * warns when one lies under a served root.
 */
import { realpathSync } from 'node:fs';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { defaultStateDir } from '../search/state-dir.js';
import type { LoadedConfig } from './load.js';

export interface ReservedPath {
  /** Absolute, as the settings spell it (the files provider also finds its real path and inode). */
  path: string;
  /** What it is, for messages: `state directory`, `TLS key`, `secret file`, … */
  what: string;
  /** A directory: hidden with everything in it, now or later. */
  directory: boolean;
}

export interface ReservedInputs {
  config?: LoadedConfig | undefined;
  /** `--state-dir` as given (relative to `cwd`). */
  stateDir?: string | undefined;
  /** `--secret-file` as given (relative to `cwd`). */
  secretFile?: string | undefined;
  /** The TLS pair being served (absolute). */
  tls?: { cert: string; key: string } | undefined;
  /** What relative command-line paths and the audit log's path resolve against. @default process.cwd() */
  cwd?: string | undefined;
}

/** The state directory: `--state-dir`, else `server.stateDir` (relative to the config file), else the platform cache. */
export function stateDirFor(
  given: string | undefined,
  config: LoadedConfig | undefined,
  cwd: string = process.cwd(),
): string {
  if (given !== undefined) return resolve(cwd, given);
  const configured = config?.server.stateDir;
  return configured === undefined ? defaultStateDir() : resolve(config!.dir, configured);
}

/** Everything Reservoir keeps, for the given settings. */
export function reservedPaths(inputs: ReservedInputs): ReservedPath[] {
  const cwd = inputs.cwd ?? process.cwd();
  const { config } = inputs;
  const out: ReservedPath[] = [
    { path: stateDirFor(inputs.stateDir, config, cwd), what: 'state directory', directory: true },
  ];
  if (config !== undefined) out.push({ path: config.file, what: 'config file', directory: false });
  if (inputs.tls !== undefined) {
    out.push({ path: inputs.tls.key, what: 'TLS key', directory: false });
    out.push({ path: inputs.tls.cert, what: 'TLS certificate', directory: false });
  }
  if (inputs.secretFile !== undefined)
    out.push({ path: resolve(cwd, inputs.secretFile), what: 'secret file', directory: false });
  const audit = config?.server.audit;
  if (audit?.sink === 'file') {
    // The path is opened as written, so relative to the working directory; rotated files sit beside it.
    const live = resolve(cwd, audit.path);
    out.push({ path: live, what: 'audit log', directory: false });
    for (let i = 1; i <= (audit.keep ?? 5); i += 1)
      out.push({ path: `${live}.${i}`, what: 'audit log', directory: false });
  }
  return out;
}

/** The files and directories of `reserved`, as a files provider's `hide` and `hideDirectories` take them. */
export function hiddenOf(reserved: readonly ReservedPath[]): {
  hide: string[];
  hideDirectories: string[];
} {
  return {
    hide: reserved.filter((r) => !r.directory).map((r) => r.path),
    hideDirectories: reserved.filter((r) => r.directory).map((r) => r.path),
  };
}

/** A served root, as `check` names it. */
export interface ServedRoot {
  /** `sources[0]`, `skills[1]`, `command line`. */
  origin: string;
  path: string;
  /** A git repository: only committed content is served, so a file in its work tree is served only if committed. */
  git?: boolean;
}

/**
 * One line per reserved path that lies under a served root (compared by real paths, so a symlinked
 * or relative spelling of either is caught): Reservoir hides it, but it should live elsewhere.
 */
export function reservedUnderRoots(
  reserved: readonly ReservedPath[],
  roots: readonly ServedRoot[],
): string[] {
  const lines: string[] = [];
  for (const root of roots) {
    const rootReal = realOrNearest(root.path);
    for (const entry of reserved) {
      const real = realOrNearest(entry.path);
      if (
        !(real === rootReal || real.startsWith(rootReal === sep ? rootReal : rootReal + sep)) &&
        !(entry.directory && isAncestor(real, rootReal))
      )
        continue;
      const where = `${root.origin} (${root.path})`;
      const shown = real === entry.path ? entry.path : `${entry.path} → ${real}`;
      lines.push(
        root.git === true
          ? `warning: the ${entry.what} ${shown} lies in the work tree of ${where}; a git source serves committed content only, so keep it untracked (.gitignore) and never commit it`
          : isAncestor(real, rootReal) && real !== rootReal
            ? `warning: the ${entry.what} ${shown} holds ${where}; nothing of that root is served — serve a directory outside it`
            : `warning: the ${entry.what} ${shown} lies under ${where}; Reservoir never serves it, but keep it outside served roots`,
      );
    }
  }
  return lines;
}

function isAncestor(dir: string, path: string): boolean {
  return path.startsWith(dir === sep ? dir : dir + sep);
}

/** The real path of `path`, or of its nearest existing parent with the rest appended. */
function realOrNearest(path: string): string {
  const tail: string[] = [];
  let head = path;
  for (;;) {
    try {
      return join(realpathSync.native(head), ...tail);
    } catch {
      const parent = dirname(head);
      if (parent === head) return path;
      tail.unshift(basename(head));
      head = parent;
    }
  }
}
