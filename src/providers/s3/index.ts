/**
 * The S3 provider: one bucket (or one key prefix of it) as `s3://BUCKET/KEY` resources, on
 * `@aws-sdk/client-s3`, for AWS S3 and S3-compatible stores (MinIO, Ceph, R2: `endpoint` +
 * `forcePathStyle`).
 *
 * - List: ListObjectsV2 in key order (listing.ts); the registry's keyset cursor is the last key,
 *   resumed with the continuation token S3 gave for it (remembered for recent pages) or `StartAfter`;
 *   a client paging through has its next page read ahead (read-ahead.ts).
 * - Read: an object up to the read cap, or a byte range of it with the template `…{?bytes}`
 *   (object-read.ts). A URI ending in '/' reads that prefix as one JSON text listing
 *   (prefix-read.ts); `readDirectory` pages a prefix's children for `resources/directory/read`
 *   and skills catalogs (directory.ts).
 * - size, lastModified in the listing; the ETag in its description.
 * - Completion of the key by prefix, with the '/' delimiter (key-completion.ts).
 * - Subscriptions poll only the prefixes someone watches (see watch.ts); `onChanges` (a skills
 *   catalog, the search index) polls the whole source prefix, bounded (see changes.ts).
 */
import { InvalidArgumentError, NotFoundError, UnavailableError } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import type { CallContext, Provider, ResourceTemplate } from '../../core/types.js';
import { UNKNOWN_KEYS_TAG } from '../utils/options.js';
import { isAddressableKey, keyUri, parseS3Uri, rootUri, type S3Target } from './address.js';
import { s3ChangeFeed } from './changes.js';
import { createS3Client, translateS3Error } from './client.js';
import { s3DirectoryReader } from './directory.js';
import { keyCompletion } from './key-completion.js';
import { objectInfo, s3Lister } from './listing.js';
import { httpStatus, s3ObjectReader } from './object-read.js';
import {
  DEFAULT_MAX_POLL_REQUESTS,
  DEFAULT_MAX_READ_BYTES,
  DEFAULT_POLL_INTERVAL_MS,
  s3SourceOptions,
  type S3SourceOptions,
} from './options.js';
import { readPrefix } from './prefix-read.js';
import { ListReadAhead } from './read-ahead.js';
import { S3Watches } from './watch.js';

export type { S3SourceOptions } from './options.js';

export interface S3Options extends S3SourceOptions {
  logger?: Logger | undefined;
}

export interface S3Provider extends Provider {
  readonly bucket: string;
  readonly prefix: string;
  /** Prefixes polled for subscriptions now. */
  watchedPrefixes(): number;
  canonical(uri: string, ctx: CallContext): Promise<string>;
  isValidKey(key: string): boolean;
  templates(): ResourceTemplate[];
  readDirectory: NonNullable<Provider['readDirectory']>;
  watch(uri: string, onChange: () => void): Promise<() => void>;
  ready(): Promise<void>;
  close(): Promise<void>;
}

/** Continuation tokens remembered, by the last key of their page. */
const TOKENS_KEPT = 256;

