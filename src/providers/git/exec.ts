/**
 * Running git safely. Every command goes through `spawn` with a fixed argument array — never a
 * shell — in an environment scrubbed of the caller's GIT_* variables and of system and global
 * configuration, with `-c` overrides that neutralise whatever the repository's own config could
 * make git run: hooks, fsmonitor, pagers, signature verification, network transports. Filters,
 * textconv and external diff tools are never asked for (no worktree is touched; diffs pass
 * `--no-ext-diff --no-textconv`). Pathspecs are literal (`GIT_LITERAL_PATHSPECS=1`), so no `:(magic)`
 * or glob in a client path means anything. Output is bounded: past `maxBytes` the process is killed.
 */
import { spawn, type SpawnOptions } from 'node:child_process';
import { ReservoirError } from '../../core/errors.js';
import { ProviderFailure } from '../utils/errors.js';

/** Overrides passed as `-c` before every subcommand. */
export const SAFE_CONFIG: readonly string[] = [
  'core.hooksPath=/dev/null',
  'core.fsmonitor=false',
  'core.pager=cat',
  'core.quotePath=false',
  'core.sshCommand=false',
  'core.askPass=false',
  'credential.helper=',
  'protocol.allow=never',
  'diff.external=',
  'diff.noprefix=false',
  'color.ui=false',
  'log.showSignature=false',
  'log.mailmap=false',
  'log.follow=false',
  'gc.auto=0',
  'maintenance.auto=false',
  'i18n.logOutputEncoding=UTF-8',
];

/** The environment of every git process: the caller's, minus GIT_*, plus ours. */
export function gitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.toUpperCase().startsWith('GIT_')) env[key] = value;
  }
  return {
    ...env,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_LITERAL_PATHSPECS: '1',
    GIT_NO_LAZY_FETCH: '1',
    GIT_PAGER: 'cat',
    PAGER: 'cat',
    GIT_ASKPASS: 'false',
    SSH_ASKPASS: 'false',
    LC_ALL: 'C',
    LANGUAGE: 'C',
    ...extra,
  };
}

/** The full argument array for `git <args>`: the safe `-c` overrides first. */
export function gitArgs(args: readonly string[]): string[] {
  return ['--no-pager', ...SAFE_CONFIG.flatMap((c) => ['-c', c]), ...args];
}

/** Why git could not answer; turned into an UnavailableError under the URI asked for. */
export class GitFailure extends ProviderFailure {
  constructor(reason: string, options: { cause?: unknown } = {}) {
    super('unavailable', reason, options);
    this.name = 'GitFailure';
  }
}

/** Output past the bound given to `runGit`. */
export class OutputTooLarge extends Error {
  constructor(
    readonly limit: number,
    /** The size when known; otherwise only "over the limit". */
    readonly size?: number,
  ) {
    super(`git output over ${limit} bytes`);
    this.name = 'OutputTooLarge';
  }
}

export interface RunOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Most stdout bytes kept; past it the process is killed and OutputTooLarge thrown. */
  maxBytes: number;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /** Exit codes that are not failures. @default [0] */
  okCodes?: readonly number[] | undefined;
}

/** Runs `git <args>` and resolves with its stdout. Fails with GitFailure, OutputTooLarge, a timeout or the abort reason. */
export function runGit(args: readonly string[], options: RunOptions): Promise<Buffer> {
  options.signal?.throwIfAborted();
  return new Promise((resolve, reject) => {
    const spawnOptions: SpawnOptions = {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      windowsHide: true,
    };
    const child = spawn('git', gitArgs(args), spawnOptions);
    const chunks: Buffer[] = [];
    let size = 0;
    let stderr = '';
    let failure: Error | undefined;
    const stop = (error: Error): void => {
      failure ??= error;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(
      () =>
        stop(
          new ReservoirError('timeout', `git did not answer within ${options.timeoutMs} ms`, {
            data: { limitMs: options.timeoutMs },
          }),
        ),
      options.timeoutMs,
    );
    const onAbort = (): void =>
      stop(options.signal?.reason instanceof Error ? options.signal.reason : new Error('aborted'));
    options.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout!.on('data', (chunk: Buffer) => {
      if (failure !== undefined) return;
      size += chunk.length;
      if (size > options.maxBytes) stop(new OutputTooLarge(options.maxBytes));
      else chunks.push(chunk);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      if (stderr.length < 4096) stderr += chunk.toString('utf8');
    });
    const finish = (error: Error | undefined): void => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      if (error !== undefined) reject(error);
      else resolve(Buffer.concat(chunks, size));
    };
    child.once('error', (error) =>
      stop(new GitFailure(describeSpawnError(error), { cause: error })),
    );
    child.once('close', (code) => {
      if (failure !== undefined) return finish(failure);
      if (code !== null && (options.okCodes ?? [0]).includes(code)) return finish(undefined);
      finish(new GitFailure(firstLine(stderr) || `git exited with code ${String(code)}`));
    });
  });
}

export function describeSpawnError(error: NodeJS.ErrnoException): string {
  if (error.code === 'ENOENT')
    return 'git could not be started (is git installed, and does the repository directory exist?)';
  return `git could not be started (${error.code ?? error.message})`;
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0]?.slice(0, 300) ?? '';
}
