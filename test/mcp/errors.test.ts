// Pins the one place Reservoir errors become JSON-RPC errors: each ReservoirError code's JSON-RPC
// code, not-found (and denied) data being exactly { uri }, internal errors answered as -32603
// 'Internal error' without their detail, and the legacy rewrite of -32602 { uri } to -32002 only.
import { ProtocolError, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/server';
import { describe, expect, it, vi } from 'vitest';
import {
  ERROR_CODES,
  InvalidArgumentError,
  InvalidCursorError,
  InvalidUriError,
  NotFoundError,
  ReservoirError,
  TooLargeError,
  UnavailableError,
  type ErrorCode,
} from '../../src/core/errors.js';
import { MissingClientCapabilityError } from '../../src/core/input.js';
import type { Logger } from '../../src/core/log.js';
import { silentLogger } from '../../src/core/log.js';
import {
  JSONRPC_CODES,
  RESOURCE_NOT_FOUND_LEGACY,
  toProtocolError,
  withLegacyNotFoundCode,
} from '../../src/mcp/errors.js';

/** The intended table, written out so a change to either side is deliberate. */
const INTENDED: Record<ErrorCode, number> = {
  not_found: -32002,
  invalid_uri: -32602,
  invalid_cursor: -32602,
  invalid_argument: -32602,
  too_large: -32010,
  unavailable: -32011,
  timeout: -32012,
  denied: -32002,
  limit_exceeded: -32013,
  config_invalid: -32603,
  missing_capability: -32021,
  invalid_document: -32014,
  unsupported: -32015,
};

function recordingLogger(): Logger & { errors: unknown[][] } {
  const errors: unknown[][] = [];
  return {
    ...silentLogger,
    error: ((...args: unknown[]) => errors.push(args)) as Logger['error'],
    errors,
  };
}

describe('toProtocolError', () => {
  it('has a JSON-RPC code for every ReservoirError code and no other', () => {
    expect(Object.keys(JSONRPC_CODES).sort()).toEqual([...ERROR_CODES].sort());
    expect(JSONRPC_CODES).toEqual(INTENDED);
  });

  for (const code of ERROR_CODES) {
    it(`maps a ${code} error to JSON-RPC ${INTENDED[code]}`, () => {
      const error = new ReservoirError(code, `a ${code} error`, {
        data: { uri: 'mem://x/y', extra: 1 },
      });
      const protocol = toProtocolError(error, silentLogger);
      expect(protocol).toBeInstanceOf(ProtocolError);
      expect(protocol.code).toBe(INTENDED[code]);
    });
  }

  it('gives a missing client capability exactly { requiredCapabilities } as data (the spec shape)', () => {
    const protocol = toProtocolError(
      new MissingClientCapabilityError({ sampling: {} }),
      silentLogger,
    );
    expect(protocol.code).toBe(-32021);
    expect(protocol.data).toEqual({ requiredCapabilities: { sampling: {} } });
    expect(protocol.message).toContain('sampling');
  });

  it('gives not-found exactly { uri } as data, with the not-found message', () => {
    const protocol = toProtocolError(new NotFoundError('file:///srv/missing.txt'), silentLogger);
    expect(protocol.code).toBe(-32002);
    expect(protocol.data).toEqual({ uri: 'file:///srv/missing.txt' });
    expect(Object.keys(protocol.data as object)).toEqual(['uri']);
    expect(protocol.message).toContain('Resource not found: file:///srv/missing.txt');
  });

  it('answers denied exactly like not-found, so a refusal is no existence oracle', () => {
    const denied = toProtocolError(
      new ReservoirError('denied', 'policy says no for secret reasons', {
        data: { uri: 'mem://x/y', rule: 'r1' },
      }),
      silentLogger,
    );
    const missing = toProtocolError(new NotFoundError('mem://x/y'), silentLogger);
    expect(denied.code).toBe(missing.code);
    expect(denied.data).toEqual(missing.data);
    expect(denied.message).toBe(missing.message);
    expect(JSON.stringify(denied.data)).not.toContain('r1');
  });

  it('carries the code and the structured detail for other errors', () => {
    const tooLarge = toProtocolError(new TooLargeError('mem://x/big', 200, 100), silentLogger);
    expect(tooLarge.data).toEqual({
      code: 'too_large',
      uri: 'mem://x/big',
      size: 200,
      limit: 100,
      measure: 'size',
    });
    const unavailable = toProtocolError(
      new UnavailableError('mem://x/y', 'permission denied'),
      silentLogger,
    );
    expect(unavailable.data).toEqual({
      code: 'unavailable',
      uri: 'mem://x/y',
      reason: 'permission denied',
    });
    for (const error of [
      new InvalidUriError('nope', 'the URI is relative'),
      new InvalidCursorError('bad'),
      new InvalidArgumentError('limit', 'too big'),
    ]) {
      const protocol = toProtocolError(error, silentLogger);
      expect(protocol.code).toBe(-32602);
      // More than { uri }: an ordinary invalid-params error, never mistaken for not-found.
      expect(Object.keys(protocol.data as object)).not.toEqual(['uri']);
      expect((protocol.data as { code: string }).code).toBe(error.code);
    }
  });

  it('answers an unknown error as -32603 Internal error without leaking its message, and logs it', () => {
    const logger = recordingLogger();
    const leaky = new Error('ENOENT: /etc/shadow and password hunter2');
    const protocol = toProtocolError(leaky, logger);
    expect(protocol.code).toBe(-32603);
    expect(protocol.message).toBe('Internal error');
    expect(protocol.data).toBeUndefined();
    expect(JSON.stringify({ message: protocol.message, data: protocol.data })).not.toMatch(
      /shadow|hunter2/,
    );
    expect(logger.errors).toHaveLength(1);
    expect(logger.errors[0]![0]).toEqual({ err: leaky });
  });

  it('answers thrown non-errors as -32603 Internal error too', () => {
    for (const thrown of [
      'a string with a secret',
      42,
      null,
      undefined,
      { message: 'object with secret' },
    ]) {
      const protocol = toProtocolError(thrown, silentLogger);
      expect(protocol.code).toBe(-32603);
      expect(protocol.message).toBe('Internal error');
    }
  });

  it('answers an AbortError as a timeout', () => {
    const protocol = toProtocolError(
      new DOMException('The operation was aborted', 'AbortError'),
      silentLogger,
    );
    expect(protocol.code).toBe(-32012);
    expect(protocol.data).toEqual({ code: 'timeout' });
  });

  it('passes a ProtocolError through unchanged', () => {
    const original = new ProtocolError(-32601, 'Method not found');
    expect(toProtocolError(original, silentLogger)).toBe(original);
  });
});

describe('withLegacyNotFoundCode', () => {
  function fakeTransport(): Transport & { sent: JSONRPCMessage[] } {
    const sent: JSONRPCMessage[] = [];
    return {
      sent,
      async start() {},
      async close() {},
      async send(message: JSONRPCMessage) {
        sent.push(message);
      },
    };
  }

  const errorMessage = (code: number, data?: unknown): JSONRPCMessage =>
    ({
      jsonrpc: '2.0',
      id: 7,
      error: { code, message: 'm', ...(data === undefined ? {} : { data }) },
    }) as JSONRPCMessage;

  it('rewrites a -32602 error whose data is exactly { uri } to -32002, keeping everything else', async () => {
    const inner = fakeTransport();
    await withLegacyNotFoundCode(inner).send(errorMessage(-32602, { uri: 'file:///x' }));
    expect(inner.sent).toEqual([
      {
        jsonrpc: '2.0',
        id: 7,
        error: { code: RESOURCE_NOT_FOUND_LEGACY, message: 'm', data: { uri: 'file:///x' } },
      },
    ]);
    expect(RESOURCE_NOT_FOUND_LEGACY).toBe(-32002);
  });

  it('leaves every other message alone', async () => {
    const inner = fakeTransport();
    const untouched: JSONRPCMessage[] = [
      errorMessage(-32602, { uri: 'file:///x', reason: 'relative' }),
      errorMessage(-32602, { code: 'invalid_cursor', reason: 'bad' }),
      errorMessage(-32602),
      errorMessage(-32602, null),
      errorMessage(-32602, 'file:///x'),
      errorMessage(-32602, {}),
      errorMessage(-32602, { url: 'file:///x' }),
      errorMessage(-32603, { uri: 'file:///x' }),
      errorMessage(-32011, { uri: 'file:///x' }),
      { jsonrpc: '2.0', id: 8, result: { contents: [] } } as JSONRPCMessage,
      {
        jsonrpc: '2.0',
        method: 'notifications/resources/updated',
        params: { uri: 'file:///x' },
      } as JSONRPCMessage,
      { jsonrpc: '2.0', id: 9, method: 'ping' } as JSONRPCMessage,
    ];
    const wrapped = withLegacyNotFoundCode(inner);
    for (const message of untouched) await wrapped.send(message);
    expect(inner.sent).toEqual(untouched);
  });

  it('passes send options through and forwards every other property to the transport', async () => {
    const inner = fakeTransport();
    const send = vi.spyOn(inner, 'send');
    const wrapped = withLegacyNotFoundCode(inner);
    await wrapped.send(errorMessage(-32602, { uri: 'u' }), { relatedRequestId: 7 });
    expect(send.mock.calls[0]![1]).toEqual({ relatedRequestId: 7 });
    const onmessage = vi.fn();
    wrapped.onmessage = onmessage;
    expect(inner.onmessage).toBe(onmessage);
    const close = vi.spyOn(inner, 'close');
    await wrapped.close();
    expect(close).toHaveBeenCalledOnce();
  });
});
