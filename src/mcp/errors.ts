/**
 * The one place Reservoir errors become JSON-RPC errors. Every ReservoirError code maps to a fixed
 * JSON-RPC code (docs/errors.md lists them; a test keeps the table and this map in step). Anything
 * else is an internal error: logged with its detail, answered without it.
 */
import {
  MissingRequiredClientCapabilityError,
  ProtocolError,
  type JSONRPCMessage,
  type Transport,
} from '@modelcontextprotocol/server';
import { isReservoirError, type ErrorCode } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { withSend } from './transport-proxy.js';

/**
 * JSON-RPC codes. -32000…-32019 are implementation-defined; Reservoir uses -32010…-32015. -32021 is
 * the spec's MissingRequiredClientCapability (2026-07-28).
 */
export const JSONRPC_CODES: Record<ErrorCode, number> = {
  not_found: -32002,
  invalid_uri: -32602,
  invalid_cursor: -32602,
  invalid_argument: -32602,
  too_large: -32010,
  unavailable: -32011,
  timeout: -32012,
  limit_exceeded: -32013,
  denied: -32002,
  config_invalid: -32603,
  missing_capability: -32021,
  invalid_document: -32014,
  unsupported: -32015,
};

export const RESOURCE_NOT_FOUND_LEGACY = -32002;
const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;

/** Turns anything a handler threw into the ProtocolError the SDK puts on the wire. */
export function toProtocolError(error: unknown, logger: Logger): ProtocolError {
  if (error instanceof ProtocolError) return error;
  if (isReservoirError(error)) {
    // MissingRequiredClientCapability: data is exactly { requiredCapabilities } (the spec's shape);
    // the SDK's own class lets its HTTP edge answer it with status 400.
    if (error.code === 'missing_capability') {
      const requiredCapabilities = (error.data['requiredCapabilities'] ??
        {}) as ConstructorParameters<
        typeof MissingRequiredClientCapabilityError
      >[0]['requiredCapabilities'];
      return new MissingRequiredClientCapabilityError({ requiredCapabilities }, error.message);
    }
    // Not-found data is exactly { uri }: that is how clients recognise it on every revision.
    const data =
      error.code === 'not_found' || error.code === 'denied'
        ? { uri: error.data['uri'] }
        : { code: error.code, ...error.data };
    return new ProtocolError(
      JSONRPC_CODES[error.code],
      error.code === 'denied' ? `Resource not found: ${String(error.data['uri'])}` : error.message,
      data,
    );
  }
  if (error instanceof Error && error.name === 'AbortError') {
    return new ProtocolError(JSONRPC_CODES.timeout, 'Request aborted', { code: 'timeout' });
  }
  logger.error({ err: error }, 'internal error while handling a request');
  return new ProtocolError(INTERNAL_ERROR, 'Internal error');
}

/**
 * The answer to a request that arrives while the server drains for shutdown (docs/operations.md):
 * `unavailable` with reason `shutting_down`, so a client knows to retry elsewhere or later. The
 * HTTP endpoint sends it with status 503 and `Connection: close`; the stdio wire on its connection.
 */
export function shuttingDownError<I extends string | number | null>(
  id: I,
): {
  jsonrpc: '2.0';
  id: I;
  error: { code: number; message: string; data: Record<string, unknown> };
} {
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: JSONRPC_CODES.unavailable,
      message:
        'Server is shutting down: it answers the requests it already took, and no new ones; retry on another instance or after the restart',
      data: { code: 'unavailable', reason: 'shutting_down' },
    },
  };
}

/**
 * The SDK writes resource-not-found as -32602 on every revision. The 2025 revisions define -32002
 * for it, so a 2025-era connection gets its outbound not-found errors rewritten back to -32002
 * (recognised, as the SDK does, by `error.data` being exactly `{ uri }`).
 */
export function withLegacyNotFoundCode(transport: Transport): Transport {
  const send = (
    message: JSONRPCMessage,
    options?: Parameters<Transport['send']>[1],
  ): Promise<void> => transport.send(rewriteNotFound(message), options);
  return withSend(transport, send);
}

function rewriteNotFound(message: JSONRPCMessage): JSONRPCMessage {
  if (!('error' in message)) return message;
  const code = legacyErrorCode(message.error.code, message.error.data);
  return code === message.error.code ? message : { ...message, error: { ...message.error, code } };
}

/** The code a 2025-era connection gets for an error of `code` with `data`: not-found (data exactly `{ uri }`) is -32002. */
export function legacyErrorCode(code: number, data: unknown): number {
  if (code !== INVALID_PARAMS || data === null || typeof data !== 'object') return code;
  const keys = Object.keys(data);
  return keys.length === 1 && keys[0] === 'uri' ? RESOURCE_NOT_FOUND_LEGACY : code;
}
