// Pins the stdio wire over in-memory streams: newline-delimited JSON-RPC in (CRLF, blank lines,
// lines and UTF-8 characters split across chunks, bad lines skipped with onerror), sends of one
// event-loop turn written with one stdout.write and one shared promise, oversized lines refused
// with a -32600 naming the limit while the connection keeps working, and the close paths.
import { PassThrough, Writable } from 'node:stream';
import { STDIO_DEFAULT_MAX_BUFFER_SIZE, type JSONRPCMessage } from '@modelcontextprotocol/server';
import { describe, expect, it, vi, type MockInstance } from 'vitest';
import { StdioWire, type StdioWireOptions } from '../../src/stdio/wire.js';

/** One turn of the event loop (the wire flushes its outbox in a setImmediate). */
function turn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

async function settle(turns = 4): Promise<void> {
  for (let i = 0; i < turns; i += 1) await turn();
}

interface Harness {
  stdin: PassThrough;
  stdout: PassThrough;
  wire: StdioWire;
  messages: JSONRPCMessage[];
  errors: Error[];
  closes: () => number;
  /** The spy on stdout.write: one call per write the wire made. */
  writes: MockInstance;
  /** Everything written to stdout so far, as text. */
  output: () => string;
  /** Every line written to stdout so far, parsed. */
  outputLines: () => unknown[];
}

async function openWire(options?: StdioWireOptions): Promise<Harness> {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const chunks: Buffer[] = [];
  stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
  const writes = vi.spyOn(stdout, 'write');
  const wire = new StdioWire(stdin, stdout, options);
  const messages: JSONRPCMessage[] = [];
  const errors: Error[] = [];
  let closes = 0;
  wire.onmessage = (message) => messages.push(message);
  wire.onerror = (error) => errors.push(error);
  wire.onclose = () => (closes += 1);
  await wire.start();
  const output = (): string => Buffer.concat(chunks).toString('utf8');
  return {
    stdin,
    stdout,
    wire,
    messages,
    errors,
    closes: () => closes,
    writes,
    output,
    outputLines: () =>
      output()
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as unknown),
  };
}

/** The text of the nth stdout.write call. */
function written(writes: MockInstance, n: number): string {
  const chunk = writes.mock.calls[n]?.[0] as Buffer | string | undefined;
  if (chunk === undefined) throw new Error(`no write #${n}`);
  return typeof chunk === 'string' ? chunk : chunk.toString('utf8');
}

function request(id: number | string, uri = 'file:///srv/a.txt'): JSONRPCMessage {
  return { jsonrpc: '2.0', id, method: 'resources/read', params: { uri } };
}

function line(message: unknown): string {
  return `${JSON.stringify(message)}\n`;
}

/** A valid notification whose JSON is exactly `bytes` bytes long (ASCII padding). */
function notificationOfBytes(bytes: number): string {
  const bare = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/pad', params: { pad: '' } });
  const text = JSON.stringify({
    jsonrpc: '2.0',
    method: 'notifications/pad',
    params: { pad: 'p'.repeat(bytes - bare.length) },
  });
  expect(Buffer.byteLength(text)).toBe(bytes);
  return text;
}

function oversizedMessage(message: string, limit: number): string {
  return `Message of ${Buffer.byteLength(message)} bytes exceeds the ${limit}-byte limit of this stdio connection`;
}

