/**
 * Provider-error translation, shared by every provider: what went wrong underneath (an errno from
 * the file system, an HTTP status, an AWS SDK error, a failure a provider classified itself — git's
 * exit statuses, a SQL driver's codes) is first named as a `ProviderFailure` of one shared kind, and
 * `providerError` turns that into the core's typed error under the URI the caller asked for:
 *
 *   missing → NotFoundError · denied, throttled, unavailable → UnavailableError (with the reason)
 *   timeout → ReservoirError 'timeout' · refused, invalid → InvalidArgumentError
 *
 * Errors that are already Reservoir errors, and aborts, pass through unchanged.
 */
import {
  InvalidArgumentError,
  NotFoundError,
  ReservoirError,
  UnavailableError,
  type ErrorData,
} from '../../core/errors.js';
import { definedProps } from '../../core/defined.js';

export type FailureKind =
  'missing' | 'denied' | 'throttled' | 'timeout' | 'unavailable' | 'refused' | 'invalid';

/** A failure a provider has classified: its kind, a reason fit for the caller, and structured detail. */
export class ProviderFailure extends Error {
  readonly data: ErrorData;

  constructor(
    readonly kind: FailureKind,
    readonly reason: string,
    options: { cause?: unknown; data?: ErrorData } = {},
  ) {
    super(reason, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ProviderFailure';
    this.data = options.data ?? {};
  }
}

/** Errno codes that mean "nothing by that name" (never an existence oracle: all look alike). */
const MISSING_ERRNO = new Set(['ENOENT', 'ENOTDIR', 'ELOOP', 'ENAMETOOLONG', 'EINVAL']);

/** Whether `error` is a file-system error saying the path names nothing. */
export function isMissingErrno(error: unknown): boolean {
  return MISSING_ERRNO.has((error as NodeJS.ErrnoException | undefined)?.code ?? '');
}

/** A file-system error as a failure: missing, permission denied, a directory, or unreadable. */
export function errnoFailure(error: unknown, verb = 'read'): ProviderFailure | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (
    !(error instanceof Error) ||
    typeof (error as NodeJS.ErrnoException).errno !== 'number' ||
    code === undefined
  )
    return undefined;
  if (MISSING_ERRNO.has(code))
    return new ProviderFailure('missing', 'does not exist', { cause: error });
  if (code === 'EACCES' || code === 'EPERM')
    return new ProviderFailure('denied', 'permission denied', { cause: error });
  if (code === 'EISDIR')
    return new ProviderFailure('invalid', 'is a directory, not a file', { cause: error });
  if (code === 'EMFILE' || code === 'ENFILE')
    return new ProviderFailure('throttled', `too many open files (${code}); try again later`, {
      cause: error,
    });
  return new ProviderFailure('unavailable', `cannot be ${verb} (${code})`, { cause: error });
}

/** An HTTP status (not 2xx/304) from `who` as a failure; `data.status` carries it. */
export function httpStatusFailure(status: number, who = 'the upstream'): ProviderFailure {
  const data = { status };
  if (status === 404 || status === 410)
    return new ProviderFailure('missing', `${who} has no such resource (HTTP ${status})`, { data });
  if (status === 401 || status === 403)
    return new ProviderFailure(
      'denied',
      `${who} refused access (HTTP ${status}); check the source's credentials`,
      { data },
    );
  if (status === 429)
    return new ProviderFailure('throttled', `${who} is rate limiting requests (HTTP 429)`, {
      data,
    });
  if (status >= 500)
    return new ProviderFailure('unavailable', `${who} failed (HTTP ${status})`, { data });
  return new ProviderFailure('unavailable', `${who} answered HTTP ${status}`, { data });
}

