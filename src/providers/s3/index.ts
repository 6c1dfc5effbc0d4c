/**
 * The S3 provider: one bucket (or one key prefix of it) as `s3://BUCKET/KEY` resources, on
 * `@aws-sdk/client-s3`, for AWS S3 and S3-compatible stores (MinIO, Ceph, R2: `endpoint` +
 * `forcePathStyle`).
 *
 * - List: ListObjectsV2 in key order; the registry's keyset cursor is the last key, resumed with
 *   the continuation token S3 gave for it (remembered for recent pages) or `StartAfter`.
 * - Read: an object up to the read cap (one ranged GET: the size is learnt from its answer), text
 *   or blob by the shared content rules; a larger object is TooLargeError, to be read by range with
 *   the template `…{?bytes}` (`?bytes=START-END`, inclusive, bounded by the same cap). A URI ending
 *   in '/' reads that prefix: one JSON text listing (`inode/directory`, as the files provider),
 *   at most 1,000 entries, each judged by `ctx.allows`. `readDirectory` pages a prefix's
 *   children for `resources/directory/read` and skills catalogs (see directory.ts).
 * - size, lastModified in the listing; the ETag in its description.
 * - Completion of the key by prefix, with the '/' delimiter.
 * - Subscriptions poll only the prefixes someone watches (see watch.ts); `onChanges` (a skills
 *   catalog, the search index) polls the whole source prefix, bounded (see changes.ts).
 */
import type { _Object, ListObjectsV2CommandOutput } from '@aws-sdk/client-s3';
import { InvalidArgumentError, NotFoundError, UnavailableError } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import type {
  CallContext,
  Completion,
  Provider,
  ReadResult,
  ResourceInfo,
  ResourceTemplate,
} from '../../core/types.js';
import { mimeFromName, toContents } from '../utils/content.js';
import { byteSpan } from '../utils/ranges.js';
import { limitFor, readLimits, tooLarge } from '../utils/read-limit.js';
import { UNKNOWN_KEYS_TAG } from '../utils/options.js';
import {
  encodeKey,
  isAddressableKey,
  keyUri,
  parseS3Uri,
  rootUri,
  type S3Target,
} from './address.js';
import { createS3Client, translateS3Error } from './client.js';
import {
  DEFAULT_MAX_POLL_REQUESTS,
  DEFAULT_MAX_READ_BYTES,
  DEFAULT_POLL_INTERVAL_MS,
  s3SourceOptions,
  type S3SourceOptions,
} from './options.js';
import { s3ChangeFeed } from './changes.js';
import { s3DirectoryReader } from './directory.js';
import { S3Watches } from './watch.js';
import { definedProps } from '../../core/defined.js';

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

