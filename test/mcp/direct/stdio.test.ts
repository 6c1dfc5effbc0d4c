// Which stdio messages the wire answers directly (src/mcp/direct/stdio.ts) and which reach the SDK:
// only a plain resources/read, resources/subscribe or resources/unsubscribe on a connection whose
// initialize was answered with a 2025-era revision (a subscribe only once the connection's
// subscriber exists); a cancellation aborts a direct request and keeps its answer off the wire;
// closing the connection aborts every request in flight. The direct read and the subscriber here
// are recording doubles: what they answer is pinned end to end against the SDK's own answers in
// test/e2e/stdio-direct-read.test.ts and test/e2e/stdio-direct-subscribe.test.ts.
import { PassThrough } from 'node:stream';
import type { JSONRPCMessage, ProtocolEra, RequestId } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import type { Cancellation } from '../../../src/core/cancellation.js';
import type { DirectRead } from '../../../src/mcp/direct/read.js';
import type { Caller } from '../../../src/mcp/guarded-call.js';
import type { LegacySubscriber } from '../../../src/mcp/subscribe.js';
import { StdioWire } from '../../../src/stdio/wire.js';

interface Call {
  id: RequestId;
  uri: string;
  era: ProtocolEra | undefined;
  cancel: Cancellation;
  finish: () => void;
}

function turns(n = 4): Promise<void> {
  let p = Promise.resolve();
  for (let i = 0; i < n; i += 1)
    p = p.then(() => new Promise<void>((resolve) => setImmediate(resolve)));
  return p;
}

interface SubscriberCall {
  method: 'subscribe' | 'unsubscribe';
  uri: string;
  caller: Caller;
  finish: () => void;
}

async function open(
  options: { declines?: (uri: string) => boolean; subscriber?: 'none' | 'later' } = {},
) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  let text = '';
  stdout.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const calls: Call[] = [];
  const directRead: DirectRead = (id, uri, _authInfo, cancel, era) => {
    if (options.declines?.(uri) === true) return undefined;
    return new Promise((resolve) => {
      calls.push({
        id,
        uri,
        era,
        cancel,
        finish: () =>
          resolve(JSON.stringify({ result: { contents: [], direct: uri }, jsonrpc: '2.0', id })),
      });
    });
  };
  const subscriberCalls: SubscriberCall[] = [];
  const subscriber: LegacySubscriber = {
    subscribe: (caller, uri) =>
      new Promise((resolve) =>
        subscriberCalls.push({ method: 'subscribe', uri, caller, finish: () => resolve({}) }),
      ),
    unsubscribe: (caller, uri) => {
      subscriberCalls.push({ method: 'unsubscribe', uri, caller, finish: () => undefined });
      return {};
    },
  };
  let subscriberReady = options.subscriber !== 'later';
  const wire = new StdioWire(stdin, stdout, {
    directRead,
    subscriber:
      options.subscriber === 'none' ? undefined : () => (subscriberReady ? subscriber : undefined),
  });
  const delivered: JSONRPCMessage[] = [];
  wire.onmessage = (message) => delivered.push(message);
  await wire.start();
  const send = (message: unknown): void => void stdin.write(`${JSON.stringify(message)}\n`);
  /** The 2025 handshake as the SDK would answer it, at `revision`. */
  const negotiate = async (revision: string): Promise<void> => {
    send({
      jsonrpc: '2.0',
      id: 'init',
      method: 'initialize',
      params: {
        protocolVersion: revision,
        capabilities: {},
        clientInfo: { name: 't', version: '1' },
      },
    });
    await turns();
    await wire.send({
      jsonrpc: '2.0',
      id: 'init',
      result: {
        protocolVersion: revision,
        capabilities: {},
        serverInfo: { name: 's', version: '1' },
      },
    });
  };
  const answers = (): Array<Record<string, unknown>> =>
    text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((message) => message['id'] !== 'init');
  return {
    wire,
    calls,
    subscriberCalls,
    delivered,
    send,
    negotiate,
    answers,
    subscriberMade: () => (subscriberReady = true),
  };
}

const read = (
  id: RequestId,
  params: Record<string, unknown> = { uri: 'file:///srv/a.txt' },
): Record<string, unknown> => ({ jsonrpc: '2.0', id, method: 'resources/read', params });

