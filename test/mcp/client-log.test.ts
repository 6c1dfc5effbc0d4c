// The server's own log records reach the MCP clients that ask for them (src/mcp/client-log.ts),
// through the real SDK client over in-memory stdio: in the 2025 era after `logging/setLevel`, at
// or above that level — a request's records to its own connection, records made outside any
// request to every connection that set a level; in the 2026-07-28 era only for a request carrying
// `_meta["io.modelcontextprotocol/logLevel"]`, and never without it. `reservoir serve` declares
// the capability and answers `logging/setLevel` with `{}`; a principal an access rule restricts
// hears nothing.
import { PassThrough } from 'node:stream';
import { Client, type LoggingMessageNotification } from '@modelcontextprotocol/client';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Logger } from '../../src/core/log.js';
import type { Principal } from '../../src/core/principal.js';
import type { Provider } from '../../src/core/types.js';
import { ClientLogRouter, dataOf, type LogSink } from '../../src/mcp/client-log.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { ensureBuilt } from '../helpers/build.js';
import { Cleanup, CLIENT_INFO, connectStdio, newClient, type Era } from '../helpers/clients.js';
import { eventually } from '../helpers/eventually.js';
import { StreamClientTransport } from '../helpers/stream-client.js';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { modernMeta, RawStdio } from '../helpers/wire.js';

const LOG_LEVEL = 'io.modelcontextprotocol/logLevel';
const NOTE = 'mem://notes/a';

const cleanup = new Cleanup();
let reservoir: Reservoir | undefined;

afterEach(async () => {
  await cleanup.run();
  await reservoir?.close();
  reservoir = undefined;
});

/** A one-note source whose read logs a warning and a debug line through the server's logger. */
function notesProvider(logger: () => Logger): Provider {
  return {
    name: 'notes',
    root: 'mem://notes/',
    list: async () => ({ items: [{ uri: NOTE, name: 'a', mimeType: 'text/plain' }] }),
    read: async (uri) => {
      logger().warn({ uri }, 'reading a note');
      logger().debug('note detail');
      return { contents: [{ uri, mimeType: 'text/plain', text: 'note' }] };
    },
  };
}

async function connect(
  era: Era,
): Promise<{ client: Client; messages: LoggingMessageNotification['params'][] }> {
  reservoir = createReservoir({ logging: true });
  const served = reservoir;
  served.mount(notesProvider(() => served.logger));
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  served.serveStdio({ stdin: toServer, stdout: toClient });
  const client = era === '2025' ? new Client(CLIENT_INFO) : newClient('2026');
  const messages: LoggingMessageNotification['params'][] = [];
  client.setNotificationHandler('notifications/message', (n) => void messages.push(n.params));
  await client.connect(new StreamClientTransport(toClient, toServer));
  cleanup.add(() => client.close());
  return { client, messages };
}

describe('server log records to 2025-era clients', () => {
  it('sends nothing before logging/setLevel, then a read’s records at or above the level', async () => {
    const { client, messages } = await connect('2025');
    expect(client.getServerCapabilities()?.logging).toEqual({});
    await client.readResource({ uri: NOTE });
    reservoir!.logger.error('outside any request');
    expect(messages).toEqual([]);

    await client.setLoggingLevel('warning');
    // A read with `_meta` goes through the SDK's dispatch (a plain one is answered on the direct
    // path, whose records go to no client: it has no request stream).
    await client.readResource({ uri: NOTE, _meta: { trace: 'x' } });
    // Sent on the request's stream, before its answer.
    expect(messages).toEqual([
      { level: 'warning', logger: 'reservoir', data: { message: 'reading a note', uri: NOTE } },
    ]);
  });

  it('sends records made outside any request to every connection that set a level', async () => {
    const { client, messages } = await connect('2025');
    await client.setLoggingLevel('debug');
    reservoir!.logger.error(
      { source: 'git://app/', err: new Error('repository gone') },
      'source lost',
    );
    await eventually(() => messages.length === 1, 'the record');
    expect(messages[0]).toEqual({
      level: 'error',
      logger: 'reservoir',
      data: {
        message: 'source lost',
        source: 'git://app/',
        err: { name: 'Error', message: 'repository gone' },
      },
    });
    await client.setLoggingLevel('emergency');
    reservoir!.logger.error('not at emergency');
    await client.readResource({ uri: NOTE, _meta: { trace: 'x' } });
    expect(messages).toHaveLength(1);
  });
});

