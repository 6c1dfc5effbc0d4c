// Pins the JSON-RPC checks of Reservoir's own wire: the fast check `plainlyValid` accepts only what
// the SDK's schema accepts, unchanged (a seeded differential run over thousands of valid and invalid
// shapes), `toJsonRpcMessage` fails exactly when the schema does, the common shapes really take the
// fast path, and `headId` reads only the top-level id of a cut-off message, or gives up.
import { isDeepStrictEqual } from 'node:util';
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  RELATED_TASK_META_KEY,
  SERVER_INFO_META_KEY,
  parseJSONRPCMessage,
} from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { headId, plainlyValid, toJsonRpcMessage } from '../../src/stdio/jsonrpc.js';

/** mulberry32: a small seeded PRNG, so every run sees the same messages. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Builds JSON-shaped values (nothing JSON.parse could not produce) from a seeded PRNG. */
class Gen {
  private readonly next: () => number;
  constructor(seed: number) {
    this.next = prng(seed);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  /** Any request-id-like value, valid or not. */
  id(): unknown {
    return this.pick<() => unknown>([
      () => this.int(1000),
      () => -this.int(1000) - 1,
      () => 0,
      () => Number.MAX_SAFE_INTEGER,
      () => Number.MIN_SAFE_INTEGER,
      () => Number.MAX_SAFE_INTEGER + 1,
      () => -(2 ** 53) - 2,
      () => 1e21,
      () => Number('12345678901234567890'),
      () => 1.5,
      () => -0.25,
      () => 1e-7,
      () => `req-${this.int(100)}`,
      () => '',
      () => '42',
      () => 'ünïcødé 🎈',
      () => 'with "quotes" and \\ backslash',
      () => null,
      () => true,
      () => false,
      () => ({}),
      () => [1],
    ])();
  }

  /** A JSON value of bounded depth. */
  json(depth = 2): unknown {
    const leaf = (): unknown =>
      this.pick<() => unknown>([
        () => null,
        () => true,
        () => this.int(10),
        () => 2.5,
        () => 'text',
        () => '',
        () => 1e300,
      ])();
    if (depth <= 0 || this.chance(0.4)) return leaf();
    if (this.chance(0.5)) return Array.from({ length: this.int(3) }, () => this.json(depth - 1));
    const object: Record<string, unknown> = {};
    for (let i = this.int(3); i > 0; i -= 1)
      object[this.pick(['a', 'b', 'id', 'uri', 'nested', '_meta'])] = this.json(depth - 1);
    return object;
  }

  /** A `_meta` value for params: usually an object, sometimes with a progress token or related-task entry. */
  meta(): unknown {
    if (this.chance(0.1)) return this.pick([null, 'meta', 3, [], [{ progressToken: 1 }]]);
    const meta: Record<string, unknown> = {};
    if (this.chance(0.5)) meta['progressToken'] = this.id();
    if (this.chance(0.2))
      meta[RELATED_TASK_META_KEY] = this.pick<unknown>([
        { taskId: 't1' },
        { taskId: 7 },
        {},
        'task',
        null,
        { taskId: 't', extra: 1 },
      ]);
    if (this.chance(0.4)) {
      meta[PROTOCOL_VERSION_META_KEY] = '2026-07-28';
      meta[CLIENT_INFO_META_KEY] = { name: 'client', version: '1.0.0' };
      meta[CLIENT_CAPABILITIES_META_KEY] = {};
    }
    if (this.chance(0.2)) meta['custom/key'] = this.json(1);
    return meta;
  }

  /** A `params` member, or undefined for "leave it out". */
  params(): unknown {
    const roll = this.int(10);
    if (roll === 0) return undefined;
    if (roll === 1)
      return this.pick<unknown>([null, 'params', 12, true, [], ['a', 1], [{ uri: 'x' }]]);
    const params: Record<string, unknown> = {};
    if (this.chance(0.7)) params['uri'] = `file:///srv/${this.int(50)}.txt`;
    if (this.chance(0.2)) params['cursor'] = this.pick<unknown>(['abc', 1, null]);
    if (this.chance(0.5)) params['_meta'] = this.meta();
    if (this.chance(0.15)) params['id'] = this.id();
    return params;
  }

  /** A `result` member: usually an object, maybe with `_meta` (valid or invalid serverInfo). */
  result(): unknown {
    if (this.chance(0.1)) return this.pick<unknown>([null, [], 'ok', 0, [{ contents: [] }]]);
    const result: Record<string, unknown> = {};
    if (this.chance(0.6))
      result['contents'] = [{ uri: 'file:///a.txt', mimeType: 'text/plain', text: 'hello' }];
    if (this.chance(0.2)) result['nextCursor'] = 'next';
    if (this.chance(0.3)) {
      result['_meta'] = this.pick<unknown>([
        {},
        { [SERVER_INFO_META_KEY]: { name: 'reservoir', version: '0.1.0' } },
        { [SERVER_INFO_META_KEY]: 'not an implementation' },
        { [SERVER_INFO_META_KEY]: { name: 5 } },
        { other: 1 },
        null,
        'meta',
      ]);
    }
    if (this.chance(0.2)) result['extra'] = this.json(2);
    return result;
  }

  /** An `error` member: usually well formed, sometimes with extra keys, a missing message, an odd code. */
  error(): unknown {
    if (this.chance(0.08))
      return this.pick<unknown>([null, 'boom', 500, [], [{ code: 1, message: 'x' }]]);
    const error: Record<string, unknown> = {};
    const codeRoll = this.int(12);
    if (codeRoll === 0) {
      // no code at all
    } else if (codeRoll === 1)
      error['code'] = this.pick<unknown>([
        1.5,
        '-32600',
        null,
        Number.MAX_SAFE_INTEGER + 1,
        1e21,
        true,
      ]);
    else
      error['code'] = this.pick([
        -32600,
        -32601,
        -32602,
        -32603,
        -32002,
        0,
        1,
        Number.MIN_SAFE_INTEGER,
      ]);
    const messageRoll = this.int(10);
    if (messageRoll === 0) {
      // no message
    } else if (messageRoll === 1) error['message'] = this.pick<unknown>([null, 3, ['m'], {}]);
    else
      error['message'] = this.pick([
        'Invalid request',
        '',
        'Resource not found: file:///x',
        'ünïcødé',
      ]);
    if (this.chance(0.4)) error['data'] = this.json(2);
    if (this.chance(0.15)) error[this.pick(['detail', 'stack', 'id'])] = this.json(1);
    return error;
  }

  /** One candidate message: mostly near-valid shapes, with some mutation applied. */
  message(): unknown {
    const kind = this.int(20);
    if (kind === 0)
      return this.pick<unknown>([
        null,
        0,
        1.5,
        'message',
        true,
        [],
        [{ jsonrpc: '2.0', method: 'ping' }],
        [1, 2],
      ]);
    const message: Record<string, unknown> = {};
    const jsonrpcRoll = this.int(14);
    if (jsonrpcRoll === 0) {
      // no jsonrpc member
    } else if (jsonrpcRoll === 1)
      message['jsonrpc'] = this.pick<unknown>(['1.0', 2, 2.0, '2', null, '2.0 ']);
    else message['jsonrpc'] = '2.0';
    const shape = this.pick([
      'request',
      'request',
      'notification',
      'notification',
      'result',
      'result',
      'error',
      'error',
      'mixed',
    ]);
    const withId =
      shape === 'request' ||
      shape === 'result' ||
      (shape === 'error' ? this.chance(0.8) : this.chance(0.1));
    if (withId) message['id'] = this.chance(0.7) ? this.int(10_000) : this.id();
    if (shape === 'request' || shape === 'notification' || shape === 'mixed') {
      message['method'] = this.chance(0.92)
        ? this.pick([
            'resources/read',
            'resources/list',
            'notifications/initialized',
            'notifications/progress',
            'ping',
            '',
          ])
        : this.pick<unknown>([5, null, ['resources/read'], {}]);
      const params = this.params();
      if (params !== undefined) message['params'] = params;
    }
    if (shape === 'result' || (shape === 'mixed' && this.chance(0.5)))
      message['result'] = this.result();
    if (shape === 'error' || (shape === 'mixed' && this.chance(0.5)))
      message['error'] = this.error();
    if (this.chance(0.08))
      message[this.pick(['extra', 'meta', 'params', 'Method', 'ID'])] = this.json(1);
    // Shuffle member order now and then: the schema does not care, neither may the fast check.
    if (this.chance(0.3)) return Object.fromEntries(Object.entries(message).reverse());
    return message;
  }
}

/** What the SDK's schema makes of a value: its output, or the message it throws. */
function schemaVerdict(
  value: unknown,
): { ok: true; parsed: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, parsed: parseJSONRPCMessage(value) };
  } catch (error) {
    return { ok: false, message: (error as Error).message };
  }
}

