/**
 * A redis-server of the test's own on a free port (never the shared one), to take down, pause
 * (SIGSTOP: the connections stay open and nothing answers, as with a hung process) and resume. Every
 * server started is resumed and killed by the Cleanup it was given.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Cleanup } from './clients.js';
import { freePort } from './ports.js';

export const REDIS_SERVER = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((p) =>
  existsSync(p),
);

export interface OwnRedis {
  port: number;
  url: string;
  /** SIGSTOP: the process keeps its connections and answers nothing. */
  pause(): void;
  /** SIGCONT. */
  resume(): void;
  stop(): Promise<void>;
}

/** Starts redis-server on `port` (a free one by default); resolves once it accepts connections. */
export async function ownRedis(cleanup: Cleanup, port?: number): Promise<OwnRedis> {
  const at = port ?? (await freePort());
  const child: ChildProcess = spawn(
    REDIS_SERVER!,
    ['--port', String(at), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (out.includes('Ready to accept connections')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${out}`)));
  });
  const running = (): boolean => child.exitCode === null && child.signalCode === null;
  const signal = (name: NodeJS.Signals): void => {
    if (running()) child.kill(name);
  };
  const stop = async (): Promise<void> => {
    if (!running()) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await exited;
  };
  cleanup.add(stop);
  return {
    port: at,
    url: `redis://127.0.0.1:${at}`,
    pause: () => signal('SIGSTOP'),
    resume: () => signal('SIGCONT'),
    stop,
  };
}