export function s3Provider(input: S3Options): S3Provider {
  const { logger, ...rest } = input;
  const parsed = s3SourceOptions.safeParse(rest);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    if (issue.code === 'unrecognized_keys') {
      throw new InvalidArgumentError(
        'options',
        `unknown option ${issue.keys.map((key) => `'${key}'`).join(', ')}; known: ${issue.message.slice(UNKNOWN_KEYS_TAG.length)}`,
      );
    }
    throw new InvalidArgumentError(issue.path.join('.') || 'options', issue.message);
  }
  const options = parsed.data;
  const { bucket } = options;
  const prefix = options.prefix ?? '';
  const root = rootUri(bucket, prefix);
  const maxReadBytes = options.maxReadBytes ?? DEFAULT_MAX_READ_BYTES;
  const intervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
  const maxRequests = options.maxPollRequests ?? DEFAULT_MAX_POLL_REQUESTS;
  const s3 = createS3Client(options);
  const { listPage, listEtags } = s3Lister(bucket, s3);
  const objects = s3ObjectReader(bucket, s3, maxReadBytes);
  const pageDirectory = s3DirectoryReader(bucket, prefix, listPage);
  const tokens = new Map<string, string>();
  const ahead = new ListReadAhead(listPage);

  const watches = new S3Watches({
    bucket,
    intervalMs,
    maxRequests,
    logger,
    // the keys directly under the watched key's prefix
    list: (dir, requests) => listEtags(dir, requests, '/'),
  });

  /** The target a URI names inside this source; NotFoundError outside its prefix. */
  function target(uri: string): S3Target {
    const parsed = parseS3Uri(bucket, uri);
    if (!parsed.key.startsWith(prefix)) throw new NotFoundError(uri);
    return parsed;
  }

  const templates: ResourceTemplate[] = [
    {
      uriTemplate: `${root}{+key}{?bytes}`,
      name: `${options.name ?? bucket}-range`,
      title: `Byte range of an object in s3://${bucket}/${prefix}`,
      description: `?bytes=START-END (inclusive byte offsets; START- reads to the read cap of ${maxReadBytes} bytes). For objects over the read cap.`,
      complete: { key: keyCompletion({ bucket, prefix, root, listPage }) },
    },
  ];

  const provider: S3Provider = {
    name: `s3:${options.name ?? bucket}`,
    root,
    bucket,
    prefix,

    async list(after, limit, ctx) {
      const maxKeys = Math.max(1, Math.min(limit, 1000));
      const token = after === undefined ? undefined : tokens.get(after);
      const page =
        (after === undefined ? undefined : await ahead.take(after, maxKeys, ctx.signal)) ??
        (await listPage({ prefix, maxKeys, after, token }, root, ctx.signal));
      const items = (page.Contents ?? [])
        .filter((object) => object.Key !== undefined && isAddressableKey(object.Key))
        .map((object) => objectInfo(bucket, prefix, object));
      const lastKey = page.Contents?.at(-1)?.Key;
      if (page.IsTruncated !== true || lastKey === undefined) return { items };
      if (page.NextContinuationToken !== undefined) {
        tokens.set(lastKey, page.NextContinuationToken);
        if (tokens.size > TOKENS_KEPT) tokens.delete(tokens.keys().next().value!);
      }
      // A client past its first page is paging through: its next page is asked for now.
      ahead.answered(after, lastKey, page.NextContinuationToken, { prefix, maxKeys }, root);
      return { items, last: lastKey };
    },

    isValidKey(key) {
      // Keys S3 can hold: 1-1024 bytes of UTF-8, without NUL; under this source's prefix.
      return (
        key.length > 0 &&
        key.startsWith(prefix) &&
        !key.includes('\0') &&
        Buffer.byteLength(key) <= 1024 &&
        !/[\uD800-\uDFFF]/.test(key.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, ''))
      );
    },

    async read(uri, ctx) {
      const t = target(uri);
      return t.directory
        ? readPrefix({ bucket, prefix, listPage }, t.key, ctx)
        : objects.read(uri, t, ctx);
    },

    async canonical(uri, ctx) {
      const t = target(uri);
      if (!t.directory) await objects.head(uri, t.key, ctx.signal);
      return keyUri(bucket, t.key);
    },

    templates: () => templates,

    async readDirectory(uri, after, limit, ctx) {
      const t = target(uri);
      if (!t.directory || t.range !== undefined) throw new NotFoundError(uri);
      return pageDirectory(t.key, after, limit, ctx);
    },

    async watch(uri, onChange) {
      const t = target(uri);
      if (t.directory)
        throw new InvalidArgumentError(
          'uri',
          'subscribe to an object; a prefix (a URI ending in /) cannot be watched',
          { uri },
        );
      await objects.head(uri, t.key);
      return watches.watch(t.key, onChange);
    },

    onChanges(listener) {
      return s3ChangeFeed(
        // the whole tree under the source's prefix
        {
          bucket,
          prefix,
          listAll: (dir, requests) => listEtags(dir, requests),
          intervalMs,
          maxRequests,
          logger,
        },
        listener,
      );
    },

    async ready() {
      try {
        const { sdk, client } = await s3.get();
        await client.send(new sdk.HeadBucketCommand({ Bucket: bucket }));
      } catch (error) {
        // HeadBucket answers without a body: a missing bucket is a bare 404.
        if (httpStatus(error) === 404)
          throw new UnavailableError(root, 'the bucket does not exist', { cause: error });
        throw translateS3Error(root, error);
      }
    },

    watchedPrefixes: () => watches.prefixes,

    async close() {
      ahead.close();
      watches.close();
      s3.destroy();
    },
  };
  return provider;
}