function ourVerdict(
  value: unknown,
): { ok: true; parsed: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, parsed: toJsonRpcMessage(value) };
  } catch (error) {
    return { ok: false, message: (error as Error).message };
  }
}

const MODERN_READ = {
  jsonrpc: '2.0',
  id: 3,
  method: 'resources/read',
  params: {
    uri: 'file:///srv/notes.md',
    _meta: {
      [PROTOCOL_VERSION_META_KEY]: '2026-07-28',
      [CLIENT_INFO_META_KEY]: { name: 'client', version: '1.0.0' },
      [CLIENT_CAPABILITIES_META_KEY]: { roots: {} },
      progressToken: 'p-3',
    },
  },
};

describe('plainlyValid against the SDK schema (differential)', () => {
  const COUNT = 4000;
  const gen = new Gen(0x5eed_2026);
  const candidates = Array.from({ length: COUNT }, () => gen.message());
  // Round-tripped through JSON, exactly as the wire would hand them over.
  const fromJson = candidates.map((value) => JSON.parse(JSON.stringify(value)) as unknown);

  it('accepts nothing the schema rejects or would change, over thousands of seeded messages', () => {
    const mismatches: string[] = [];
    for (const value of [...candidates, ...fromJson]) {
      if (!plainlyValid(value)) continue;
      const verdict = schemaVerdict(value);
      if (!verdict.ok)
        mismatches.push(`fast check accepted, schema threw: ${JSON.stringify(value)}`);
      else if (!isDeepStrictEqual(verdict.parsed, value))
        mismatches.push(
          `fast check accepted, schema changed it: ${JSON.stringify(value)} -> ${JSON.stringify(verdict.parsed)}`,
        );
    }
    expect(mismatches).toEqual([]);
  });

  it('makes toJsonRpcMessage throw exactly when the schema throws, with the schema’s message', () => {
    const mismatches: string[] = [];
    for (const value of [...candidates, ...fromJson]) {
      const schema = schemaVerdict(value);
      const ours = ourVerdict(value);
      if (schema.ok !== ours.ok) {
        mismatches.push(
          `schema ${schema.ok ? 'accepted' : 'threw'}, toJsonRpcMessage ${ours.ok ? 'accepted' : 'threw'}: ${JSON.stringify(value)}`,
        );
      } else if (!schema.ok && !ours.ok && schema.message !== ours.message) {
        mismatches.push(`different error for ${JSON.stringify(value)}`);
      } else if (schema.ok && ours.ok && !isDeepStrictEqual(schema.parsed, ours.parsed)) {
        mismatches.push(`different message for ${JSON.stringify(value)}`);
      }
    }
    expect(mismatches).toEqual([]);
  });

  it('exercises every outcome: fast path, slow-path accept, and rejection, each many times', () => {
    let fast = 0;
    let slowAccepted = 0;
    let rejected = 0;
    for (const value of candidates) {
      if (plainlyValid(value)) fast += 1;
      else if (schemaVerdict(value).ok) slowAccepted += 1;
      else rejected += 1;
    }
    expect(fast + slowAccepted + rejected).toBe(COUNT);
    expect(fast).toBeGreaterThan(COUNT / 10);
    expect(slowAccepted).toBeGreaterThan(COUNT / 50);
    expect(rejected).toBeGreaterThan(COUNT / 10);
  });

  it('generates the same messages on every run (seeded, no Math.random)', () => {
    const again = new Gen(0x5eed_2026);
    expect(Array.from({ length: 50 }, () => again.message())).toEqual(candidates.slice(0, 50));
  });
});

