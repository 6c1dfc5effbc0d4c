// Pins the outbound encoder: whatever the message (plain requests, notifications and errors, or read
// results whose contents are frozen, unfrozen, nested, odd or missing), `encodeMessage` gives exactly
// the bytes of `Buffer.from(JSON.stringify(message))`, including member order, skipped undefined and
// symbol members, and null for undefined elements; and keeping the JSON of frozen contents never
// makes a later encoding differ.
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { describe, expect, it, vi } from 'vitest';
import { base64Blob, blobLength, unmadeBlobBytes } from '../../../src/core/base64-blob.js';
import { Base64Run } from '../../../src/mcp/direct/base64-run.js';
import { constantJson, encodeMessage } from '../../../src/mcp/direct/encode.js';

/** The encoding as bytes (plain messages come back as a string, kept encodings as pieces). */
function bytesOf(message: unknown): Buffer {
  const encoded = encodeMessage(message as JSONRPCMessage);
  if (typeof encoded === 'string') return Buffer.from(encoded);
  return Buffer.concat(
    encoded.map((part) =>
      typeof part === 'string'
        ? Buffer.from(part)
        : part instanceof Base64Run
          ? Buffer.from([...part.pieces()].join(''), 'latin1')
          : part,
    ),
  );
}

/** Asserts the encoding is byte for byte JSON.stringify's, and returns it. */
function expectStringifyBytes(message: unknown): Buffer {
  const encoded = bytesOf(message);
  const expected = Buffer.from(JSON.stringify(message));
  expect(encoded.toString('utf8')).toBe(expected.toString('utf8'));
  expect(encoded.equals(expected)).toBe(true);
  return encoded;
}

function readResponse(
  contents: unknown[],
  id: string | number = 1,
  extra: Record<string, unknown> = {},
): unknown {
  return { jsonrpc: '2.0', id, result: { contents, ...extra } };
}

const TRICKY_TEXT =
  'héllo wörld — ☃ 𝄞 😀👩‍👩‍👧 "quoted" \\back\\slash\\ \u0000\u0001\u001f\u007f \b\f\n\r\t \u2028\u2029 </script>';