describe('StdioWire inbound messages', () => {
  it('delivers each newline-terminated message in order, several to a chunk', async () => {
    const h = await openWire();
    h.stdin.write(
      line(request(1)) +
        line({ jsonrpc: '2.0', method: 'notifications/initialized' }) +
        line(request('two')),
    );
    await settle();
    expect(h.messages).toEqual([
      request(1),
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      request('two'),
    ]);
    expect(h.errors).toEqual([]);
  });

  it('holds a line until its newline arrives, reassembling it across chunks', async () => {
    const h = await openWire();
    const text = JSON.stringify(request(7, 'file:///srv/split.txt'));
    h.stdin.write(text.slice(0, 10));
    await settle();
    h.stdin.write(text.slice(10, 30));
    await settle();
    expect(h.messages).toEqual([]);
    h.stdin.write(`${text.slice(30)}\n${JSON.stringify(request(8)).slice(0, 5)}`);
    await settle();
    expect(h.messages).toEqual([request(7, 'file:///srv/split.txt')]);
    h.stdin.write(`${JSON.stringify(request(8)).slice(5)}\n`);
    await settle();
    expect(h.messages).toEqual([request(7, 'file:///srv/split.txt'), request(8)]);
  });

  it('reassembles multi-byte UTF-8 characters split across chunk boundaries', async () => {
    const h = await openWire();
    const uri = 'file:///srv/€uro-😀-ü.txt';
    const bytes = Buffer.from(line(request(1, uri)));
    // One byte per chunk splits every multi-byte character at every possible offset.
    for (let i = 0; i < bytes.length; i += 1) {
      h.stdin.write(bytes.subarray(i, i + 1));
      if (i % 16 === 0) await turn();
    }
    await settle();
    expect(h.messages).toEqual([request(1, uri)]);
    expect(h.errors).toEqual([]);
  });

  it('reassembles a four-byte character cut after each of its bytes', async () => {
    const h = await openWire();
    const text = line({ jsonrpc: '2.0', method: 'notifications/message', params: { data: '😀' } });
    const bytes = Buffer.from(text);
    const at = bytes.indexOf(Buffer.from('😀'));
    for (let cut = at + 1; cut < at + 4; cut += 1) {
      h.stdin.write(bytes.subarray(0, cut));
      await turn();
      h.stdin.write(bytes.subarray(cut));
      await turn();
    }
    await settle();
    expect(h.messages).toHaveLength(3);
    for (const message of h.messages) expect(message).toEqual(JSON.parse(text));
  });

  it('accepts string chunks from a stdin with an encoding set', async () => {
    const stdin = new PassThrough();
    stdin.setEncoding('utf8');
    const wire = new StdioWire(stdin, new PassThrough());
    const messages: JSONRPCMessage[] = [];
    wire.onmessage = (message) => messages.push(message);
    await wire.start();
    stdin.write(Buffer.from(line(request(1, 'file:///ü'))));
    await settle();
    expect(messages).toEqual([request(1, 'file:///ü')]);
  });

  it('accepts CRLF line endings, even with the CR and LF in different chunks', async () => {
    const h = await openWire();
    h.stdin.write(`${JSON.stringify(request(1))}\r\n${JSON.stringify(request(2))}\r`);
    await settle();
    h.stdin.write('\n');
    await settle();
    expect(h.messages).toEqual([request(1), request(2)]);
    expect(h.errors).toEqual([]);
  });

  it('ignores blank and whitespace-only lines without an error', async () => {
    const h = await openWire();
    h.stdin.write(`\n\n\r\n   \n\t\r\n${line(request(1))}\n\n${line(request(2))}`);
    await settle();
    expect(h.messages).toEqual([request(1), request(2)]);
    expect(h.errors).toEqual([]);
  });

  it('reports a line that is not JSON through onerror, skips it and delivers the lines after it', async () => {
    const h = await openWire();
    h.stdin.write(`{"jsonrpc":"2.0","id":1,"method":\n${line(request(2))}`);
    await settle();
    h.stdin.write(`not json at all\n${line(request(3))}`);
    await settle();
    expect(h.messages).toEqual([request(2), request(3)]);
    expect(h.errors).toHaveLength(2);
    for (const error of h.errors)
      expect(error.message).toMatch(/^Discarded a stdio line that is not a JSON-RPC message: /);
    expect(h.writes).not.toHaveBeenCalled();
  });

  it('reports JSON that is not a JSON-RPC message through onerror and goes on', async () => {
    const h = await openWire();
    const bad = [
      { hello: 'world' },
      42,
      null,
      { jsonrpc: '2.0', id: 3, methodx: 'x' },
      { jsonrpc: '2.0', id: 4, result: 5 },
    ];
    h.stdin.write(bad.map(line).join('') + line(request(9)));
    await settle();
    expect(h.messages).toEqual([request(9)]);
    expect(h.errors).toHaveLength(bad.length);
    for (const error of h.errors)
      expect(error.message).toMatch(/^Discarded a stdio line that is not a JSON-RPC message: /);
    // None of them is shaped like a request (a string method and an id): nothing is answered.
    expect(h.writes).not.toHaveBeenCalled();
  });

  it('answers an invalid message shaped like a request with -32600 under its id, as the HTTP endpoint does', async () => {
    const h = await openWire();
    const bad = [
      { jsonrpc: '1.0', id: 1, method: 'x' },
      { jsonrpc: '2.0', id: 1.5, method: 'x' },
      { jsonrpc: '2.0', id: 'a', method: 'x', params: [1, 2] },
      { jsonrpc: '2.0', id: 2, method: 'x', extra: true },
      { id: 'no-version', method: 'x' },
    ];
    h.stdin.write(bad.map(line).join('') + line(request(9)));
    await settle();
    expect(h.messages).toEqual([request(9)]);
    expect(h.errors).toHaveLength(bad.length);
    expect(h.outputLines()).toEqual(
      bad.map((message) => ({
        jsonrpc: '2.0',
        id: message.id,
        error: { code: -32600, message: 'Invalid Request: not a valid JSON-RPC 2.0 message' },
      })),
    );
  });

  it('refuses a batch with one -32600 error (id null) on a connection that has not negotiated 2025-03-26', async () => {
    const h = await openWire();
    h.stdin.write(line([request(1), request(2)]));
    await settle();
    expect(h.messages).toEqual([]);
    expect(h.outputLines()).toEqual([
      {
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32600,
          message:
            'Invalid Request: JSON-RPC batches are allowed only at protocol revision 2025-03-26; send one message per line',
        },
      },
    ]);
    expect(h.errors.map((e) => e.message)).toEqual([
      expect.stringMatching(
        /^Refused a stdio batch: Invalid Request: JSON-RPC batches are allowed only/,
      ),
    ]);
  });

  it('delivers odd but valid messages that only the SDK schema can vouch for', async () => {
    const h = await openWire();
    h.stdin.write(
      line({
        jsonrpc: '2.0',
        id: 1,
        result: { _meta: { 'io.modelcontextprotocol/serverInfo': 'junk' } },
      }),
    );
    await settle();
    expect(h.messages).toEqual([{ jsonrpc: '2.0', id: 1, result: { _meta: {} } }]);
    expect(h.errors).toEqual([]);
  });

  it('does not deliver an unterminated last line when stdin ends', async () => {
    const h = await openWire();
    h.stdin.end(`${line(request(1))}${JSON.stringify(request(2))}`);
    await settle();
    expect(h.messages).toEqual([request(1)]);
    // Request 1 is still owed its answer: the wire drains before it closes.
    expect(h.closes()).toBe(0);
    await h.wire.send({ jsonrpc: '2.0', id: 1, result: {} });
    await settle();
    expect(h.closes()).toBe(1);
  });
});

