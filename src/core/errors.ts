/**
 * Typed errors. Providers and the core throw these; exactly one module (`mcp/errors.ts`) turns them
 * into JSON-RPC errors. Every code has a row in `docs/errors.md`, and a test keeps the two in step.
 */
import { definedProps } from './defined.js';

/** The stable string codes of every error Reservoir raises on purpose. */
export const ERROR_CODES = [
  'not_found',
  'invalid_uri',
  'invalid_cursor',
  'invalid_argument',
  'too_large',
  'unavailable',
  'timeout',
  'denied',
  'limit_exceeded',
  'config_invalid',
  'missing_capability',
  'invalid_document',
  'unsupported',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** Structured detail carried to the client in `error.data`. Never content or secrets. */
export type ErrorData = Record<string, unknown>;

export class ReservoirError extends Error {
  readonly code: ErrorCode;
  readonly data: ErrorData;

  constructor(
    code: ErrorCode,
    message: string,
    options: { data?: ErrorData; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ReservoirError';
    this.code = code;
    this.data = options.data ?? {};
  }
}

/**
 * The resource does not exist — or exists outside every root, which must look the same
 * (no existence oracle). The message never says which.
 */
export class NotFoundError extends ReservoirError {
  constructor(uri: string, options: { cause?: unknown } = {}) {
    super('not_found', `Resource not found: ${uri}`, { data: { uri }, ...options });
    this.name = 'NotFoundError';
  }
}

/** A client-supplied URI that cannot be parsed or is not absolute. */
export class InvalidUriError extends ReservoirError {
  constructor(uri: string, reason: string) {
    super('invalid_uri', `Invalid resource URI: ${reason}`, {
      data: { uri: truncate(uri), reason },
    });
    this.name = 'InvalidUriError';
  }
}

/** A cursor the server did not mint, that was edited, or that no longer points anywhere. */
export class InvalidCursorError extends ReservoirError {
  constructor(reason: string) {
    super('invalid_cursor', `Invalid cursor: ${reason}. Start again without a cursor.`, {
      data: { reason },
    });
    this.name = 'InvalidCursorError';
  }
}

/** A request argument (other than a URI or cursor) that is missing or malformed. */
export class InvalidArgumentError extends ReservoirError {
  constructor(argument: string, reason: string, data: ErrorData = {}) {
    super('invalid_argument', `Invalid argument '${argument}': ${reason}`, {
      data: { argument, reason, ...data },
    });
    this.name = 'InvalidArgumentError';
  }
}

/**
 * URIs that read a resource too large to read whole in parts: `bytes` reads a first byte range
 * (`?bytes=`), `lines` a first range of lines (`?lines=`, for text).
 */
export interface PartialReads {
  bytes?: string;
  lines?: string;
}

/** A read whose content is over the configured cap. Carries the size, the limit and how to read it in parts. */
export class TooLargeError extends ReservoirError {
  constructor(uri: string, size: number, limit: number, what = 'size', parts?: PartialReads) {
    super(
      'too_large',
      `Resource too large to read: ${uri} is ${size} bytes (${what}), over the limit of ${limit} bytes${partsAdvice(parts)}`,
      {
        data: { uri, size, limit, measure: what, ...definedProps({ parts }) },
      },
    );
    this.name = 'TooLargeError';
  }
}

/**
 * A document (PDF, Office, EPUB, …) that cannot be converted to text: damaged, not what its type
 * says, or declaring XML entities. `reason` says which.
 */
export class InvalidDocumentError extends ReservoirError {
  constructor(uri: string, reason: string, data: ErrorData = {}) {
    super('invalid_document', `Cannot read the document ${uri}: ${reason}`, {
      data: { uri, reason, ...data },
    });
    this.name = 'InvalidDocumentError';
  }
}

/** A well-formed document in a form Reservoir does not convert (password-protected, encrypted, ZIP64). */
export class UnsupportedError extends ReservoirError {
  constructor(uri: string, reason: string, data: ErrorData = {}) {
    super('unsupported', `Cannot convert the document ${uri}: ${reason}`, {
      data: { uri, reason, ...data },
    });
    this.name = 'UnsupportedError';
  }
}

function partsAdvice(parts: PartialReads | undefined): string {
  if (parts === undefined) return '';
  const ways: string[] = [];
  if (parts.bytes !== undefined)
    ways.push(`by byte ranges (?bytes=START-END, 0-based and inclusive), e.g. ${parts.bytes}`);
  if (parts.lines !== undefined)
    ways.push(
      `${parts.bytes === undefined ? '' : 'if it is text, '}by line ranges (?lines=START-END, 1-based; ?lines=-100 for the last 100 lines), e.g. ${parts.lines}`,
    );
  return ways.length === 0 ? '' : `. Read it in parts ${ways.join('; or ')}`;
}

/** The source behind a resource cannot answer right now (permission denied, database down, …). */
export class UnavailableError extends ReservoirError {
  constructor(uri: string, reason: string, options: { cause?: unknown } = {}) {
    super('unavailable', `Resource unavailable: ${uri}: ${reason}`, {
      data: { uri, reason },
      ...options,
    });
    this.name = 'UnavailableError';
  }
}

/** A configuration or command-line value that cannot be used. */
export class ConfigError extends ReservoirError {
  constructor(field: string, reason: string, data: ErrorData = {}) {
    super('config_invalid', `${field}: ${reason}`, { data: { field, reason, ...data } });
    this.name = 'ConfigError';
  }
}

export function isReservoirError(error: unknown): error is ReservoirError {
  return error instanceof ReservoirError;
}

function truncate(value: string, max = 512): string {
  return value.length <= max ? value : `${value.slice(0, max)}…`;
}