describe('encodeMessage on messages without frozen contents', () => {
  const plain: Record<string, unknown> = {
    'a request': {
      jsonrpc: '2.0',
      id: 1,
      method: 'resources/read',
      params: { uri: 'file:///srv/a.txt' },
    },
    'a request with a string id': {
      jsonrpc: '2.0',
      id: 'req-ü-1',
      method: 'resources/list',
      params: { cursor: 'c' },
    },
    'a notification': {
      jsonrpc: '2.0',
      method: 'notifications/resources/updated',
      params: { uri: 'file:///srv/a.txt' },
    },
    'a notification without params': { jsonrpc: '2.0', method: 'notifications/initialized' },
    'an error': {
      jsonrpc: '2.0',
      id: 7,
      error: { code: -32002, message: 'Resource not found: file:///x', data: { uri: 'file:///x' } },
    },
    'an error without id': { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' } },
    'a result without contents': {
      jsonrpc: '2.0',
      id: 2,
      result: { resources: [{ uri: 'file:///a', name: 'a' }], nextCursor: 'n' },
    },
    'a read result with unfrozen contents': readResponse([
      { uri: 'file:///a', mimeType: 'text/plain', text: TRICKY_TEXT },
    ]),
    'a result whose contents is not an array': {
      jsonrpc: '2.0',
      id: 3,
      result: { contents: { uri: 'file:///a' } },
    },
    'an empty contents array': readResponse([]),
  };
  for (const [name, message] of Object.entries(plain)) {
    it(`encodes ${name} exactly as JSON.stringify`, () => {
      expectStringifyBytes(message);
    });
  }

  it('leaves a result with its own toJSON to JSON.stringify', () => {
    const frozen = Object.freeze({ uri: 'file:///a', text: 'a' });
    const result = { contents: [frozen], toJSON: () => ({ replaced: true }) };
    const encoded = expectStringifyBytes({ jsonrpc: '2.0', id: 1, result });
    expect(encoded.toString()).toBe('{"jsonrpc":"2.0","id":1,"result":{"replaced":true}}');
  });

  it('encodes no trailing newline', () => {
    expect(bytesOf({ jsonrpc: '2.0', method: 'ping' }).at(-1)).toBe('}'.charCodeAt(0));
    const content = Object.freeze({ uri: 'file:///a', text: 'a' });
    expect(bytesOf(readResponse([content])).at(-1)).toBe('}'.charCodeAt(0));
  });
});

describe('encodeMessage on blobs this process made', () => {
  const bytes = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 7919) % 256));

  it('writes a made blob as a base64 run of its bytes, never making its string, byte for byte JSON.stringify', () => {
    const made = base64Blob({ uri: 'file:///a.bin', mimeType: 'application/octet-stream' }, bytes);
    const message = readResponse([made], 7, { _meta: { n: 1 } });
    const encoded = encodeMessage(message as JSONRPCMessage);
    // Sent in pieces, the base64 one of them: the bytes themselves, encoded as they are written.
    expect(Array.isArray(encoded)).toBe(true);
    const runs = (encoded as unknown[]).filter((part) => part instanceof Base64Run);
    expect(runs).toHaveLength(1);
    expect((runs[0] as Base64Run).bytes).toBe(bytes);
    expect(unmadeBlobBytes(made)).toBe(bytes);
    expect(blobLength(made)).toBe(bytes.toString('base64').length);
    expect(unmadeBlobBytes(made)).toBe(bytes);
    expectStringifyBytes(message);
  });

  it('writes a made blob whose string was read as the bytes of that string', () => {
    const made = base64Blob({ uri: 'file:///a.bin' }, bytes);
    expect(made.blob).toBe(bytes.toString('base64'));
    expect(unmadeBlobBytes(made)).toBeUndefined();
    const encoded = encodeMessage(readResponse([made]) as JSONRPCMessage);
    expect(encoded).toContainEqual(Buffer.from(bytes.toString('base64'), 'latin1'));
    expectStringifyBytes(readResponse([made]));
  });

  it('gives a made blob its base64 wherever it is read: a spread, Object.values, JSON', () => {
    const made = base64Blob({ uri: 'file:///s', mimeType: 'application/octet-stream' }, bytes);
    const base64 = bytes.toString('base64');
    expect({ ...made }).toEqual({
      uri: 'file:///s',
      mimeType: 'application/octet-stream',
      blob: base64,
    });
    expect(Object.values(made)).toEqual(['file:///s', 'application/octet-stream', base64]);
    expect('blob' in made).toBe(true);
    expect(JSON.parse(JSON.stringify(made))).toEqual({ ...made });
    const frozen = Object.freeze(base64Blob({ uri: 'file:///z' }, bytes.subarray(0, 5)));
    expect(frozen.blob).toBe(bytes.subarray(0, 5).toString('base64'));
    expectStringifyBytes(readResponse([frozen]));
  });

  it('measures the length of an empty blob and of every remainder of three', () => {
    for (const length of [0, 1, 2, 3, 4, 5]) {
      const made = base64Blob({ uri: 'file:///n' }, bytes.subarray(0, length));
      expect(blobLength(made)).toBe(bytes.subarray(0, length).toString('base64').length);
      expectStringifyBytes(readResponse([made]));
    }
  });

  it('keeps members after the blob, numbers and several contents in their order', () => {
    const first = base64Blob({ uri: 'file:///x' }, bytes.subarray(0, 10));
    const second = Object.assign(
      base64Blob({ uri: 'file:///y', size: 11 }, bytes.subarray(0, 11)),
      {
        after: 'é "tail"',
        n: Number.NaN,
      },
    );
    expectStringifyBytes(readResponse([first, Object.freeze({ uri: 'u', text: 't' }), second]));
  });

  it('writes a blob it did not make, or one replaced since, the ordinary way', () => {
    const foreign = { uri: 'file:///f', blob: 'not "base64" \\ ☃' };
    expectStringifyBytes(readResponse([foreign]));
    const replaced = base64Blob({ uri: 'file:///r' }, bytes);
    replaced.blob = 'a "quote" now';
    expect(typeof encodeMessage(readResponse([replaced]) as JSONRPCMessage)).toBe('string');
    expectStringifyBytes(readResponse([replaced]));
  });

  it('writes a made blob given an object member (or a toJSON) the ordinary way', () => {
    const withMeta = Object.assign(base64Blob({ uri: 'file:///m' }, bytes), { _meta: { a: 1 } });
    expectStringifyBytes(readResponse([withMeta]));
    const withToJson = Object.assign(base64Blob({ uri: 'file:///j' }, bytes), {
      toJSON: () => ({ replaced: true }),
    });
    expectStringifyBytes(readResponse([withToJson]));
  });
});

