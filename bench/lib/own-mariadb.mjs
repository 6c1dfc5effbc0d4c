/**
 * A mariadbd of the bench's own (the shared server is never reconfigured): a fresh data directory
 * from mariadb-install-db, the server on a free port with the given options, root without a
 * password and a database `test`. Rejects, saying why, where the binaries are missing.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const find = (name) =>
  [`/usr/sbin/${name}`, `/usr/bin/${name}`, `/usr/local/bin/${name}`].find((p) => existsSync(p));

function runToEnd(command, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (out += chunk));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} exited (${code}): ${out}`)),
    );
  });
}

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export async function ownMariadb(serverArgs) {
  const mariadbd = find('mariadbd');
  const installDb = find('mariadb-install-db');
  if (mariadbd === undefined || installDb === undefined)
    throw new Error('mariadbd / mariadb-install-db are not installed');
  const dir = await mkdtemp(join(tmpdir(), 'reservoir-bench-mariadb-'));
  const data = join(dir, 'data');
  const asRoot = process.getuid?.() === 0 ? ['--user=root'] : [];
  try {
    await runToEnd(installDb, [
      '--no-defaults',
      ...asRoot,
      '--auth-root-authentication-method=normal',
      '--skip-test-db',
      `--datadir=${data}`,
    ]);
    await writeFile(join(dir, 'init.sql'), 'CREATE DATABASE IF NOT EXISTS test;\n');
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  const port = await freePort();
  const child = spawn(
    mariadbd,
    [
      '--no-defaults',
      ...asRoot,
      `--datadir=${data}`,
      `--socket=${join(dir, 'sock')}`,
      `--port=${port}`,
      '--bind-address=127.0.0.1',
      '--skip-name-resolve',
      '--innodb-buffer-pool-size=16M',
      `--init-file=${join(dir, 'init.sql')}`,
      ...serverArgs,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await new Promise((resolve, reject) => {
      let out = '';
      child.stderr.on('data', (chunk) => {
        out += chunk;
        if (out.includes('ready for connections')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`mariadbd exited (${code}): ${out}`)));
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return { port, url: `mysql://root@127.0.0.1:${port}/test`, stop };
}
