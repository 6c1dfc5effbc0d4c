/**
 * A MariaDB server of the test's own (never the shared one, whose binary log is off and stays so):
 * a fresh data directory from `mariadb-install-db`, then `mariadbd` on a free port with the options
 * given (e.g. `--log-bin`). About 5 s to start on a loaded machine. Killed and removed by the
 * Cleanup it was given.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Cleanup } from './clients.js';
import { freePort } from './ports.js';

const find = (names: string[]): string | undefined =>
  names.flatMap((n) => [`/usr/sbin/${n}`, `/usr/bin/${n}`, `/usr/local/bin/${n}`]).find(existsSync);

export const MARIADBD = find(['mariadbd']);
export const MARIADB_INSTALL_DB = find(['mariadb-install-db']);

/** Why an own server cannot start here, or undefined when it can. */
export function ownMariadbMissing(): string | undefined {
  if (MARIADBD === undefined || MARIADB_INSTALL_DB === undefined)
    return 'mariadbd / mariadb-install-db are not installed (Debian: apt-get install mariadb-server)';
  return undefined;
}

export interface OwnMariadb {
  port: number;
  /** root, no password, database `test` (created). */
  url: string;
  stop(): Promise<void>;
}

/** Runs `command` to its end; rejects with its output when it fails. */
function runToEnd(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} exited (${code}): ${out}`)),
    );
  });
}

export async function ownMariadb(cleanup: Cleanup, serverArgs: string[]): Promise<OwnMariadb> {
  const dir = await mkdtemp(join(tmpdir(), 'reservoir-mariadb-'));
  cleanup.add(() => rm(dir, { recursive: true, force: true }));
  const data = join(dir, 'data');
  const asRoot = process.getuid?.() === 0 ? ['--user=root'] : [];
  await runToEnd(MARIADB_INSTALL_DB!, [
    '--no-defaults',
    ...asRoot,
    '--auth-root-authentication-method=normal',
    '--skip-test-db',
    `--datadir=${data}`,
  ]);
  await writeFile(join(dir, 'init.sql'), 'CREATE DATABASE IF NOT EXISTS test;\n');
  const port = await freePort();
  const child: ChildProcess = spawn(
    MARIADBD!,
    [
      '--no-defaults',
      ...asRoot,
      `--datadir=${data}`,
      `--socket=${join(dir, 'sock')}`,
      `--port=${port}`,
      '--bind-address=127.0.0.1',
      '--skip-name-resolve',
      '--innodb-buffer-pool-size=16M',
      '--init-file=' + join(dir, 'init.sql'),
      ...serverArgs,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const running = (): boolean => child.exitCode === null && child.signalCode === null;
  const stop = async (): Promise<void> => {
    if (!running()) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  };
  cleanup.add(stop);
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (out.includes('ready for connections')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`mariadbd exited (${code}): ${out}`)));
  });
  return { port, url: `mysql://root@127.0.0.1:${port}/test`, stop };
}