describe('StdioWire outbound messages', () => {
  it('writes 16 sends of one turn with one stdout.write, 16 lines in order, and resolves them all', async () => {
    const h = await openWire();
    const promises = Array.from({ length: 16 }, (_, i) =>
      h.wire.send({ jsonrpc: '2.0', id: i, result: { n: i } }),
    );
    expect(h.writes).not.toHaveBeenCalled();
    await expect(Promise.all(promises)).resolves.toHaveLength(16);
    expect(h.writes).toHaveBeenCalledTimes(1);
    const text = written(h.writes, 0);
    expect(text.endsWith('\n')).toBe(true);
    expect(
      text
        .split('\n')
        .slice(0, -1)
        .map((l) => JSON.parse(l) as unknown),
    ).toEqual(Array.from({ length: 16 }, (_, i) => ({ jsonrpc: '2.0', id: i, result: { n: i } })));
    await settle();
    expect(h.output()).toBe(text);
  });

  it('gives every send of one batch the same promise', async () => {
    const h = await openWire();
    const first = h.wire.send(request(1));
    const second = h.wire.send(request(2));
    expect(second).toBe(first);
    await first;
    const third = h.wire.send(request(3));
    expect(third).not.toBe(first);
    await third;
  });

  it('joins sends made from microtasks of the same turn into the same write', async () => {
    const h = await openWire();
    const first = h.wire.send(request(1));
    await Promise.resolve();
    const second = h.wire.send(request(2));
    await Promise.all([first, second]);
    expect(h.writes).toHaveBeenCalledTimes(1);
    expect(written(h.writes, 0)).toBe(line(request(1)) + line(request(2)));
  });

  it('writes sends of separate turns with separate writes', async () => {
    const h = await openWire();
    const first = h.wire.send(request(1));
    await turn();
    const second = h.wire.send(request(2));
    await turn();
    const third = h.wire.send(request(3));
    await Promise.all([first, second, third]);
    expect(h.writes).toHaveBeenCalledTimes(3);
    expect([0, 1, 2].map((n) => written(h.writes, n))).toEqual([
      line(request(1)),
      line(request(2)),
      line(request(3)),
    ]);
    await settle();
    expect(h.outputLines()).toEqual([request(1), request(2), request(3)]);
  });

  it('resolves a batch only once its write has called back', async () => {
    const h = await openWire();
    let release: (() => void) | undefined;
    h.writes.mockImplementation(((chunk: Buffer, callback: (error?: Error | null) => void) => {
      release = () => callback(null);
      return (PassThrough.prototype.write as (this: PassThrough, chunk: Buffer) => boolean).call(
        h.stdout,
        chunk,
      );
    }) as never);
    let resolved = false;
    const sent = h.wire.send(request(1)).then(() => (resolved = true));
    await settle();
    expect(h.writes).toHaveBeenCalledTimes(1);
    expect(resolved).toBe(false);
    release!();
    await sent;
    expect(resolved).toBe(true);
  });

  it('writes encoded messages with the exact bytes of JSON.stringify, one per line', async () => {
    const h = await openWire();
    const content = Object.freeze({
      uri: 'file:///srv/ü.txt',
      mimeType: 'text/plain',
      text: 'line one\nline "two" ☃',
    });
    const message = {
      jsonrpc: '2.0',
      id: 'r',
      result: { contents: [content, { uri: 'file:///b', blob: 'AAE=' }] },
    } as JSONRPCMessage;
    await h.wire.send(message);
    await settle();
    expect(h.output()).toBe(`${JSON.stringify(message)}\n`);
  });

  it('rejects the batch with the write’s error when stdout fails the write, and closes', async () => {
    const failure = new Error('EPIPE: broken pipe');
    const stdout = new Writable({ write: (_chunk, _encoding, callback) => callback(failure) });
    const stdin = new PassThrough();
    const wire = new StdioWire(stdin, stdout);
    const errors: Error[] = [];
    let closes = 0;
    wire.onerror = (error) => errors.push(error);
    wire.onclose = () => (closes += 1);
    await wire.start();
    await expect(wire.send(request(1))).rejects.toBe(failure);
    await settle();
    expect(errors).toEqual([failure]);
    expect(closes).toBe(1);
    await expect(wire.send(request(2))).rejects.toThrow('stdio connection is closed');
  });
});

