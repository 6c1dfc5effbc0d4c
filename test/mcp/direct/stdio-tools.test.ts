// Which `tools/call` requests the stdio wire answers directly (src/mcp/direct/stdio.ts, tools.ts)
// and which reach the SDK: only a plain one — params `{ name }` or `{ name, arguments: {…} }`, no
// `_meta`, no `task`, a string or integer id — on a connection whose `initialize` was answered at
// a 2025-era revision, once the connection's tool caller exists, for a name it takes. The caller
// here is a recording double (what the real one answers: tools-parity.test.ts). Then, on a real
// server: a cancellation of a direct call aborts the tool and nothing is written for it.
import { PassThrough } from 'node:stream';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import type { LegacyToolCaller } from '../../../src/mcp/direct-tools.js';
import type { Caller } from '../../../src/mcp/guarded-call.js';
import { StdioWire } from '../../../src/stdio/wire.js';
import { removeDir } from '../../providers/helpers.js';
import { Connection, makeData, nextWaiting, serveData } from './tool-fixtures.js';

function turns(n = 4): Promise<void> {
  let p = Promise.resolve();
  for (let i = 0; i < n; i += 1)
    p = p.then(() => new Promise<void>((resolve) => setImmediate(resolve)));
  return p;
}

interface Recorded {
  name: string;
  args: unknown;
  caller: Caller;
  finish: () => void;
}

async function open(options: { caller?: 'later' } = {}) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  let text = '';
  stdout.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const calls: Recorded[] = [];
  const caller: LegacyToolCaller = {
    takes: (name) => name !== 'multi_round',
    call: (who, name, args) =>
      new Promise((resolve) =>
        calls.push({
          name,
          args,
          caller: who,
          finish: () => resolve({ content: [{ type: 'text', text: name }] }),
        }),
      ),
  };
  let ready = options.caller !== 'later';
  const wire = new StdioWire(stdin, stdout, { tools: () => (ready ? caller : undefined) });
  const delivered: JSONRPCMessage[] = [];
  wire.onmessage = (message) => delivered.push(message);
  await wire.start();
  const send = (message: unknown): void => void stdin.write(`${JSON.stringify(message)}\n`);
  const negotiate = async (revision: string): Promise<void> => {
    send({
      jsonrpc: '2.0',
      id: 'init',
      method: 'initialize',
      params: { protocolVersion: revision },
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
  const answers = (): unknown[] =>
    text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((message) => message['id'] !== 'init');
  return { wire, calls, delivered, send, negotiate, answers, made: () => (ready = true) };
}

const call = (id: unknown, params: unknown): Record<string, unknown> => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params,
});