describe('stdio direct reads', () => {
  it.each(['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'])(
    'answers a plain read on a %s connection itself, in the 2025 shape, and not through the SDK',
    async (revision) => {
      const h = await open();
      await h.negotiate(revision);
      h.send(read(1));
      await turns();
      expect(h.calls.map(({ id, uri, era }) => ({ id, uri, era }))).toEqual([
        { id: 1, uri: 'file:///srv/a.txt', era: 'legacy' },
      ]);
      expect(h.delivered.filter((m) => 'id' in m && m.id === 1)).toEqual([]);
      h.calls[0]!.finish();
      await turns();
      expect(h.answers()).toEqual([
        { result: { contents: [], direct: 'file:///srv/a.txt' }, jsonrpc: '2.0', id: 1 },
      ]);
    },
  );

  it('leaves every read to the SDK until initialize has been answered', async () => {
    const h = await open();
    h.send(read(1));
    h.send({
      jsonrpc: '2.0',
      id: 'init',
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 't', version: '1' },
      },
    });
    h.send(read(2));
    await turns();
    expect(h.calls).toEqual([]);
    expect(h.delivered.map((m) => ('id' in m ? m.id : undefined))).toEqual([1, 'init', 2]);
  });

  it('leaves a connection that negotiated 2026-07-28, or a revision it does not know, to the SDK', async () => {
    for (const revision of ['2026-07-28', '2099-01-01']) {
      const h = await open();
      await h.negotiate(revision);
      h.send(read(1));
      await turns();
      expect(h.calls).toEqual([]);
      expect(h.delivered.map((m) => ('id' in m ? m.id : undefined))).toContain(1);
    }
  });

  it('leaves a read with anything beyond its uri to the SDK: _meta, a progress token, other params, other members', async () => {
    const h = await open();
    await h.negotiate('2025-11-25');
    const notPlain = [
      read(1, { uri: 'file:///srv/a.txt', _meta: {} }),
      read(2, { uri: 'file:///srv/a.txt', _meta: { progressToken: 'p' } }),
      read(3, { uri: 'file:///srv/a.txt', extra: true }),
      read(4, {}),
      read(5, { uri: 42 }),
      { jsonrpc: '2.0', id: 6, method: 'resources/list', params: {} },
      { jsonrpc: '2.0', id: 7, method: 'resources/read' },
    ];
    for (const message of notPlain) h.send(message);
    await turns();
    expect(h.calls).toEqual([]);
  });

  it('gives the SDK a read whose id is already in flight as a direct read, and a URI the direct read declines', async () => {
    const h = await open({ declines: (uri) => uri.startsWith('ui://') });
    await h.negotiate('2025-11-25');
    h.send(read(1));
    h.send(read(1));
    h.send(read(2, { uri: 'ui://reservoir/explorer' }));
    await turns();
    expect(h.calls.map((c) => c.id)).toEqual([1]);
    expect(
      h.delivered
        .filter((m) => 'method' in m && m.method === 'resources/read')
        .map((m) => ('id' in m ? m.id : undefined)),
    ).toEqual([1, 2]);
  });

  it('aborts a read the client cancels and never writes its answer; the cancellation still reaches the SDK', async () => {
    const h = await open();
    await h.negotiate('2025-11-25');
    h.send(read('slow'));
    h.send(read('fast'));
    await turns();
    const cancel = {
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 'slow', reason: 'user gave up' },
    };
    h.send(cancel);
    await turns();
    const slow = h.calls.find((c) => c.id === 'slow')!;
    expect(slow.cancel.aborted).toBe(true);
    expect(slow.cancel.reason).toBe('user gave up');
    expect(h.delivered).toContainEqual(cancel);
    slow.finish();
    h.calls.find((c) => c.id === 'fast')!.finish();
    await turns();
    expect(h.answers().map((m) => m['id'])).toEqual(['fast']);
    // The id is free again: a new read under it is answered.
    h.send(read('slow'));
    await turns();
    h.calls.at(-1)!.finish();
    await turns();
    expect(h.answers().map((m) => m['id'])).toEqual(['fast', 'slow']);
  });

  it('aborts every read in flight when the connection closes, and writes nothing after', async () => {
    const h = await open();
    await h.negotiate('2025-11-25');
    h.send(read(1));
    h.send(read(2));
    await turns();
    await h.wire.close();
    expect(h.calls.map((c) => c.cancel.aborted)).toEqual([true, true]);
    for (const call of h.calls) call.finish();
    await turns();
    expect(h.answers()).toEqual([]);
  });
});

