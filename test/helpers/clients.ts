/**
 * Connects the real SDK client to a real Reservoir process, over a real stdio pipe (spawning the
 * built CLI) or a real HTTP socket, in either protocol era:
 *   - '2025': the client default (`initialize` handshake);
 *   - '2026': pinned to 2026-07-28 (per-request `_meta` envelope, no `initialize`).
 * Everything started here is registered with a `Cleanup` so afterAll/afterEach can stop it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import {
  Client,
  StreamableHTTPClientTransport,
  type ListResourcesResult,
} from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { CLI_PATH } from './build.js';

export type Era = '2025' | '2026';
export const ERAS: readonly Era[] = ['2025', '2026'];
export const MODERN_VERSION = '2026-07-28';
export const LEGACY_VERSION = '2025-11-25';
export const CLIENT_INFO = { name: 'reservoir-e2e', version: '0.0.0' };

/** Things to stop, stopped in reverse order of registration; errors are swallowed. */
export class Cleanup {
  private readonly tasks: (() => unknown)[] = [];

  add(task: () => unknown): void {
    this.tasks.push(task);
  }

  async run(): Promise<void> {
    while (this.tasks.length > 0) {
      const task = this.tasks.pop()!;
      try {
        await task();
      } catch {
        // best effort: a test that failed half-way may leave things already closed
      }
    }
  }
}

export function newClient(era: Era): Client {
  return era === '2025'
    ? new Client(CLIENT_INFO)
    : new Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: MODERN_VERSION } } });
}

export interface StdioConnection {
  client: Client;
  transport: StdioClientTransport;
  /** Everything the server wrote to stderr so far. */
  stderr(): string;
  close(): Promise<void>;
}

/** Spawns `reservoir serve ROOTS… ARGS…` and connects the SDK client to it over stdio. */
export async function connectStdio(
  era: Era,
  roots: string[],
  args: string[] = [],
  cleanup?: Cleanup,
): Promise<StdioConnection> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI_PATH, 'serve', ...roots, '--log-level', 'warn', ...args],
    stderr: 'pipe',
  });
  let errText = '';
  transport.stderr?.on('data', (chunk: Buffer) => (errText += chunk.toString('utf8')));
  const client = newClient(era);
  const close = async (): Promise<void> => {
    await client.close();
  };
  cleanup?.add(close);
  await client.connect(transport);
  return { client, transport, stderr: () => errText, close };
}

export interface HttpServerProcess {
  /** The endpoint URL, parsed from the `serving MCP at` log line. */
  url: string;
  child: ChildProcess;
  stderr(): string;
  /** Resolves with the exit code/signal (immediately if it already exited). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM, then SIGKILL after a grace period; resolves on exit. */
  stop(): Promise<void>;
}