describe('a tools/call on a 2025-era stdio connection', () => {
  it('is answered directly when plain, as the local user, with its arguments', async () => {
    const w = await open();
    await w.negotiate('2025-06-18');
    w.send(call(1, { name: 'sql_query', arguments: { sql: 'SELECT 1' } }));
    w.send(call('two', { name: 'list_resources' }));
    await turns();
    expect(w.delivered.filter((m) => 'id' in m && m.id !== 'init')).toEqual([]);
    expect(w.calls.map((c) => [c.name, c.args, c.caller.principal.kind])).toEqual([
      ['sql_query', { sql: 'SELECT 1' }, 'local'],
      ['list_resources', undefined, 'local'],
    ]);
    for (const c of w.calls) c.finish();
    await turns();
    expect(w.answers()).toEqual([
      { result: { content: [{ type: 'text', text: 'sql_query' }] }, jsonrpc: '2.0', id: 1 },
      {
        result: { content: [{ type: 'text', text: 'list_resources' }] },
        jsonrpc: '2.0',
        id: 'two',
      },
    ]);
    await w.wire.close();
  });

  it('goes to the SDK when anything about it is not plain', async () => {
    const w = await open();
    await w.negotiate('2025-11-25');
    const notPlain: Array<Record<string, unknown>> = [
      call(1, { name: 'a', _meta: {} }),
      call(2, { name: 'a', _meta: { progressToken: 7 } }),
      call(3, { name: 'a', task: { ttl: 1000 } }),
      call(4, { name: 'a', arguments: null }),
      call(5, { name: 'a', arguments: [1] }),
      call(6, { name: 'a', arguments: 'x' }),
      call(7, { name: 42 }),
      call(8, {}),
      call(9, ['a']),
      call(10, { name: 'a', extra: 1 }),
      call(11.5, { name: 'a' }),
      call(null, { name: 'a' }),
      { ...call(12, { name: 'a' }), extra: true },
      call(13, { name: 'multi_round' }),
    ];
    for (const message of notPlain) w.send(message);
    // An own `__proto__` member, as JSON.parse makes it.
    (w.wire as unknown as { deliver(line: string): void }).deliver(
      '{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"a","arguments":{"__proto__":{"x":1}}}}',
    );
    await turns();
    expect(w.calls).toEqual([]);
    // Params that are not an object, a fractional or null id and a member beyond the four make no
    // valid request: the wire refuses those itself (-32600), the SDK gets the rest.
    const delivered = w.delivered.filter((m) => 'id' in m && m.id !== 'init');
    expect(delivered.map((m) => 'id' in m && m.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 10, 13, 14]);
    await w.wire.close();
  });

  it('goes to the SDK before initialize is answered, at 2026-07-28, and before the caller exists', async () => {
    const early = await open();
    early.send(call(1, { name: 'a' }));
    await turns();
    expect(early.calls).toEqual([]);
    await early.negotiate('2026-07-28');
    early.send(call(2, { name: 'a' }));
    await turns();
    expect(early.calls).toEqual([]);
    expect(early.delivered.filter((m) => 'id' in m && m.id !== 'init')).toHaveLength(2);
    await early.wire.close();

    const later = await open({ caller: 'later' });
    await later.negotiate('2024-11-05');
    later.send(call(3, { name: 'a' }));
    await turns();
    expect(later.calls).toEqual([]);
    later.made();
    later.send(call(4, { name: 'a' }));
    await turns();
    expect(later.calls.map((c) => c.name)).toEqual(['a']);
    await later.wire.close();
  });

  it('reaches the SDK for an id already running here, and a cancellation keeps its answer off', async () => {
    const w = await open();
    await w.negotiate('2025-03-26');
    w.send(call(1, { name: 'a' }));
    w.send(call(1, { name: 'b' }));
    await turns();
    expect(w.calls.map((c) => c.name)).toEqual(['a']);
    expect(w.delivered.filter((m) => 'id' in m && m.id === 1)).toHaveLength(1);
    w.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } });
    await turns();
    expect(w.calls[0]!.caller.signal.aborted).toBe(true);
    w.calls[0]!.finish();
    await turns();
    expect(w.answers()).toEqual([]);
    await w.wire.close();
  });
});

describe('cancelling a direct tools/call on a real server', () => {
  it('aborts the tool and writes nothing for it', async () => {
    const data = makeData();
    const reservoir = serveData(data, true);
    const connection = new Connection(reservoir);
    await connection.initialize('2025-11-25');
    const started = nextWaiting();
    connection.send({ jsonrpc: '2.0', id: 'w', method: 'tools/call', params: { name: 'waits' } });
    const running = await started;
    connection.send({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 'w', reason: 'user' },
    });
    await running.aborted;
    expect(running.signal.aborted).toBe(true);
    // Lines are written in order: nothing for 'w' before the next ping's answer.
    const from = connection.lines.length;
    const after = await connection.request('p2', 'ping');
    expect(
      connection.lines
        .slice(0, from)
        .concat(after)
        .filter((line) => line.includes('"id":"w"')),
    ).toEqual([]);
    await connection.close();
    await reservoir.close();
    removeDir(data.dir);
  });
});
