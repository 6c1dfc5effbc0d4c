/**
 * Servers for the direct `tools/call` tests: one over a small tree and a SQLite file, with the
 * built-in tools, sql_query and test tools made to reach every branch of the handler's body — a
 * resource_link, an embedded blob over a client's cap, a non-object structuredContent, `_meta`, a
 * failure, a refusal, a missing client capability, `ctx.log` at two levels, a tool that waits for
 * its cancellation — and one multi-round tool (not declared one-round: the SDK answers it). Plus a
 * stdio connection on in-memory streams that keeps every line written.
 */
import { once } from 'node:events';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { z } from 'zod';
import { BlobCaps } from '../../../src/core/blob-caps.js';
import { NotFoundError } from '../../../src/core/errors.js';
import { inputRequired } from '../../../src/core/input.js';
import { answeringInOneRound, defineTool, type Tool } from '../../../src/core/tools.js';
import { filesProvider } from '../../../src/providers/files/index.js';
import { sqlProvider } from '../../../src/providers/sql/index.js';
import { sqlQueryTool } from '../../../src/providers/sql/tool.js';
import { createReservoir, type Reservoir } from '../../../src/server/index.js';
import type { PolicyOptions } from '../../../src/server/policy.js';
import { builtinTools, whoAmITool } from '../../../src/tools/index.js';
import { loadSqliteDriver } from '../../../src/core/sqlite-driver.js';
import { tempDir } from '../../providers/helpers.js';
import { writeTree } from '../../helpers/tree.js';

/** The client name a blob cap applies to (sent at `initialize`). */
export const CAPPED_CLIENT = 'parity-capped';

/** Makes the tree and the database; returns the directory (remove it when done). */
export function makeData(): { dir: string; root: string; db: string } {
  const dir = tempDir('reservoir-tool-parity-');
  const root = join(dir, 'tree');
  writeTree(root, { 'note.txt': 'hello\n', 'sub/inner.txt': 'inner\n', 'b.md': '# B\n' });
  const db = join(dir, 'app.db');
  const Database = loadSqliteDriver();
  const handle = new Database(db);
  handle.exec('CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL)');
  for (const [id, name] of [
    [1, 'ada'],
    [2, 'grace'],
    [3, 'edsger'],
  ] as const)
    handle.prepare('INSERT INTO users VALUES (?, ?)').run(id, name);
  handle.close();
  return { dir, root, db };
}

/** A `waits` call in flight: its signal, and a promise of its abort. */
export interface Waiting {
  signal: AbortSignal;
  aborted: Promise<void>;
}

const waiters: Array<(call: Waiting) => void> = [];

/** Resolves with the next `waits` call once the tool runs. */
export function nextWaiting(): Promise<Waiting> {
  return new Promise((resolve) => waiters.push(resolve));
}

function testTools(): Tool[] {
  const none = z.strictObject({});
  const one = <T extends Tool>(tool: T): T => answeringInOneRound(tool);
  return [
    one(
      defineTool({
        name: 'links',
        description: 'A link, an embedded text and some text',
        input: none,
        call: () => ({
          content: [
            { type: 'text', text: 'see' },
            { type: 'resource_link', uri: 'file:///x/note.txt', name: 'note.txt' },
            { type: 'resource', resource: { uri: 'file:///x/e.txt', text: 'embedded' } },
          ],
        }),
      }),
    ),
    one(
      defineTool({
        name: 'blob',
        description: 'An embedded blob of 24 bytes',
        input: none,
        call: () => ({
          content: [
            { type: 'resource_link', uri: 'file:///x/b.bin', name: 'b.bin' },
            {
              type: 'resource',
              resource: { uri: 'file:///x/b.bin', blob: Buffer.alloc(24, 7).toString('base64') },
            },
          ],
        }),
      }),
    ),
    one(
      defineTool({
        name: 'scalar',
        description: 'A non-object structuredContent',
        input: none,
        output: z.array(z.string()),
        call: () => ({ content: [], structuredContent: ['a', 'b'] as never }),
      }),
    ),
    one(
      defineTool({
        name: 'meta',
        description: 'A result with _meta after its content',
        input: z.strictObject({ n: z.number().int().optional() }),
        call: ({ n }) => ({
          content: [{ type: 'text', text: `n=${n ?? 0}`, annotations: { priority: 1 } }],
          isError: false,
          _meta: { n: n ?? 0 },
        }),
      }),
    ),
    one(
      defineTool({
        name: 'fails',
        description: 'Throws',
        input: none,
        call: () => {
          throw new Error('boom');
        },
      }),
    ),
    one(
      defineTool({
        name: 'refuses',
        description: 'Throws a ReservoirError',
        input: none,
        call: () => {
          throw new NotFoundError('file:///nowhere.txt');
        },
      }),
    ),
    one(
      defineTool({
        name: 'needs',
        description: 'Needs sampling',
        input: none,
        call: (_args, ctx) => {
          ctx.requireCapabilities({ sampling: {} });
          return { content: [{ type: 'text', text: 'sampled' }] };
        },
      }),
    ),
    one(
      defineTool({
        name: 'chatty',
        description: 'Logs at two levels',
        input: none,
        call: async (_args, ctx) => {
          await ctx.log('info', { step: 1 });
          await ctx.log('debug', 'fine detail');
          await ctx.log('error', 'loud');
          return { content: [{ type: 'text', text: 'done' }] };
        },
      }),
    ),
    one(
      defineTool({
        name: 'waits',
        description: 'Waits until cancelled',
        input: none,
        call: async (_args, ctx) => {
          const signal = ctx.signal!;
          const aborted = new Promise<void>((resolve) =>
            signal.addEventListener('abort', () => resolve(), { once: true }),
          );
          waiters.shift()?.({ signal, aborted });
          await aborted;
          return { content: [{ type: 'text', text: 'cancelled' }] };
        },
      }),
    ),
    defineTool({
      name: 'asks',
      description: 'Asks for input (multi-round)',
      input: none,
      call: (_args, ctx) =>
        ctx.state() === undefined
          ? inputRequired({ state: { asked: true } })
          : { content: [{ type: 'text', text: 'asked' }] },
    }),
  ];
}