describe('plainlyValid on the common shapes', () => {
  const common: Record<string, unknown> = {
    'a resources/read request with params { uri }': {
      jsonrpc: '2.0',
      id: 1,
      method: 'resources/read',
      params: { uri: 'file:///srv/a.txt' },
    },
    'a request with a string id': {
      jsonrpc: '2.0',
      id: 'req-1',
      method: 'resources/list',
      params: { cursor: 'abc' },
    },
    'a request without params': { jsonrpc: '2.0', id: 0, method: 'ping' },
    'a 2026-style request whose params._meta carries the envelope': MODERN_READ,
    'notifications/initialized': { jsonrpc: '2.0', method: 'notifications/initialized' },
    'a progress notification with an integer token': {
      jsonrpc: '2.0',
      method: 'notifications/progress',
      params: { progressToken: 5, progress: 1, total: 2, _meta: { progressToken: 5 } },
    },
    'a result response': {
      jsonrpc: '2.0',
      id: 1,
      result: { contents: [{ uri: 'file:///srv/a.txt', mimeType: 'text/plain', text: 'hi' }] },
    },
    'an empty result': { jsonrpc: '2.0', id: 'x', result: {} },
    'an error response with data': {
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32002, message: 'Resource not found', data: { uri: 'file:///x' } },
    },
    'an error response without id': {
      jsonrpc: '2.0',
      error: { code: -32700, message: 'Parse error' },
    },
  };
  for (const [name, message] of Object.entries(common)) {
    it(`takes the fast path for ${name}, returning the very same object`, () => {
      expect(plainlyValid(message)).toBe(true);
      expect(toJsonRpcMessage(message)).toBe(message);
      expect(parseJSONRPCMessage(message)).toEqual(message);
    });
  }

  const deferred: Record<string, unknown> = {
    'a result carrying _meta (its serverInfo is the schema’s to check)': {
      jsonrpc: '2.0',
      id: 1,
      result: { _meta: { [SERVER_INFO_META_KEY]: { name: 's', version: '1' } } },
    },
    'params._meta with a related-task entry': {
      jsonrpc: '2.0',
      id: 1,
      method: 'x',
      params: { _meta: { [RELATED_TASK_META_KEY]: { taskId: 't' } } },
    },
    'an error object with an extra member (the schema strips it)': {
      jsonrpc: '2.0',
      id: 1,
      error: { code: 1, message: 'm', stack: 'at…' },
    },
    'params given as an array': { jsonrpc: '2.0', id: 1, method: 'x', params: [1, 2] },
  };
  for (const [name, message] of Object.entries(deferred)) {
    it(`leaves ${name} to the schema`, () => {
      expect(plainlyValid(message)).toBe(false);
    });
  }

  it('hands a result with _meta to the schema, which drops an invalid serverInfo', () => {
    const message = {
      jsonrpc: '2.0',
      id: 1,
      result: { _meta: { [SERVER_INFO_META_KEY]: 'nonsense' } },
    };
    expect(toJsonRpcMessage(message)).toEqual({ jsonrpc: '2.0', id: 1, result: { _meta: {} } });
  });

  it('throws the schema’s error for an invalid message', () => {
    const message = { jsonrpc: '2.0', id: 1.5, method: 'x' };
    let expected = '';
    try {
      parseJSONRPCMessage(message);
    } catch (error) {
      expected = (error as Error).message;
    }
    expect(expected).not.toBe('');
    expect(() => toJsonRpcMessage(message)).toThrow(expected);
  });

  it('rejects unsafe integers, floats, null and booleans as ids', () => {
    for (const id of [Number.MAX_SAFE_INTEGER + 1, 1e21, 1.5, null, true]) {
      const message = { jsonrpc: '2.0', id, method: 'ping' };
      expect(plainlyValid(message)).toBe(false);
      expect(() => toJsonRpcMessage(message)).toThrow();
    }
  });

  it('does not fast-path a message whose params, _meta or result hold an own "__proto__" member', () => {
    const texts = [
      '{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a","__proto__":{"polluted":true}}}',
      '{"jsonrpc":"2.0","method":"notifications/progress","params":{"_meta":{"__proto__":{"polluted":true}}}}',
      '{"jsonrpc":"2.0","id":1,"result":{"__proto__":{"polluted":true}}}',
    ];
    // isDeepStrictEqual compares own members, so a dropped own "__proto__" shows.
    const changed = texts.filter((text) => {
      const value = JSON.parse(text) as unknown;
      return plainlyValid(value) && !isDeepStrictEqual(parseJSONRPCMessage(value), value);
    });
    expect(changed).toEqual([]);
  });
});

