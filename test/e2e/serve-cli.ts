/**
 * Starts `reservoir serve ARGS…` (the built CLI) for one target — stdio or HTTP, either era — in a
 * chosen working directory, optionally as `nobody` (through setpriv, when the tests run as root),
 * and connects the real SDK client to it. The HTTP server's URL is read from its `serving MCP at`
 * log line, as `spawnHttpServer` does.
 */
import { spawn } from 'node:child_process';
import type { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { CLI_PATH } from '../helpers/build.js';
import { connectHttp, newClient, type Target } from '../helpers/clients.js';

export const RUNS_AS_ROOT = process.getuid?.() === 0;
const NOBODY = 65_534;

export interface Served {
  client: Client;
  close(): Promise<void>;
}

export interface ServeOptions {
  /** Arguments after `serve`. */
  args: string[];
  /** Working directory of the server. @default the test's */
  cwd?: string;
  /** Run as `nobody` when the tests run as root. */
  unprivileged?: boolean;
  /** Environment of the server. @default the test's */
  env?: NodeJS.ProcessEnv;
}

function command(argv: string[], unprivileged: boolean): { command: string; args: string[] } {
  return unprivileged && RUNS_AS_ROOT
    ? {
        command: 'setpriv',
        args: [
          `--reuid=${NOBODY}`,
          `--regid=${NOBODY}`,
          '--clear-groups',
          process.execPath,
          ...argv,
        ],
      }
    : { command: process.execPath, args: argv };
}

export async function serveCli(target: Target, options: ServeOptions): Promise<Served> {
  const unprivileged = options.unprivileged === true;
  if (target.transport === 'stdio') {
    const transport = new StdioClientTransport({
      ...command([CLI_PATH, 'serve', '--log-level', 'error', ...options.args], unprivileged),
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      ...(options.env === undefined ? {} : { env: options.env as Record<string, string> }),
    });
    const client = newClient(target.era);
    await client.connect(transport);
    return { client, close: () => client.close() };
  }
  const { command: cmd, args } = command(
    [CLI_PATH, 'serve', '--http', '127.0.0.1:0', '--log-level', 'info', ...options.args],
    unprivileged,
  );
  const child = spawn(cmd, args, {
    stdio: ['ignore', 'ignore', 'pipe'],
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    ...(options.env === undefined ? {} : { env: options.env }),
  });
  // 'close', not 'exit': it comes once stderr is read to its end.
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  let logged = '';
  try {
    const url = await new Promise<string>((resolve, reject) => {
      child.stderr.on('data', (chunk: Buffer) => {
        logged += chunk.toString('utf8');
        for (const line of logged.split('\n')) {
          if (!line.startsWith('{')) continue;
          const entry = JSON.parse(line) as { msg?: unknown; url?: unknown };
          if (
            typeof entry.msg === 'string' &&
            entry.msg.startsWith('serving MCP at') &&
            typeof entry.url === 'string'
          )
            resolve(entry.url);
        }
      });
      void exited.then(() => reject(new Error(`server exited before serving: ${logged}`)));
    });
    const connection = await connectHttp(target.era, url);
    return {
      client: connection.client,
      close: async () => {
        await connection.close();
        await stop();
      },
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