describe('StdioWire size limit', () => {
  it('answers an oversized request with -32600 naming its bytes and the limit, and keeps delivering', async () => {
    const limit = 200;
    const h = await openWire({ maxMessageBytes: limit });
    const big = JSON.stringify({
      jsonrpc: '2.0',
      id: 41,
      method: 'resources/read',
      params: { uri: `file:///${'a'.repeat(400)}` },
    });
    const expectedMessage = oversizedMessage(big, limit);
    h.stdin.write(`${big}\n${line(request(42))}`);
    await settle();
    expect(h.messages).toEqual([request(42)]);
    expect(h.errors.map((e) => e.message)).toEqual([expectedMessage]);
    expect(h.outputLines()).toEqual([
      {
        jsonrpc: '2.0',
        id: 41,
        error: {
          code: -32600,
          message: expectedMessage,
          data: { bytes: Buffer.byteLength(big), limit },
        },
      },
    ]);
    expect(expectedMessage).toBe(
      `Message of ${big.length} bytes exceeds the 200-byte limit of this stdio connection`,
    );
    // The connection keeps working both ways.
    h.stdin.write(line(request(43)));
    await h.wire.send(request(44));
    await settle();
    expect(h.messages).toEqual([request(42), request(43)]);
    expect(h.outputLines()).toHaveLength(2);
  });

  it('counts every byte of an oversized line that arrives over many chunks, reading the id from its head', async () => {
    const limit = 1000;
    const h = await openWire({ maxMessageBytes: limit });
    const big = JSON.stringify({
      jsonrpc: '2.0',
      id: 'big-one',
      method: 'resources/read',
      params: { uri: `file:///${'é'.repeat(3000)}` },
    });
    const bytes = Buffer.from(`${big}\n`);
    for (let at = 0; at < bytes.length; at += 333) {
      h.stdin.write(bytes.subarray(at, at + 333));
      await turn();
    }
    h.stdin.write(line(request(1)));
    await settle();
    const expectedMessage = oversizedMessage(big, limit);
    expect(h.errors.map((e) => e.message)).toEqual([expectedMessage]);
    expect(h.outputLines()).toEqual([
      {
        jsonrpc: '2.0',
        id: 'big-one',
        error: {
          code: -32600,
          message: expectedMessage,
          data: { bytes: Buffer.byteLength(big), limit },
        },
      },
    ]);
    expect(h.messages).toEqual([request(1)]);
  });

  it('takes the top-level id, not one nested in params, of an oversized request', async () => {
    const h = await openWire({ maxMessageBytes: 100 });
    const big = `{"jsonrpc":"2.0","method":"tools/call","params":{"id":1,"arguments":{"id":2}},"id":3,"pad":"${'x'.repeat(200)}"}`;
    h.stdin.write(`${big}\n`);
    await settle();
    expect(h.outputLines()).toEqual([
      expect.objectContaining({ id: 3, error: expect.objectContaining({ code: -32600 }) }),
    ]);
  });

  it('only reports an oversized line whose id cannot be read from its head', async () => {
    const limit = 100;
    const h = await openWire({ maxMessageBytes: limit });
    const cases = [
      // The id comes after more than the head's 4096 bytes.
      JSON.stringify({
        jsonrpc: '2.0',
        method: 'resources/read',
        params: { uri: `file:///${'a'.repeat(5000)}` },
        id: 5,
      }),
      // A notification has no id.
      JSON.stringify({
        jsonrpc: '2.0',
        method: 'notifications/message',
        params: { data: 'a'.repeat(500) },
      }),
      // Ids that are no request id.
      JSON.stringify({ jsonrpc: '2.0', id: null, method: 'x', params: { pad: 'a'.repeat(500) } }),
      JSON.stringify({ jsonrpc: '2.0', id: 1.5, method: 'x', params: { pad: 'a'.repeat(500) } }),
      // Not even JSON.
      `garbage ${'a'.repeat(500)}`,
    ];
    h.stdin.write(cases.map((c) => `${c}\n`).join('') + line(request(6)));
    await settle();
    expect(h.errors.map((e) => e.message)).toEqual(cases.map((c) => oversizedMessage(c, limit)));
    expect(h.writes).not.toHaveBeenCalled();
    expect(h.messages).toEqual([request(6)]);
  });

  it('accepts a line of exactly the limit and refuses one byte more', async () => {
    const limit = 150;
    const h = await openWire({ maxMessageBytes: limit });
    const exact = notificationOfBytes(limit);
    const over = notificationOfBytes(limit + 1);
    h.stdin.write(`${exact}\n${over}\n`);
    await settle();
    expect(h.messages).toEqual([JSON.parse(exact)]);
    expect(h.errors.map((e) => e.message)).toEqual([
      `Message of ${limit + 1} bytes exceeds the ${limit}-byte limit of this stdio connection`,
    ]);
  });

  it('measures the limit in bytes, not characters', async () => {
    const limit = 120;
    const h = await openWire({ maxMessageBytes: limit });
    const text = JSON.stringify({
      jsonrpc: '2.0',
      method: 'notifications/x',
      params: { s: '€'.repeat(30) },
    });
    expect(text.length).toBeLessThanOrEqual(limit);
    expect(Buffer.byteLength(text)).toBeGreaterThan(limit);
    h.stdin.write(`${text}\n`);
    await settle();
    expect(h.messages).toEqual([]);
    expect(h.errors.map((e) => e.message)).toEqual([oversizedMessage(text, limit)]);
  });

  it('defaults to the SDK’s 10 MiB limit', async () => {
    const h = await openWire();
    const limit = STDIO_DEFAULT_MAX_BUFFER_SIZE;
    expect(limit).toBe(10 * 1024 * 1024);
    const prefix = '{"jsonrpc":"2.0","id":"huge","method":"x","params":{"pad":"';
    const suffix = '"}}';
    const big = prefix + 'z'.repeat(limit + 1 - prefix.length - suffix.length) + suffix;
    expect(Buffer.byteLength(big)).toBe(limit + 1);
    h.stdin.write(`${big}\n`);
    h.stdin.write(line(request(1)));
    await settle();
    const expectedMessage = `Message of ${limit + 1} bytes exceeds the ${limit}-byte limit of this stdio connection`;
    expect(h.errors.map((e) => e.message)).toEqual([expectedMessage]);
    expect(h.outputLines()).toEqual([
      {
        jsonrpc: '2.0',
        id: 'huge',
        error: { code: -32600, message: expectedMessage, data: { bytes: limit + 1, limit } },
      },
    ]);
    expect(h.messages).toEqual([request(1)]);
  });

  it('answers two oversized requests in a row, each with its own id', async () => {
    const limit = 64;
    const h = await openWire({ maxMessageBytes: limit });
    const a = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'x',
      params: { pad: 'a'.repeat(100) },
    });
    const b = JSON.stringify({
      jsonrpc: '2.0',
      id: 2,
      method: 'x',
      params: { pad: 'b'.repeat(200) },
    });
    h.stdin.write(`${a}\n${b}\n`);
    await settle();
    expect(h.outputLines()).toEqual([
      {
        jsonrpc: '2.0',
        id: 1,
        error: {
          code: -32600,
          message: oversizedMessage(a, limit),
          data: { bytes: Buffer.byteLength(a), limit },
        },
      },
      {
        jsonrpc: '2.0',
        id: 2,
        error: {
          code: -32600,
          message: oversizedMessage(b, limit),
          data: { bytes: Buffer.byteLength(b), limit },
        },
      },
    ]);
    // Both answers were produced in one turn: one write.
    expect(h.writes).toHaveBeenCalledTimes(1);
  });

  it('skips an oversized line with a malformed id in its head and keeps delivering', async () => {
    const limit = 120; // room for an ordinary request, not for the padded one
    const h = await openWire({ maxMessageBytes: limit });
    h.stdin.write(
      `{"jsonrpc":"2.0","id":01,"method":"x","params":{"pad":"${'a'.repeat(200)}"}}\n${line(request(2))}`,
    );
    await settle();
    h.stdin.write(line(request(3)));
    await settle();
    expect(h.messages).toEqual([request(2), request(3)]);
    expect(h.errors).toHaveLength(1);
  });
});