/** Spawns `reservoir serve ROOTS… --http 127.0.0.1:0 ARGS…` and waits for its URL on stderr. */
export async function spawnHttpServer(
  roots: string[],
  args: string[] = [],
  cleanup?: Cleanup,
  env?: NodeJS.ProcessEnv,
): Promise<HttpServerProcess> {
  const child = spawn(
    process.execPath,
    [CLI_PATH, 'serve', ...roots, '--http', '127.0.0.1:0', '--log-level', 'info', ...args],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(env === undefined ? {} : { env }),
    },
  );
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    // 'close', not 'exit': it comes once stdout and stderr are read to their end.
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
    await exited;
    clearTimeout(timer);
  };
  cleanup?.add(stop);
  let errText = '';
  let outText = '';
  child.stdout.on('data', (chunk: Buffer) => (outText += chunk.toString('utf8')));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no URL logged within 60 s; stderr: ${errText}`)),
      60_000, // a ceiling for a hung start; a loaded machine can take many seconds to start one
    );
    const onData = (chunk: Buffer): void => {
      errText += chunk.toString('utf8');
      for (const line of errText.split('\n')) {
        const url = urlFromLogLine(line);
        if (url !== undefined) {
          clearTimeout(timer);
          resolve(url);
          return;
        }
      }
    };
    child.stderr.on('data', onData);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(
        new Error(
          `server exited (${code ?? signal}) before serving; stderr: ${errText} stdout: ${outText}`,
        ),
      );
    });
  });
  return { url, child, stderr: () => errText, exited, stop };
}

function urlFromLogLine(line: string): string | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const entry = JSON.parse(line) as { msg?: unknown; url?: unknown };
    return typeof entry.msg === 'string' &&
      entry.msg.startsWith('serving MCP at') &&
      typeof entry.url === 'string'
      ? entry.url
      : undefined;
  } catch {
    return undefined;
  }
}

export interface HttpConnection {
  client: Client;
  transport: StreamableHTTPClientTransport;
  close(): Promise<void>;
}

/** Connects the SDK client to a Streamable HTTP endpoint. */
export async function connectHttp(
  era: Era,
  url: string,
  cleanup?: Cleanup,
): Promise<HttpConnection> {
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const client = newClient(era);
  const close = async (): Promise<void> => {
    if (era === '2025') await transport.terminateSession().catch(() => undefined);
    await client.close();
  };
  cleanup?.add(close);
  await client.connect(transport);
  return { client, transport, close };
}

/** One `resources/list` page exactly as the server sent it (the SDK's `listResources()` would aggregate). */
export function listPage(client: Client, cursor?: string): Promise<ListResourcesResult> {
  return client.request({
    method: 'resources/list',
    params: cursor === undefined ? {} : { cursor },
  });
}

/** Walks every page; returns the pages as received. */
export async function listAllPages(
  client: Client,
  maxPages = 10_000,
): Promise<ListResourcesResult[]> {
  const pages: ListResourcesResult[] = [];
  let cursor: string | undefined;
  do {
    const page = await listPage(client, cursor);
    pages.push(page);
    cursor = page.nextCursor;
    if (pages.length > maxPages) throw new Error('pagination did not terminate');
  } while (cursor !== undefined);
  return pages;
}

export type TransportKind = 'stdio' | 'http';

export interface Target {
  transport: TransportKind;
  era: Era;
}

/** Every transport × era combination, for `describe.each`. */
export const TARGETS: readonly Target[] = [
  { transport: 'stdio', era: '2025' },
  { transport: 'stdio', era: '2026' },
  { transport: 'http', era: '2025' },
  { transport: 'http', era: '2026' },
];

export function label(target: Target): string {
  return `${target.transport} ${target.era} era`;
}

/**
 * Connects `target`'s client: over stdio a fresh CLI is spawned with `roots` and `args`; over HTTP
 * the client joins the already running server at `httpUrl` (whose roots and flags are its own).
 */
export async function connectTarget(
  target: Target,
  options: { roots: string[]; args?: string[]; httpUrl?: string },
  cleanup?: Cleanup,
): Promise<Client> {
  if (target.transport === 'stdio')
    return (await connectStdio(target.era, options.roots, options.args ?? [], cleanup)).client;
  if (options.httpUrl === undefined) throw new Error('connectTarget: an HTTP target needs httpUrl');
  return (await connectHttp(target.era, options.httpUrl, cleanup)).client;
}

/**
 * The era-specific result fields: a 2026-07-28 result carries `ttlMs`, `cacheScope` and the
 * server's identity in `_meta`; a 2025 result carries neither cache field.
 */
export function eraFields(era: Era, result: Record<string, unknown>): Record<string, unknown> {
  const meta = result['_meta'] as Record<string, unknown> | undefined;
  return era === '2025'
    ? { hasTtlMs: 'ttlMs' in result, hasCacheScope: 'cacheScope' in result }
    : {
        ttlMs: result['ttlMs'],
        cacheScope: result['cacheScope'],
        serverName: (meta?.['io.modelcontextprotocol/serverInfo'] as { name?: unknown } | undefined)
          ?.name,
      };
}

/** What `eraFields` must return for `era`, given the modern `ttlMs` expected. */
export function expectedEraFields(era: Era, ttlMs: number): Record<string, unknown> {
  return era === '2025'
    ? { hasTtlMs: false, hasCacheScope: false }
    : { ttlMs, cacheScope: 'public', serverName: 'reservoir' };
}