describe('headId', () => {
  it('finds a numeric id', () => {
    expect(
      headId('{"jsonrpc":"2.0","id":42,"method":"resources/read","params":{"uri":"file:///big'),
    ).toBe(42);
    expect(headId('{"id":-7}')).toBe(-7);
    expect(headId('{ "id" : 0 , "method": "x"')).toBe(0);
  });

  it('finds a string id, including escaped quotes and backslashes', () => {
    expect(headId('{"jsonrpc":"2.0","id":"req-1","method":"x","params":{"data":"aaaa')).toBe(
      'req-1',
    );
    expect(headId(String.raw`{"id":"say \"hi\" \\ there","method":"x"`)).toBe('say "hi" \\ there');
    expect(headId(String.raw`{"id":"\u0041\n","method":"x"`)).toBe('A\n');
    expect(headId('{"id":"",')).toBe('');
  });

  it('finds the id after params, skipping the params object entirely', () => {
    expect(
      headId(
        '{"jsonrpc":"2.0","method":"x","params":{"uri":"file:///a","n":[1,2,{"k":"v"}]},"id":9,"more":"',
      ),
    ).toBe(9);
    expect(headId('{"method":"x","params":{},"id":"late"}')).toBe('late');
  });

  it('ignores an "id" nested in params or in arrays', () => {
    expect(headId('{"jsonrpc":"2.0","method":"x","params":{"id":5,"data":"aaaa')).toBeUndefined();
    expect(headId('{"jsonrpc":"2.0","method":"x","params":{"id":5},"id":6}')).toBe(6);
    expect(headId('{"jsonrpc":"2.0","method":"x","params":[{"id":5},"id",7],"id":8}')).toBe(8);
    expect(headId('[{"jsonrpc":"2.0","id":1,"method":"x"}]')).toBeUndefined();
    expect(headId('{"params":{"inner":{"id":1}},"method":"x"')).toBeUndefined();
  });

  it('does not take a string value "id" for the id key', () => {
    expect(headId('{"method":"id","params":{"a":"id"},"id":3}')).toBe(3);
    expect(headId('{"method":"id","params":{"a":"aaaa')).toBeUndefined();
  });

  it('returns undefined when the text is cut before or inside the id value', () => {
    expect(headId('')).toBeUndefined();
    expect(headId('{"jsonrpc":"2.0","method":"x","params":{"uri":"file:///aaaa')).toBeUndefined();
    expect(headId('{"jsonrpc":"2.0","i')).toBeUndefined();
    expect(headId('{"jsonrpc":"2.0","id"')).toBeUndefined();
    expect(headId('{"jsonrpc":"2.0","id":')).toBeUndefined();
    // 12 could be the start of 123: not sure, so no id.
    expect(headId('{"jsonrpc":"2.0","id":12')).toBeUndefined();
    expect(headId('{"jsonrpc":"2.0","id":"abc')).toBeUndefined();
    expect(headId(String.raw`{"jsonrpc":"2.0","id":"abc\"`)).toBeUndefined();
  });

  it('returns undefined when the id is not a valid request id', () => {
    for (const value of [
      'null',
      'true',
      '1.5',
      '-0.5',
      '1e3',
      '{"a":1}',
      '[1]',
      '99999999999999999999',
    ]) {
      expect(headId(`{"jsonrpc":"2.0","id":${value},"method":"x"}`)).toBeUndefined();
    }
  });

  it('is not misled by braces, brackets, commas or colons inside strings', () => {
    expect(headId('{"method":"{[,]}:","params":{"s":"}},{\\"id\\":1,"},"id":"}{"}')).toBe('}{');
    expect(headId('{"a":"}","b":"]","c":",\\"id\\":2","id":4}')).toBe(4);
    expect(headId('{"params":{"s":"}"},"x":"{","id":5}')).toBe(5);
    expect(headId('{"k,\\"id\\"":1,"id":6}')).toBe(6);
  });

  it('reads the id of a long message from its first bytes only', () => {
    const head = JSON.stringify({
      jsonrpc: '2.0',
      id: 77,
      method: 'resources/read',
      params: { uri: `file:///${'a'.repeat(10_000)}` },
    }).slice(0, 4096);
    expect(headId(head)).toBe(77);
  });

  it('returns undefined rather than throwing for heads that are not valid JSON', () => {
    const heads = [
      '{"id":01,"method":"x"}',
      '{"id":"a\tb","method":"x"}',
      '{"a\u0001":1,"id":2}',
      String.raw`{"\q":1,"id":2}`,
    ];
    const throwing = heads.filter((head) => {
      try {
        headId(head);
        return false;
      } catch {
        return true;
      }
    });
    expect(throwing).toEqual([]);
  });
});