const subscribe = (
  id: RequestId,
  params: Record<string, unknown> = { uri: 'file:///srv/a.txt' },
  method = 'resources/subscribe',
): Record<string, unknown> => ({ jsonrpc: '2.0', id, method, params });

describe('stdio direct subscribes', () => {
  it.each(['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'])(
    'answers a plain subscribe and unsubscribe on a %s connection through its subscriber, not the SDK',
    async (revision) => {
      const h = await open();
      await h.negotiate(revision);
      h.send(subscribe(1));
      h.send(subscribe(2, { uri: 'file:///srv/a.txt' }, 'resources/unsubscribe'));
      await turns();
      expect(h.subscriberCalls.map(({ method, uri }) => ({ method, uri }))).toEqual([
        { method: 'subscribe', uri: 'file:///srv/a.txt' },
        { method: 'unsubscribe', uri: 'file:///srv/a.txt' },
      ]);
      // As the local user, as the SDK handler on stdio runs it.
      expect(h.subscriberCalls[0]!.caller.principal).toMatchObject({ kind: 'local' });
      expect(h.delivered.filter((m) => 'id' in m && m.id !== 'init')).toEqual([]);
      h.subscriberCalls[0]!.finish();
      await turns();
      expect(h.answers()).toEqual([
        { result: {}, jsonrpc: '2.0', id: 2 },
        { result: {}, jsonrpc: '2.0', id: 1 },
      ]);
    },
  );

  it('leaves subscribes to the SDK before initialize is answered, on 2026-07-28, and while no subscriber exists', async () => {
    const before = await open();
    before.send(subscribe(1));
    await turns();
    expect(before.subscriberCalls).toEqual([]);
    expect(before.delivered.map((m) => ('id' in m ? m.id : undefined))).toEqual([1]);

    const modern = await open();
    await modern.negotiate('2026-07-28');
    modern.send(subscribe(1));
    await turns();
    expect(modern.subscriberCalls).toEqual([]);

    const later = await open({ subscriber: 'later' });
    await later.negotiate('2025-11-25');
    later.send(subscribe(1));
    await turns();
    expect(later.subscriberCalls).toEqual([]);
    later.subscriberMade();
    later.send(subscribe(2));
    await turns();
    expect(later.subscriberCalls.map((c) => c.uri)).toEqual(['file:///srv/a.txt']);
    expect(later.delivered.map((m) => ('id' in m ? m.id : undefined))).toContain(1);

    const none = await open({ subscriber: 'none' });
    await none.negotiate('2025-11-25');
    none.send(subscribe(1));
    await turns();
    expect(none.delivered.map((m) => ('id' in m ? m.id : undefined))).toContain(1);
  });

  it('leaves a subscribe with anything beyond its uri to the SDK, and one whose id is in flight', async () => {
    const h = await open();
    await h.negotiate('2025-11-25');
    const notPlain = [
      subscribe(1, { uri: 'file:///srv/a.txt', _meta: {} }),
      subscribe(2, { uri: 'file:///srv/a.txt', _meta: { progressToken: 'p' } }),
      subscribe(3, { uri: 'file:///srv/a.txt', extra: true }),
      subscribe(4, {}),
      subscribe(5, { uri: 42 }),
      subscribe(6, { uri: 42 }, 'resources/unsubscribe'),
      { jsonrpc: '2.0', id: 7, method: 'resources/subscribe' },
    ];
    for (const message of notPlain) h.send(message);
    h.send(subscribe('busy'));
    h.send(subscribe('busy'));
    await turns();
    expect(h.subscriberCalls).toHaveLength(1);
    expect(h.delivered.map((m) => ('id' in m ? m.id : undefined))).toEqual([
      'init',
      1,
      2,
      3,
      4,
      5,
      6,
      7,
      'busy',
    ]);
  });

  it('aborts a subscribe the client cancels and never writes its answer', async () => {
    const h = await open();
    await h.negotiate('2025-11-25');
    h.send(subscribe('slow'));
    await turns();
    h.send({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 'slow', reason: 'no longer wanted' },
    });
    await turns();
    const call = h.subscriberCalls[0]!;
    expect((call.caller.signal as { aborted: boolean }).aborted).toBe(true);
    call.finish();
    await turns();
    expect(h.answers()).toEqual([]);
  });
});
