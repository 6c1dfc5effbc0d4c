/**
 * Reading one S3 object: up to the read cap in one ranged GET (the size is learnt from its answer),
 * text or blob by the shared content rules, a larger object refused with TooLargeError; or a byte
 * range (`?bytes=START-END`, inclusive) bounded by the same cap. HEAD answers whether an object
 * exists and its size.
 */
import { definedProps } from '../../core/defined.js';
import type { CallContext, ReadResult } from '../../core/types.js';
import { mimeFromName, toContents } from '../utils/content.js';
import { byteSpan } from '../utils/ranges.js';
import { limitFor, readLimits, tooLarge } from '../utils/read-limit.js';
import { keyUri, type S3Target } from './address.js';
import { translateS3Error, type LazyS3Client } from './client.js';

export interface S3ObjectReader {
  /** The object's size (HEAD); NotFoundError and the like under `uri`. */
  head(uri: string, key: string, signal?: AbortSignal): Promise<number>;
  /** The object `target` names, or the range of it its `?bytes=` asks for. */
  read(uri: string, target: S3Target, ctx: CallContext): Promise<ReadResult>;
}

export function s3ObjectReader(
  bucket: string,
  s3: LazyS3Client,
  maxReadBytes: number,
): S3ObjectReader {
  const head = async (uri: string, key: string, signal?: AbortSignal): Promise<number> => {
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
  };

  const getBytes = async (
    uri: string,
    key: string,
    range: string,
    signal: AbortSignal,
  ): Promise<{ bytes: Buffer; total: number | undefined }> => {
    try {
      const { sdk, client } = await s3.get();
      const answer = await client.send(
        new sdk.GetObjectCommand({ Bucket: bucket, Key: key, Range: range }),
        { abortSignal: signal },
      );
      const total = /\/(\d+)$/.exec(answer.ContentRange ?? '')?.[1];
      const bytes = Buffer.from((await answer.Body?.transformToByteArray()) ?? new Uint8Array());
      return { bytes, total: total === undefined ? undefined : Number(total) };
    } catch (error) {
      // An empty object has no byte 0: a ranged GET is refused (416); the object itself is empty.
      if (httpStatus(error) === 416 && range.startsWith('bytes=0-')) {
        await head(uri, key, signal);
        return { bytes: Buffer.alloc(0), total: 0 };
      }
      throw translateS3Error(uri, error);
    }
  };

  const read = async (uri: string, t: S3Target, ctx: CallContext): Promise<ReadResult> => {
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
  };

  return { head, read };
}

/** The HTTP status of a failed S3 call, as the SDK reports it. */
export function httpStatus(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}

/** A translated failure whose S3 answer was 416 (the range starts past the end). */
function isUnsatisfiable(error: unknown): boolean {
  return httpStatus((error as { cause?: unknown }).cause ?? {}) === 416;
}