describe('encodeMessage on read results with frozen contents', () => {
  it('encodes a frozen text content with unicode, emoji, control characters, quotes and backslashes', () => {
    const content = Object.freeze({
      uri: 'file:///srv/tricky "name".txt',
      mimeType: 'text/plain',
      text: TRICKY_TEXT,
    });
    expectStringifyBytes(readResponse([content]));
  });

  it('encodes a lone surrogate in frozen text as JSON.stringify escapes it', () => {
    const content = Object.freeze({ uri: 'file:///a', text: 'half \ud83d and \udc00 alone' });
    const encoded = expectStringifyBytes(readResponse([content]));
    expect(encoded.toString()).toContain('\\ud83d');
  });

  it('encodes a frozen blob content', () => {
    const content = Object.freeze({
      uri: 'file:///srv/image.png',
      mimeType: 'image/png',
      blob: Buffer.from([0, 1, 2, 250, 255]).toString('base64'),
    });
    expectStringifyBytes(readResponse([content]));
  });

  it('encodes numbers in frozen contents, non-finite ones as null', () => {
    const content = Object.freeze({
      uri: 'file:///a',
      text: 't',
      size: 12,
      ratio: 0.1,
      bad: Number.NaN,
      inf: Number.POSITIVE_INFINITY,
      neg: -0,
    });
    expectStringifyBytes(readResponse([content]));
  });

  it('encodes several contents mixing frozen and unfrozen, in order', () => {
    const contents = [
      Object.freeze({ uri: 'file:///1', text: 'one' }),
      { uri: 'file:///2', text: 'two ✓' },
      Object.freeze({ uri: 'file:///3', blob: 'AAEC' }),
      Object.freeze({ uri: 'file:///4', text: '' }),
      { uri: 'file:///5', text: 'five', _meta: { a: 1 } },
      Object.freeze({ uri: 'file:///6', text: 'six\n' }),
    ];
    const encoded = expectStringifyBytes(readResponse(contents));
    expect(JSON.parse(encoded.toString())).toEqual(readResponse(contents));
  });

  it('encodes an unfrozen content first and a frozen one last', () => {
    expectStringifyBytes(
      readResponse([
        { uri: 'file:///u', text: 'u' },
        Object.freeze({ uri: 'file:///f', text: 'f' }),
      ]),
    );
    expectStringifyBytes(
      readResponse([
        Object.freeze({ uri: 'file:///f', text: 'f' }),
        { uri: 'file:///u', text: 'u' },
      ]),
    );
  });

  it('encodes a frozen content holding a nested _meta object, and sees later changes to that object', () => {
    const meta: Record<string, unknown> = { 'reservoir/etag': 'v1' };
    const content = Object.freeze({ uri: 'file:///a', text: 'a', _meta: meta });
    expectStringifyBytes(readResponse([content]));
    // The content is frozen, but what it holds is not: its JSON must not be kept.
    meta['reservoir/etag'] = 'v2';
    const encoded = expectStringifyBytes(readResponse([content]));
    expect(encoded.toString()).toContain('"reservoir/etag":"v2"');
  });

  it('skips undefined members of the result, of the message and of a content, as JSON.stringify does', () => {
    const content = Object.freeze({ uri: 'file:///a', mimeType: undefined, text: 'a' });
    const other = Object.freeze({ uri: 'file:///b', text: 'b' });
    const message = {
      jsonrpc: '2.0',
      id: 1,
      skipped: undefined,
      result: { before: undefined, contents: [content, other], nextCursor: undefined },
    };
    const encoded = expectStringifyBytes(message);
    expect(encoded.toString()).toBe(
      '{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"file:///a","text":"a"},{"uri":"file:///b","text":"b"}]}}',
    );
  });

  it('skips function-valued members as JSON.stringify does', () => {
    const message = {
      jsonrpc: '2.0',
      id: 1,
      result: { helper: () => 1, contents: [Object.freeze({ uri: 'file:///a', text: 'a' })] },
    };
    expectStringifyBytes(message);
  });

  it('ignores symbol-keyed members of the result and of a frozen content', () => {
    const content = Object.freeze({ uri: 'file:///a', text: 'a', [Symbol('hidden')]: 'no' });
    const result: Record<string | symbol, unknown> = { contents: [content] };
    result[Symbol('internal')] = { secret: true };
    const encoded = expectStringifyBytes({ jsonrpc: '2.0', id: 1, result });
    expect(encoded.toString()).not.toContain('secret');
    expect(encoded.toString()).not.toContain('no"');
  });

  it('writes null for an undefined or null element of contents', () => {
    const frozen = Object.freeze({ uri: 'file:///a', text: 'a' });
    expectStringifyBytes(readResponse([undefined, frozen]));
    expectStringifyBytes(readResponse([frozen, undefined]));
    expectStringifyBytes(readResponse([frozen, null, undefined, frozen]));
  });

  it('keeps result members before and after contents in their order', () => {
    const frozen = Object.freeze({ uri: 'file:///a', text: 'a' });
    const message = {
      jsonrpc: '2.0',
      id: 'r-9',
      result: {
        first: 1,
        _meta: { m: 'x' },
        contents: [frozen],
        nextCursor: 'n',
        last: [1, 'two'],
      },
    };
    const encoded = expectStringifyBytes(message);
    const keys = Object.keys((JSON.parse(encoded.toString()) as { result: object }).result);
    expect(keys).toEqual(['first', '_meta', 'contents', 'nextCursor', 'last']);
  });

  it('writes result members of every kind beside kept contents as JSON.stringify does: numbers odd and plain, booleans, null, toJSON, tricky keys', () => {
    const frozen = Object.freeze({ uri: 'file:///a', text: 'a' });
    const members: Record<string, unknown> = {
      zero: 0,
      negativeZero: -0,
      fraction: 0.1 + 0.2,
      big: 1e21,
      small: 5e-7,
      nan: NaN,
      infinite: -Infinity,
      yes: true,
      no: false,
      nothing: null,
      date: new Date(0),
      wrapped: { toJSON: () => 'w' },
      'k"é\\y\n': 's\u2028',
      '': 'empty key',
    };
    expectStringifyBytes(readResponse([frozen], 3, members));
    expectStringifyBytes({
      ...members,
      result: { contents: [frozen], ...members },
      jsonrpc: '2.0',
      id: 3,
    });
  });

  it('keeps top-level member order, result first or last', () => {
    const frozen = Object.freeze({ uri: 'file:///a', text: 'a' });
    expectStringifyBytes({ result: { contents: [frozen] }, id: 5, jsonrpc: '2.0' });
    expectStringifyBytes({ id: 5, result: { contents: [frozen] }, jsonrpc: '2.0' });
  });

  it('encodes string and number ids alike', () => {
    const frozen = Object.freeze({ uri: 'file:///a', text: 'a' });
    for (const id of [0, 1, -3, Number.MAX_SAFE_INTEGER, '', 'abc', 'ünï "q"'])
      expectStringifyBytes(readResponse([frozen], id));
  });

  it('encodes frozen arrays and empty frozen objects as JSON.stringify does', () => {
    expectStringifyBytes(
      readResponse([Object.freeze(['a', 'b']), Object.freeze({}), Object.preventExtensions({})]),
    );
  });
});

