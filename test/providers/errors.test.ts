// Pins the kit's provider-error translation: each underlying failure (an errno, an HTTP status, an
// AWS SDK error, a failure a provider classified) becomes the core's typed error under the URI
// asked for, with a reason the caller can act on; typed errors and aborts pass through unchanged.
import { lstatSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  InvalidArgumentError,
  NotFoundError,
  UnavailableError,
  type ReservoirError,
} from '../../src/core/errors.js';
import {
  awsFailure,
  httpStatusFailure,
  ProviderFailure,
  providerError,
} from '../../src/providers/utils/errors.js';

const URI = 'x://source/thing';

function errnoOf(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

const aws = (name: string, status: number): Error =>
  Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status } });

describe('provider-error translation (providers/utils/errors.ts)', () => {
  it('turns a missing path into NotFoundError and anything else from the file system into UnavailableError with its code', () => {
    expect(
      providerError(
        URI,
        errnoOf(() => lstatSync('/nonexistent/reservoir/path')),
      ),
    ).toBeInstanceOf(NotFoundError);
    const denied = providerError(
      URI,
      Object.assign(new Error('denied'), { code: 'EACCES', errno: -13 }),
    ) as UnavailableError;
    expect(denied).toBeInstanceOf(UnavailableError);
    expect(denied.message).toContain('permission denied');
    expect(
      (providerError(URI, Object.assign(new Error('io'), { code: 'EIO', errno: -5 })) as Error)
        .message,
    ).toContain('cannot be read (EIO)');
  });

  it('maps HTTP statuses: 404 not found, 403 access refused, 429 rate limiting, 5xx failed, each carrying the status', () => {
    expect(providerError(URI, httpStatusFailure(404))).toBeInstanceOf(NotFoundError);
    const refused = providerError(URI, httpStatusFailure(403)) as UnavailableError;
    expect(refused.message).toContain(
      "the upstream refused access (HTTP 403); check the source's credentials",
    );
    expect(refused.data).toMatchObject({ uri: URI, status: 403 });
    expect((providerError(URI, httpStatusFailure(429)) as Error).message).toContain(
      'rate limiting requests (HTTP 429)',
    );
    expect((providerError(URI, httpStatusFailure(502)) as Error).message).toContain(
      'the upstream failed (HTTP 502)',
    );
  });

  it('maps AWS SDK errors: NoSuchKey not found, AccessDenied and throttling unavailable with the reason', () => {
    const classify = (e: unknown): ProviderFailure | undefined => awsFailure(e, 'S3');
    expect(providerError(URI, aws('NoSuchKey', 404), { classify })).toBeInstanceOf(NotFoundError);
    expect((providerError(URI, aws('NoSuchBucket', 404), { classify }) as Error).message).toContain(
      'the bucket does not exist',
    );
    expect((providerError(URI, aws('AccessDenied', 403), { classify }) as Error).message).toContain(
      'access denied by S3 (AccessDenied)',
    );
    expect((providerError(URI, aws('SlowDown', 503), { classify }) as Error).message).toContain(
      'S3 is throttling requests',
    );
  });

  it('gives a provider-classified timeout, refusal or invalid input its own typed error', () => {
    const timeout = providerError(
      URI,
      new ProviderFailure('timeout', 'ran past 5 ms', { data: { timeoutMs: 5 } }),
    ) as ReservoirError;
    expect(timeout).toMatchObject({
      code: 'timeout',
      message: 'ran past 5 ms',
      data: { uri: URI, timeoutMs: 5 },
    });
    const refused = providerError(
      URI,
      new ProviderFailure('refused', 'refused by the database: read-only'),
      { argument: 'sql' },
    );
    expect(refused).toBeInstanceOf(InvalidArgumentError);
    expect((refused as InvalidArgumentError).message).toContain(
      'refused by the database: read-only',
    );
  });

  it('passes Reservoir errors, aborts and unknown errors through unchanged', () => {
    const typed = new NotFoundError('x://other');
    expect(providerError(URI, typed)).toBe(typed);
    const abort = Object.assign(new Error('aborted'), { name: 'AbortError' });
    expect(providerError(URI, abort)).toBe(abort);
    const plain = new TypeError('a bug');
    expect(providerError(URI, plain)).toBe(plain);
  });
});