/** A server over the data: `direct` false sends every request through the SDK. */
let audits = 0;

export function serveData(
  data: { dir: string; root: string; db: string },
  direct: boolean,
  policy?: PolicyOptions,
): Reservoir {
  const sql = sqlProvider({ path: data.db, name: 'app' });
  const reservoir = createReservoir({
    // Every head read by the listing itself (the default budget may leave some to a later one on a
    // loaded machine, and the two servers compared would then describe the files differently).
    providers: [filesProvider({ root: data.root, headBudgetMs: 60_000 }), sql],
    directReads: direct,
    // One cursor key for both servers: a page's cursor is then the same bytes on each.
    secret: 'tool-parity-secret-0123456789abcdef-0123456789',
    logging: true,
    blobCaps: new BlobCaps([{ clients: [CAPPED_CLIENT], maxBlobBytes: 16 }]),
    // Audit records reach the `reservoir:operation` channel only from an audit log.
    policy: {
      audit: { sink: 'file', path: join(data.dir, `audit-${(audits += 1)}.log`) },
      ...policy,
    },
  });
  for (const tool of [
    ...builtinTools(reservoir.registry),
    whoAmITool(reservoir.registry),
    sqlQueryTool(sql, { name: 'sql_query' }),
    ...testTools(),
  ])
    reservoir.tools.add(tool);
  return reservoir;
}

/** A 2025-era stdio connection on in-memory streams, every line it writes kept. */
export class Connection {
  readonly lines: string[] = [];
  private buffered = '';
  private readonly stdin = new PassThrough();
  private readonly stdout = new PassThrough();
  private readonly handle;

  constructor(reservoir: Reservoir) {
    this.handle = reservoir.serveStdio({ stdin: this.stdin, stdout: this.stdout });
    this.stdout.on('data', (chunk: Buffer) => {
      this.buffered += chunk.toString('utf8');
      let newline: number;
      while ((newline = this.buffered.indexOf('\n')) !== -1) {
        this.lines.push(this.buffered.slice(0, newline));
        this.buffered = this.buffered.slice(newline + 1);
      }
    });
  }

  send(message: unknown): void {
    this.stdin.write(`${JSON.stringify(message)}\n`);
  }

  /** Sends request `id` and resolves every line written from then until its answer, the answer last. */
  async request(id: number | string, method: string, params?: unknown): Promise<string[]> {
    const from = this.lines.length;
    this.send({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
    return this.linesUntil(id, from);
  }

  /** The lines written from index `from` until (and with) the answer to `id`. */
  async linesUntil(id: number | string, from: number): Promise<string[]> {
    for (;;) {
      const at = this.lines.findIndex(
        (line, i) => i >= from && (JSON.parse(line) as { id?: unknown }).id === id,
      );
      if (at !== -1) return this.lines.slice(from, at + 1);
      await once(this.stdout, 'data');
    }
  }

  /** The 2025 handshake at `revision` as `client`, then the log level. */
  async initialize(revision: string, client = 'parity', level = 'info'): Promise<void> {
    await this.request('init', 'initialize', {
      protocolVersion: revision,
      capabilities: {},
      clientInfo: { name: client, version: '1.0.0' },
    });
    this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await this.request('level', 'logging/setLevel', { level });
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}