describe('encodeMessage over repeated encodings of the same frozen content', () => {
  it('gives identical bytes when the same frozen object is encoded twice', () => {
    const content = Object.freeze({
      uri: 'file:///hot.txt',
      mimeType: 'text/plain',
      text: `hot ${'x'.repeat(10_000)} ☃`,
    });
    const first = expectStringifyBytes(readResponse([content], 1));
    const second = expectStringifyBytes(readResponse([content], 1));
    expect(second.equals(first)).toBe(true);
  });

  it('stays correct when the kept content appears in other messages, positions and neighbours', () => {
    const content = Object.freeze({ uri: 'file:///hot.txt', text: 'hot' });
    expectStringifyBytes(readResponse([content], 1));
    expectStringifyBytes(readResponse([{ uri: 'file:///x', text: 'x' }, content], 'two'));
    expectStringifyBytes(readResponse([content, content, content], 3, { nextCursor: 'n' }));
    expectStringifyBytes({
      jsonrpc: '2.0',
      id: 4,
      result: {
        _meta: { k: 1 },
        contents: [Object.freeze({ uri: 'file:///y', text: 'y' }), content],
      },
    });
  });

  it('does not stringify a frozen content of plain strings and numbers again once it has been encoded', () => {
    const content = Object.freeze({ uri: 'file:///kept.txt', text: 'kept', size: 4 });
    expectStringifyBytes(readResponse([content], 1));
    const stringify = vi.spyOn(JSON, 'stringify');
    try {
      encodeMessage(readResponse([content], 2) as JSONRPCMessage);
      expect(stringify.mock.calls.some(([value]) => value === content)).toBe(false);
    } finally {
      stringify.mockRestore();
    }
    expectStringifyBytes(readResponse([content], 2));
  });

  it('does not let a caller who scribbles on one encoding change the next', () => {
    const content = Object.freeze({ uri: 'file:///a', text: 'abcdef' });
    const first = bytesOf(readResponse([content]));
    first.fill(0x21);
    expectStringifyBytes(readResponse([content]));
  });

  it('encodes a content that becomes frozen after a first unfrozen encoding', () => {
    const content = { uri: 'file:///a', text: 'before' };
    expectStringifyBytes(readResponse([content]));
    content.text = 'after';
    Object.freeze(content);
    const encoded = expectStringifyBytes(readResponse([content]));
    expect(encoded.toString()).toContain('"after"');
  });
});