/** Most entries a directory-style read lists. */
export const MAX_DIRECTORY_ENTRIES = 1000;
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
  const s3 = createS3Client(options);
  const tokens = new Map<string, string>();

  async function listPage(
    params: {
      prefix: string;
      delimiter?: string;
      maxKeys: number;
      after?: string | undefined;
      token?: string | undefined;
    },
    uri: string,
    signal?: AbortSignal,
  ): Promise<ListObjectsV2CommandOutput> {
    try {
      const { sdk, client } = await s3.get();
      return await client.send(
        new sdk.ListObjectsV2Command({
          Bucket: bucket,
          Prefix: params.prefix,
          MaxKeys: params.maxKeys,
          ...definedProps({ Delimiter: params.delimiter }),
          ...(params.token !== undefined
            ? { ContinuationToken: params.token }
            : params.after !== undefined
              ? { StartAfter: params.after }
              : {}),
        }),
        definedProps({ abortSignal: signal }),
      );
    } catch (error) {
      throw translateS3Error(uri, error);
    }
  }

  const pageDirectory = s3DirectoryReader(bucket, prefix, listPage);

  /** Every key under `dir` (no delimiter: the whole tree) with its ETag, in at most `maxRequests` requests. */
  async function listEtags(
    dir: string,
    maxRequests: number,
  ): Promise<{ etags: Map<string, string>; complete: boolean }> {
    const etags = new Map<string, string>();
    let token: string | undefined;
    for (let request = 0; request < maxRequests; request++) {
      const page = await listPage({ prefix: dir, maxKeys: 1000, token }, keyUri(bucket, dir));
      for (const object of page.Contents ?? [])
        if (object.Key !== undefined)
          etags.set(
            object.Key,
            object.ETag ?? `${object.Size}:${object.LastModified?.toISOString()}`,
          );
      token = page.IsTruncated === true ? page.NextContinuationToken : undefined;
      if (token === undefined) return { etags, complete: true };
    }
    return { etags, complete: false };
  }

  const watches = new S3Watches({
    bucket,
    intervalMs: options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS,
    maxRequests: options.maxPollRequests ?? DEFAULT_MAX_POLL_REQUESTS,
    logger,
    list: async (dir, maxRequests) => {
      const etags = new Map<string, string>();
      let token: string | undefined;
      for (let request = 0; request < maxRequests; request++) {
        const page = await listPage(
          { prefix: dir, delimiter: '/', maxKeys: 1000, token },
          keyUri(bucket, dir),
        );
        for (const object of page.Contents ?? [])
          if (object.Key !== undefined)
            etags.set(
              object.Key,
              object.ETag ?? `${object.Size}:${object.LastModified?.toISOString()}`,
            );
        token = page.IsTruncated === true ? page.NextContinuationToken : undefined;
        if (token === undefined) return { etags, complete: true };
      }
      return { etags, complete: false };
    },
  });

  function info(object: _Object): ResourceInfo {
    const key = object.Key!;
    const directory = key.endsWith('/');
    const mimeType = directory ? 'inode/directory' : mimeFromName(key);
    return {
      uri: keyUri(bucket, key),
      name: key.slice(prefix.length) || key,
      ...definedProps({ mimeType }),
      ...(object.Size === undefined || directory ? {} : { size: object.Size }),
      ...(object.ETag === undefined ? {} : { description: `ETag ${object.ETag}` }),
      ...(object.LastModified === undefined
        ? {}
        : { annotations: { lastModified: object.LastModified.toISOString() } }),
    };
  }

  /** The target a URI names inside this source; NotFoundError outside its prefix. */
  function target(uri: string): S3Target {
    const parsed = parseS3Uri(bucket, uri);
    if (!parsed.key.startsWith(prefix)) throw new NotFoundError(uri);
    return parsed;
  }

  /** The object's size (HEAD); NotFoundError and the like under `uri`. */
  async function head(uri: string, key: string, signal?: AbortSignal): Promise<number> {
    try {
      const { sdk, client } = await s3.get();
      const answer = await client.send(
        new sdk.HeadObjectCommand({ Bucket: bucket, Key: key }),
        definedProps({ abortSignal: signal }),
      );
      return answer.ContentLength ?? 0;
    } catch (error) {
      throw translateS3Error(uri, error);
    }
  }

  async function getBytes(
    uri: string,
    key: string,
    range: string | undefined,
    signal: AbortSignal,
  ): Promise<{ bytes: Buffer; total: number | undefined }> {
    try {
      const { sdk, client } = await s3.get();
      const answer = await client.send(
        new sdk.GetObjectCommand({
          Bucket: bucket,
          Key: key,
          ...definedProps({ Range: range }),
        }),
        { abortSignal: signal },
      );
      const total = /\/(\d+)$/.exec(answer.ContentRange ?? '')?.[1];
      const bytes = Buffer.from((await answer.Body?.transformToByteArray()) ?? new Uint8Array());
      return { bytes, total: total === undefined ? undefined : Number(total) };
    } catch (error) {
      // An empty object has no byte 0: a ranged GET is refused (416); the object itself is empty.
      if (
        (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 416 &&
        range?.startsWith('bytes=0-') === true
      ) {
        await head(uri, key, signal);
        return { bytes: Buffer.alloc(0), total: 0 };
      }
      throw translateS3Error(uri, error);
    }
  }

  async function readDirectory(dir: string, ctx: CallContext): Promise<ReadResult> {
    const uri = keyUri(bucket, dir);
    const page = await listPage(
      { prefix: dir, delimiter: '/', maxKeys: MAX_DIRECTORY_ENTRIES },
      uri,
      ctx.signal,
    );
    const entries: { name: string; uri: string; kind: 'file' | 'directory'; size?: number }[] = [];
    for (const common of page.CommonPrefixes ?? []) {
      if (common.Prefix === undefined || !isAddressableKey(common.Prefix)) continue;
      entries.push({
        name: common.Prefix.slice(dir.length),
        uri: keyUri(bucket, common.Prefix),
        kind: 'directory',
      });
    }
    for (const object of page.Contents ?? []) {
      if (object.Key === undefined || object.Key === dir || !isAddressableKey(object.Key)) continue;
      entries.push({
        name: object.Key.slice(dir.length),
        uri: keyUri(bucket, object.Key),
        kind: 'file',
        ...definedProps({ size: object.Size }),
      });
    }
    if (entries.length === 0 && dir !== prefix && (page.Contents ?? []).length === 0)
      throw new NotFoundError(uri);
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const visible =
      ctx.allows === undefined
        ? entries
        : entries.filter((entry) => ctx.allows!('list', entry.uri, entry.kind === 'directory'));
    return { contents: [{ uri, mimeType: 'inode/directory', text: JSON.stringify(visible) }] };
  }

  async function readObject(uri: string, t: S3Target, ctx: CallContext): Promise<ReadResult> {
    const canonical = keyUri(bucket, t.key);
    const limits = readLimits(ctx, maxReadBytes);
    const mimeType = mimeFromName(t.key);
    if (t.range !== undefined) {
      // At most one byte past the cap is fetched: enough to tell a span over it, clamped to the
      // object's size (which the answer's Content-Range gives), from one within it.
      const cap = limits.blob;
      const { start } = t.range;
      const last = Math.min(t.range.end ?? Number.MAX_SAFE_INTEGER, start + cap);
      const asked = `${canonical}?bytes=${start}-${t.range.end ?? ''}`;
      const got = await getBytes(uri, t.key, `bytes=${start}-${last}`, ctx.signal).catch(
        async (error: unknown) => {
          // START past the end: refused like every source's, naming the size (HEAD learns it).
          if (!isUnsatisfiable(error)) throw error;
          return { bytes: Buffer.alloc(0), total: await head(uri, t.key, ctx.signal) };
        },
      );
      const total = got.total ?? start + got.bytes.length;
      const span = byteSpan(t.range, total, cap);
      if ('over' in span)
        throw tooLarge(asked, span.over, cap, { limits, mimeType, lines: false, measure: 'range' });
      return { contents: [toContents(asked, t.key, got.bytes.subarray(0, span.end - span.start))] };
    }
    const limit = limitFor(limits, mimeType);
    const { bytes, total } = await getBytes(uri, t.key, `bytes=0-${limit}`, ctx.signal);
    if ((total ?? bytes.length) > limit)
      throw tooLarge(canonical, total ?? bytes.length, limit, { limits, mimeType, lines: false });
    return { contents: [toContents(canonical, t.key, bytes)] };
  }

  async function completeKey(
    value: string,
    _context: Record<string, string>,
    ctx: CallContext,
  ): Promise<Completion> {
    let typed: string;
    try {
      typed = value
        .split('/')
        .map((segment) => decodeURIComponent(segment))
        .join('/');
    } catch {
      typed = value;
    }
    // The typed text becomes a list prefix and keeps the rule of keys, except that a last segment
    // of '.' or '..' is the start of a name still being typed ('.hidden', '..b').
    if (!isAddressableKey(typed.replace(/(^|[/\\])\.{1,2}$/, '$1')))
      return { values: [], total: 0, hasMore: false };
    const page = await listPage(
      { prefix: prefix + typed, delimiter: '/', maxKeys: 100 },
      root,
      ctx.signal,
    );
    const keys = [
      ...(page.CommonPrefixes ?? []).map((p) => p.Prefix!),
      ...(page.Contents ?? []).map((o) => o.Key!),
    ]
      .filter((key) => key !== undefined && isAddressableKey(key))
      .sort();
    const visible =
      ctx.allows === undefined
        ? keys
        : keys.filter((key) => ctx.allows!('list', keyUri(bucket, key), key.endsWith('/')));
    const values = visible.slice(0, 100).map((key) => encodeKey(key.slice(prefix.length)));
    return page.IsTruncated === true
      ? { values, hasMore: true }
      : { values, total: values.length, hasMore: false };
  }

  const templates: ResourceTemplate[] = [
    {
      uriTemplate: `${root}{+key}{?bytes}`,
      name: `${options.name ?? bucket}-range`,
      title: `Byte range of an object in s3://${bucket}/${prefix}`,
      description: `?bytes=START-END (inclusive byte offsets; START- reads to the read cap of ${maxReadBytes} bytes). For objects over the read cap.`,
      complete: { key: completeKey },
    },
  ];

  const provider: S3Provider = {
    name: `s3:${options.name ?? bucket}`,
    root,
    bucket,
    prefix,

    async list(after, limit, ctx) {
      const token = after === undefined ? undefined : tokens.get(after);
      const page = await listPage(
        { prefix, maxKeys: Math.max(1, Math.min(limit, 1000)), after, token },
        root,
        ctx.signal,
      );
      const items = (page.Contents ?? [])
        .filter((object) => object.Key !== undefined && isAddressableKey(object.Key))
        .map(info);
      const lastKey = page.Contents?.at(-1)?.Key;
      if (page.IsTruncated !== true || lastKey === undefined) return { items };
      if (page.NextContinuationToken !== undefined) {
        tokens.set(lastKey, page.NextContinuationToken);
        if (tokens.size > TOKENS_KEPT) tokens.delete(tokens.keys().next().value!);
      }
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
      return t.directory ? readDirectory(t.key, ctx) : readObject(uri, t, ctx);
    },

    async canonical(uri, ctx) {
      const t = target(uri);
      if (!t.directory) await head(uri, t.key, ctx.signal);
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
      await head(uri, t.key);
      return watches.watch(t.key, onChange);
    },

    onChanges(listener) {
      return s3ChangeFeed(
        {
          bucket,
          prefix,
          listAll: listEtags,
          intervalMs: options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS,
          maxRequests: options.maxPollRequests ?? DEFAULT_MAX_POLL_REQUESTS,
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
        if (
          (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404
        )
          throw new UnavailableError(root, 'the bucket does not exist', { cause: error });
        throw translateS3Error(root, error);
      }
    },

    watchedPrefixes: () => watches.prefixes,

    async close() {
      watches.close();
      s3.destroy();
    },
  };
  return provider;
}

function isUnsatisfiable(error: unknown): boolean {
  const cause = (error as { cause?: { $metadata?: { httpStatusCode?: number } } }).cause;
  return cause?.$metadata?.httpStatusCode === 416;
}