describe('StdioWire lifecycle', () => {
  it('refuses to start twice', async () => {
    const h = await openWire();
    await expect(h.wire.start()).rejects.toThrow('StdioWire already started');
    // The first start still works.
    h.stdin.write(line(request(1)));
    await settle();
    expect(h.messages).toEqual([request(1)]);
  });

  it('closes once when stdin ends and every request read is answered, calling onclose exactly once', async () => {
    const h = await openWire();
    h.stdin.end(line(request(1)));
    await settle();
    expect(h.messages).toEqual([request(1)]);
    expect(h.closes()).toBe(0);
    await h.wire.send({ jsonrpc: '2.0', id: 1, result: {} });
    await settle();
    expect(h.output()).toBe(line({ jsonrpc: '2.0', id: 1, result: {} }));
    expect(h.closes()).toBe(1);
    await h.wire.close();
    expect(h.closes()).toBe(1);
  });

  it('calls onclose once however often close is called', async () => {
    const h = await openWire();
    await Promise.all([h.wire.close(), h.wire.close()]);
    await h.wire.close();
    expect(h.closes()).toBe(1);
  });

  it('rejects a send after close with a clear error, writing nothing', async () => {
    const h = await openWire();
    await h.wire.close();
    await expect(h.wire.send(request(1))).rejects.toThrow('stdio connection is closed');
    await settle();
    expect(h.writes).not.toHaveBeenCalled();
  });

  it('rejects, without writing, sends still waiting for their turn when the wire closes', async () => {
    const h = await openWire();
    const pending = h.wire.send(request(1));
    await h.wire.close();
    await expect(pending).rejects.toThrow('stdio connection is closed');
    expect(h.writes).not.toHaveBeenCalled();
  });

  it('delivers nothing that arrives on stdin after close', async () => {
    const h = await openWire();
    h.stdin.write(JSON.stringify(request(1)).slice(0, 12));
    await settle();
    await h.wire.close();
    h.stdin.write(`${JSON.stringify(request(1)).slice(12)}\n${line(request(2))}`);
    await settle();
    expect(h.messages).toEqual([]);
    expect(h.errors).toEqual([]);
  });

  it('reports a stdout error through onerror and closes', async () => {
    const h = await openWire();
    const failure = new Error('EPIPE: broken pipe');
    h.stdout.emit('error', failure);
    expect(h.errors).toEqual([failure]);
    expect(h.closes()).toBe(1);
    await expect(h.wire.send(request(1))).rejects.toThrow('stdio connection is closed');
  });

  it('swallows a late stdout error after close instead of throwing it', async () => {
    const h = await openWire();
    await h.wire.close();
    expect(() => h.stdout.emit('error', new Error('EPIPE: late'))).not.toThrow();
    expect(h.errors).toEqual([]);
    expect(h.closes()).toBe(1);
  });

  it('reports a stdin error through onerror, and closes when stdin then closes', async () => {
    const h = await openWire();
    const failure = new Error('EIO: stdin failed');
    h.stdin.destroy(failure);
    await settle();
    expect(h.errors).toEqual([failure]);
    expect(h.closes()).toBe(1);
  });

  it('closes on the next turn when started on a stdin that is already gone', async () => {
    const stdin = new PassThrough();
    stdin.destroy();
    const wire = new StdioWire(stdin, new PassThrough());
    let closes = 0;
    wire.onclose = () => (closes += 1);
    await wire.start();
    expect(closes).toBe(0);
    await settle();
    expect(closes).toBe(1);
  });
});