describe('encodeMessage on seeded random read results', () => {
  it('matches JSON.stringify for 500 messages mixing frozen, unfrozen, nested and missing contents', () => {
    let state = 0x0e0c0de;
    const random = (): number => {
      // xorshift32: deterministic, no Math.random.
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      return (state >>> 0) / 4294967296;
    };
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const texts = ['', 'plain', TRICKY_TEXT, '"', '\\', '\n', '😀'.repeat(5), 'x'.repeat(300)];
    const shared = Object.freeze({ uri: 'file:///shared', text: 'shared' });
    const mismatches: string[] = [];
    for (let n = 0; n < 500; n += 1) {
      const contents: unknown[] = [];
      for (let i = Math.floor(random() * 5); i >= 0; i -= 1) {
        const body: Record<string, unknown> = {
          uri: `file:///${n}/${i}`,
          [pick(['text', 'blob'])]: pick(texts),
        };
        if (random() < 0.3) body['mimeType'] = pick(['text/plain', undefined, 'application/json']);
        if (random() < 0.2) body['_meta'] = { n };
        const roll = random();
        contents.push(
          roll < 0.45
            ? Object.freeze(body)
            : roll < 0.85
              ? body
              : roll < 0.9
                ? shared
                : roll < 0.95
                  ? undefined
                  : null,
        );
      }
      const result: Record<string, unknown> = {};
      if (random() < 0.3) result['_meta'] = { before: true };
      result['contents'] = contents;
      if (random() < 0.3) result['nextCursor'] = random() < 0.5 ? 'next' : undefined;
      const message = { jsonrpc: '2.0', id: random() < 0.5 ? n : `id-${n}`, result };
      if (!bytesOf(message).equals(Buffer.from(JSON.stringify(message))))
        mismatches.push(JSON.stringify(message));
    }
    expect(mismatches).toEqual([]);
  });
});

describe('encodeMessage on sparse contents arrays', () => {
  it('writes null for holes in a contents array holding a frozen content', () => {
    const frozen = Object.freeze({ uri: 'file:///a', text: 'a' });
    const trailing: unknown[] = [frozen];
    trailing.length = 2;
    const leading: unknown[] = [];
    leading[1] = frozen;
    expectStringifyBytes(readResponse(trailing));
    expectStringifyBytes(readResponse(leading));
  });
});

describe('constantJson members', () => {
  it('writes a constant member of a result with kept contents exactly as JSON.stringify does, and freezes it deeply', () => {
    const meta = constantJson({
      'io.example/server': {
        name: 'reservoir',
        version: '1',
        icons: [{ src: `data:image/svg+xml;base64,${'A'.repeat(900)}`, sizes: ['any'] }],
      },
    });
    expect(Object.isFrozen(meta['io.example/server'].icons[0]!.sizes)).toBe(true);
    const content = Object.freeze({
      uri: 'file:///srv/a.txt',
      mimeType: 'text/plain',
      text: TRICKY_TEXT,
    });
    for (let i = 0; i < 3; i += 1) {
      const encoded = encodeMessage({
        result: {
          contents: [content],
          resultType: 'complete',
          ttlMs: 0,
          cacheScope: 'public',
          _meta: meta,
        },
        jsonrpc: '2.0',
        id: i,
      } as unknown as JSONRPCMessage);
      expect(Array.isArray(encoded)).toBe(true);
      expectStringifyBytes({
        result: {
          contents: [content],
          resultType: 'complete',
          ttlMs: 0,
          cacheScope: 'public',
          _meta: meta,
        },
        jsonrpc: '2.0',
        id: i,
      });
    }
  });
});