interface AwsError {
  name?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

const AWS_DENIED = new Set([
  'AccessDenied',
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'ExpiredToken',
  'InvalidToken',
]);
const AWS_THROTTLED = new Set([
  'SlowDown',
  'ThrottlingException',
  'Throttling',
  'RequestLimitExceeded',
  'TooManyRequestsException',
]);

/** Whether an AWS SDK error is the service saying "slow down" (pollers back off from it). */
export function isAwsThrottled(error: unknown): boolean {
  const e = error as AwsError | undefined;
  return AWS_THROTTLED.has(e?.name ?? '') || e?.$metadata?.httpStatusCode === 503;
}

/**
 * An AWS SDK error (S3 and S3-compatible stores) as a failure: NoSuchKey / 404 missing, a missing
 * bucket unavailable, AccessDenied and bad credentials denied, SlowDown / 503 throttled.
 */
export function awsFailure(error: unknown, service = 'S3'): ProviderFailure | undefined {
  const e = error as AwsError | undefined;
  if (
    e === undefined ||
    e === null ||
    typeof e !== 'object' ||
    (e.$metadata === undefined && e.name === undefined)
  )
    return undefined;
  const status = e.$metadata?.httpStatusCode;
  const data = definedProps({ status });
  const name = e.name ?? '';
  if (name === 'NoSuchBucket')
    return new ProviderFailure('unavailable', 'the bucket does not exist', { cause: error, data });
  if (name === 'NoSuchKey' || name === 'NotFound' || status === 404)
    return new ProviderFailure('missing', `${service} has no such key`, { cause: error, data });
  if (status === 403 || AWS_DENIED.has(name))
    return new ProviderFailure(
      'denied',
      `access denied by ${service} (${e.name ?? status}); check the source's credentials`,
      { cause: error, data },
    );
  if (isAwsThrottled(error))
    return new ProviderFailure('throttled', `${service} is throttling requests; try again later`, {
      cause: error,
      data,
    });
  if (name === 'TimeoutError' || e.code === 'ETIMEDOUT')
    return new ProviderFailure(
      'unavailable',
      `${service} did not answer within the source's timeoutMs`,
      { cause: error, data },
    );
  const why = e.code ?? e.name ?? 'error';
  return new ProviderFailure(
    'unavailable',
    `${service} request failed (${why}${status === undefined ? '' : `, HTTP ${status}`})`,
    { cause: error, data },
  );
}

/** An outbound address refused by the address rules (utils/address.ts) as a failure. */
export function addressFailure(error: unknown): ProviderFailure | undefined {
  const e = error as { code?: string; message?: string } | undefined;
  if (e?.code !== 'ERR_RESERVOIR_ADDRESS_REFUSED') return undefined;
  return new ProviderFailure('unavailable', e.message ?? 'the endpoint address is refused', {
    cause: error,
  });
}

export interface TranslateOptions {
  /** The argument named by an InvalidArgumentError for `refused` and `invalid`. @default 'uri' */
  argument?: string;
  /** The provider's own classifier for what its library throws (e.g. `awsFailure`), tried before errno. */
  classify?: (error: unknown) => ProviderFailure | undefined;
}

/**
 * The core's typed error for `error` under `uri`: a ProviderFailure by its kind, an errno or an
 * address refusal classified first; Reservoir errors and aborts unchanged; anything else unchanged.
 */
export function providerError(
  uri: string,
  error: unknown,
  options: TranslateOptions = {},
): unknown {
  if (error instanceof ReservoirError || (error as Error | undefined)?.name === 'AbortError')
    return error;
  const failure =
    error instanceof ProviderFailure
      ? error
      : (addressFailure(error) ?? options.classify?.(error) ?? errnoFailure(error));
  if (failure === undefined) return error;
  const cause = failure === error ? error : (failure.cause ?? error);
  switch (failure.kind) {
    case 'missing':
      return new NotFoundError(uri, { cause });
    case 'timeout':
      return new ReservoirError('timeout', failure.reason, {
        data: { uri, ...failure.data },
        cause,
      });
    case 'refused':
    case 'invalid':
      return new InvalidArgumentError(options.argument ?? 'uri', failure.reason, {
        uri,
        ...failure.data,
      });
    default: {
      const typed = new UnavailableError(uri, failure.reason, { cause });
      Object.assign(typed.data, failure.data);
      return typed;
    }
  }
}
