/**
 * What the start-up and `check --connect` tests of SQL sources share: running `reservoir check
 * --connect` on a config (bounded: a hung check fails the test, it does not hang it), waiting for
 * the error line a server logs about one source, and reading /readyz with a bearer token.
 */
import { execFile } from 'node:child_process';
import { CLI_PATH } from './build.js';
import type { HttpServerProcess } from './clients.js';

export interface CheckRun {
  /** The exit code, or null when the check was killed (it ran past 60 s). */
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `reservoir check --connect --config <config>`, killed after 60 s. */
export function checkConnect(config: string): Promise<CheckRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI_PATH, 'check', '--connect', '--config', config],
      { timeout: 60_000 },
      (error, stdout, stderr) =>
        resolve({
          code: error === null ? 0 : typeof error.code === 'number' ? error.code : null,
          stdout,
          stderr,
        }),
    );
  });
}

/**
 * Resolves with the first error-level log line naming `source` as soon as the server writes it, or
 * undefined if none came within 15 s (the test then fails on what it expected).
 */
export function sourceErrorLine(
  server: HttpServerProcess,
  source: string,
): Promise<Record<string, unknown> | undefined> {
  return new Promise((resolve) => {
    const find = (): Record<string, unknown> | undefined =>
      server
        .stderr()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .find((entry) => entry['level'] === 50 && entry['source'] === source);
    const timer = setTimeout(() => {
      server.child.stderr?.off('data', poll);
      resolve(find());
    }, 15_000);
    const poll = (): void => {
      const found = find();
      if (found === undefined) return;
      server.child.stderr?.off('data', poll);
      clearTimeout(timer);
      resolve(found);
    };
    server.child.stderr?.on('data', poll);
    poll();
  });
}

export interface Readiness {
  status: number;
  body: {
    status: string;
    sources: { source: string; ready: boolean; reason?: string; message?: string }[];
  };
}

/** GET /readyz of `server` with `Authorization: Bearer <token>`. */
export async function readyzWithToken(
  server: HttpServerProcess,
  token: string,
): Promise<Readiness> {
  const response = await fetch(new URL('/readyz', server.url), {
    headers: { authorization: `Bearer ${token}` },
  });
  return { status: response.status, body: (await response.json()) as never };
}
