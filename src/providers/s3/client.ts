/**
 * The S3 client of one source, and what its failures mean to a caller. The endpoint passes the
 * outbound address rules (src/providers/utils/address.ts) at connection time — DNS answers through
 * `guardedLookup`, IP literals through `checkLiteralHost` — unless the source allows private
 * networks. Credentials come from the options or the standard AWS chain and are never logged: the
 * SDK's own logger is off, and errors are translated to messages that name only the bucket and key.
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type * as AwsS3 from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import { addressPolicy, checkLiteralHost, guardedLookup } from '../utils/address.js';
import { awsFailure, isAwsThrottled, providerError } from '../utils/errors.js';
import { definedProps } from '../../core/defined.js';
import { DEFAULT_TIMEOUT_MS, type ParsedS3SourceOptions } from './options.js';

/** The AWS SDK's S3 module: its commands are built with the client it was loaded with. */
export type S3Sdk = typeof AwsS3;

/**
 * One source's client, loaded (with the AWS SDK) when the source is built, so importing the
 * provider — the package's bare import — loads no AWS code. A bad endpoint is refused when it is created.
 */
export interface LazyS3Client {
  /** The SDK and the client, loaded once. */
  get(): Promise<{ sdk: S3Sdk; client: S3Client }>;
  /** Closes the client's sockets, if it was ever loaded. */
  destroy(): void;
}

export function createS3Client(options: ParsedS3SourceOptions): LazyS3Client {
  const policy = addressPolicy(
    options.allowPrivateNetworks === true,
    options.allowedNetworks ?? [],
  );
  if (options.endpoint !== undefined) checkLiteralHost(policy, new URL(options.endpoint).hostname);
  let loaded: Promise<{ sdk: S3Sdk; client: S3Client }> | undefined;
  let client: S3Client | undefined;
  let destroyed = false;
  const handle: LazyS3Client = {
    get() {
      loaded ??= import('@aws-sdk/client-s3').then((sdk) => {
        client = clientOf(sdk, options, policy);
        if (destroyed) client.destroy();
        return { sdk, client };
      });
      return loaded;
    },
    destroy() {
      destroyed = true;
      client?.destroy();
    },
  };
  // Loading starts now, when a source is built, not at the first call: the SDK takes seconds to
  // load on a busy machine, which would spend the first list page's budget for this source (it was
  // skipped from the first page). A failure reaches the first call that awaits it.
  handle.get().catch(() => undefined);
  return handle;
}

function clientOf(
  sdk: S3Sdk,
  options: ParsedS3SourceOptions,
  policy: ReturnType<typeof addressPolicy>,
): S3Client {
  const lookup = guardedLookup(policy);
  const timeout = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const client = new sdk.S3Client({
    region: options.region ?? process.env['AWS_REGION'] ?? 'us-east-1',
    ...definedProps({
      endpoint: options.endpoint,
      forcePathStyle: options.forcePathStyle,
      credentials: credentialsOf(options),
    }),
    maxAttempts: 2,
    requestHandler: {
      httpAgent: new HttpAgent({ keepAlive: true, lookup }),
      httpsAgent: new HttpsAgent({ keepAlive: true, lookup }),
      connectionTimeout: timeout,
      requestTimeout: timeout,
      // Without it a request past requestTimeout is only warned about (on the console) and waits on:
      // an endpoint that accepts the connection and never answers would hold the read to its deadline.
      throwOnRequestTimeout: true,
    },
  });
  // The SDK's logger is off (none is given), yet its logging middleware copies every answer through
  // the schema's sensitive-data filter before handing it to the no-op logger: a fifth of a listing
  // page's deserialising cost, for nothing.
  client.middlewareStack.remove('loggerMiddleware');
  return client;
}

/** The key pair the options give, or undefined: the standard AWS chain finds one. */
function credentialsOf(
  options: ParsedS3SourceOptions,
): { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | undefined {
  const { accessKeyId, secretAccessKey, sessionToken } = options;
  if (accessKeyId === undefined || secretAccessKey === undefined) return undefined;
  return { accessKeyId, secretAccessKey, ...definedProps({ sessionToken }) };
}

/** Whether a failure is S3 saying "slow down" (throttling), which the poller backs off from. */
export const isThrottled = isAwsThrottled;

/** The Reservoir error a failed S3 call on `uri` means to the caller (see utils/errors.ts). */
export function translateS3Error(uri: string, error: unknown): Error {
  return providerError(uri, error, { classify: (e) => awsFailure(e, 'S3') }) as Error;
}