describe('server log records to 2026-07-28 clients', () => {
  it('sends a request’s records at or above its logLevel, and none without one', async () => {
    const { client, messages } = await connect('2026');
    await client.readResource({ uri: NOTE });
    expect(messages).toEqual([]);
    await client.readResource({ uri: NOTE, _meta: { [LOG_LEVEL]: 'debug' } });
    expect(messages).toEqual([
      { level: 'warning', logger: 'reservoir', data: { message: 'reading a note', uri: NOTE } },
      { level: 'debug', logger: 'reservoir', data: { message: 'note detail' } },
    ]);
    // Records made outside any request go to no 2026-07-28 client.
    reservoir!.logger.error('outside any request');
    await client.readResource({ uri: NOTE, _meta: { [LOG_LEVEL]: 'error' } });
    expect(messages).toHaveLength(2);
  });
});

describe('ClientLogRouter', () => {
  const sink = (principal: Principal, sent: unknown[][]): LogSink => ({
    threshold: () => 'debug',
    principal: () => principal,
    send: async (level, data) => void sent.push([level, data]),
  });
  const restricted: Principal = { id: 'reader', kind: 'token', scopes: [] };
  const local: Principal = { id: 'local', kind: 'local', scopes: [] };

  it('tells a principal some access rule restricts nothing, in a request or outside one', async () => {
    const router = new ClientLogRouter((principal) => principal.kind === 'local');
    const base: Logger = { error: () => {}, warn: () => {}, info: () => {}, debug: () => {} };
    const logger = router.tee(base);
    const toRestricted: unknown[][] = [];
    const toLocal: unknown[][] = [];
    router.addConnection(sink(restricted, toRestricted));
    router.addConnection(sink(local, toLocal));
    logger.warn({ path: '/srv/secret/plan.md' }, 'watch lost');
    router.inRequest(sink(restricted, toRestricted), () => logger.error('internal error'));
    await Promise.resolve();
    expect(toRestricted).toEqual([]);
    expect(toLocal).toEqual([['warning', { message: 'watch lost', path: '/srv/secret/plan.md' }]]);
  });

  it('sends the records of a quiet request (a direct read) to no client at all', async () => {
    const router = new ClientLogRouter(() => true);
    const base: Logger = { error: () => {}, warn: () => {}, info: () => {}, debug: () => {} };
    const logger = router.tee(base);
    const toLocal: unknown[][] = [];
    router.addConnection(sink(local, toLocal));
    router.quietly(() => logger.error({ uri: 'file:///srv/a.md' }, 'read failed'));
    await Promise.resolve();
    expect(toLocal).toEqual([]);
  });

  it('keeps the base logger’s other properties (a settable level)', () => {
    const base = { error() {}, warn() {}, info() {}, debug() {}, level: 'info' };
    const logger = new ClientLogRouter(() => true).tee(base);
    logger.level = 'debug';
    expect(base.level).toBe('debug');
  });

  it('sends a record too large to send whole as its message alone', () => {
    expect(dataOf([{ blob: 'x'.repeat(20_000) }, 'big'])).toEqual({ message: 'big' });
    const circular: Record<string, unknown> = {};
    circular['self'] = circular;
    expect(dataOf([circular, 'loop'])).toEqual({ message: 'loop' });
  });
});

describe('reservoir serve', () => {
  beforeAll(() => ensureBuilt());

  it('declares logging and answers logging/setLevel with {} (2025 era)', async () => {
    const root = makeTempDir();
    cleanup.add(() => removeTree(root));
    writeTree(root, { 'a.md': '# A\n' });
    const { client } = await connectStdio('2025', [root], [], cleanup);
    expect(client.getServerCapabilities()?.logging).toEqual({});
    expect(await client.setLoggingLevel('info')).toEqual({});
  });

  it('answers logging/setLevel -32601 on the 2026-07-28 wire, where it was removed', async () => {
    const root = makeTempDir();
    cleanup.add(() => removeTree(root));
    writeTree(root, { 'a.md': '# A\n' });
    const raw = RawStdio.serve([root]);
    cleanup.add(async () => void (await raw.end()));
    const response = await raw.request('logging/setLevel', { level: 'info', _meta: modernMeta() });
    expect(response.error?.code).toBe(-32601);
  });
});