describe('StdioWire drain', () => {
  it('answers a request read during the drain with shutting_down, and resolves once the requests taken before are answered', async () => {
    const h = await openWire();
    h.stdin.write(line(request(1)));
    await settle();
    let drained: boolean | undefined;
    void h.wire.drain().then((idle) => (drained = idle));
    h.stdin.write(line(request(2)));
    h.stdin.write(
      line({
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: 1, progress: 1 },
      }),
    );
    await settle();
    // Request 2 never reaches the server; the notification does.
    expect(h.messages).toEqual([
      request(1),
      {
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: 1, progress: 1 },
      },
    ]);
    expect(h.outputLines()[0]).toMatchObject({
      id: 2,
      error: { code: -32011, data: { code: 'unavailable', reason: 'shutting_down' } },
    });
    expect(drained).toBeUndefined();
    expect(h.wire.pendingRequests).toBe(1);
    await h.wire.send({ jsonrpc: '2.0', id: 1, result: {} });
    await settle();
    expect(drained).toBe(true);
    expect(h.outputLines().map((l) => (l as { id: number }).id)).toEqual([2, 1]);
    expect(h.closes()).toBe(0);
  });

  it('does not wait for a request the client cancelled, nor for a 2026 listen stream', async () => {
    const h = await openWire();
    h.stdin.write(line(request(1)));
    h.stdin.write(line({ jsonrpc: '2.0', id: 2, method: 'subscriptions/listen', params: {} }));
    h.stdin.write(
      line({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }),
    );
    await settle();
    expect(h.wire.pendingRequests).toBe(0);
    expect(await h.wire.drain()).toBe(true);
  });

  it('resolves false when the grace signal aborts first, with the request still counted', async () => {
    const h = await openWire();
    h.stdin.write(line(request(1)));
    await settle();
    const grace = new AbortController();
    const drained = h.wire.drain(grace.signal);
    grace.abort();
    expect(await drained).toBe(false);
    expect(h.wire.pendingRequests).toBe(1);
  });

  it('leaves the end of input to the owner when onInputEnd is given', async () => {
    let ended = 0;
    const h = await openWire({ onInputEnd: () => (ended += 1) });
    h.stdin.end();
    await settle();
    expect(ended).toBe(1);
    expect(h.closes()).toBe(0);
  });
});
