/**
 * For the drain tests: an upstream that holds every request until the test lets it go (a slow
 * read the test controls, so "in flight" is an event, not a guess), a config serving it as
 * `api://slow/items/{id}`, and the built CLI started over stdio (a child this test spawned, so it
 * can be signalled) or HTTP, with the real SDK client connected and its stderr kept.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { CLI_PATH } from '../helpers/build.js';
import {
  connectHttp,
  newClient,
  spawnHttpServer,
  type Cleanup,
  type Target,
} from '../helpers/clients.js';
import { StreamClientTransport } from '../helpers/stream-client.js';
import { Upstream } from '../providers/http-upstream.js';

/** Upstream requests held open, each with the function that answers it. */
export class HeldUpstream {
  readonly held: (() => void)[] = [];

  private constructor(readonly upstream: Upstream) {
    upstream.otherwise((req, res) => {
      this.held.push(() =>
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ answered: true, path: req.url })),
      );
    });
  }

  static async start(): Promise<HeldUpstream> {
    return new HeldUpstream(await Upstream.start());
  }

  /** Answers every request held so far. */
  releaseAll(): void {
    for (const release of this.held.splice(0)) release();
  }

  async close(): Promise<void> {
    this.releaseAll();
    await this.upstream.close();
  }
}

/** Writes the config (no HTTP section: `--http` picks the transport) and returns its path. */
export function writeDrainConfig(dir: string, origin: string): string {
  const path = join(dir, 'reservoir.yaml');
  writeFileSync(
    path,
    [
      'sources:',
      '  - type: http',
      '    name: slow',
      `    baseUrl: ${origin}/`,
      '    allowPrivateNetworks: true',
      '    timeoutMs: 120000',
      '    endpoints:',
      '      - { name: item, uri: "items/{id}", upstream: "items/{id}" }',
      'server:',
      // 32 requests of one principal in flight at once: above the default cap of 16.
      '  limits: { concurrency: { perPrincipal: 64 }, deadlineMs: 120000 }',
      '',
    ].join('\n'),
  );
  return path;
}

export interface Running {
  client: Client;
  child: ChildProcess;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `reservoir serve --config CONFIG ARGS…` for `target` and connects the SDK client. */
export async function startServer(
  target: Target,
  config: string,
  args: string[],
  cleanup: Cleanup,
): Promise<Running> {
  if (target.transport === 'http') {
    const server = await spawnHttpServer([], ['--config', config, ...args], cleanup);
    const { client } = await connectHttp(target.era, server.url, cleanup);
    return { client, child: server.child, stderr: server.stderr, exited: server.exited };
  }
  const child = spawn(
    process.execPath,
    [CLI_PATH, 'serve', '--config', config, '--log-level', 'info', ...args],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    // 'close', not 'exit': it comes once stdout and stderr are read to their end.
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  cleanup.add(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  let errText = '';
  child.stderr!.on('data', (chunk: Buffer) => (errText += chunk.toString('utf8')));
  const client = newClient(target.era);
  await client.connect(new StreamClientTransport(child.stdout!, child.stdin!));
  return { client, child, stderr: () => errText, exited };
}

/** The JSON log entries of `stderr` whose message starts with `msg`. */
export function logEntries(stderr: string, msg: string): Record<string, unknown>[] {
  const entries: Record<string, unknown>[] = [];
  for (const line of stderr.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const entry = JSON.parse(line) as Record<string, unknown>;
      if (typeof entry['msg'] === 'string' && entry['msg'].startsWith(msg)) entries.push(entry);
    } catch {
      // a line still being written
    }
  }
  return entries;
}

export const DRAIN_STARTED = 'shutting down: draining';
export const DRAINED = 'drained: every request taken was answered';
