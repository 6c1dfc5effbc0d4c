/**
 * `onChanges` for an S3 source (what a skills catalog over a bucket follows): S3 tells no one of a
 * change, so the source's whole prefix is listed (no delimiter) every poll interval — at most
 * `maxRequests` ListObjectsV2 requests of 1,000 keys per poll — and each key's ETag compared with
 * the previous poll's. A key added, changed or gone is reported by its URI. When the bound cuts a
 * listing short, the keys past it are unknown, not gone. Failures back off (utils/poller.ts).
 */
import type { Logger } from '../../core/log.js';
import type { ResourceChange } from '../../core/types.js';
import { Poller } from '../utils/poller.js';
import { isAddressableKey, keyUri } from './address.js';
import type { ListPrefix } from './watch.js';

export interface ChangeFeedOptions {
  bucket: string;
  /** The source's prefix ('' for the whole bucket). */
  prefix: string;
  /** Lists every key under a prefix (no delimiter) with its ETag, bounded by `maxRequests`. */
  listAll: ListPrefix;
  intervalMs: number;
  maxRequests: number;
  logger?: Logger | undefined;
}

/** Starts following the prefix; resolves, once the first listing is in, with the function that stops it. */
export async function s3ChangeFeed(
  options: ChangeFeedOptions,
  listener: (changes: ResourceChange[]) => void,
): Promise<() => void> {
  const { bucket, prefix, listAll, intervalMs, maxRequests, logger } = options;
  let previous = (await listAll(prefix, maxRequests)).etags;
  const poller = new Poller({
    intervalMs,
    check: async () => {
      const { etags, complete } = await listAll(prefix, maxRequests);
      const changes: ResourceChange[] = [];
      for (const [key, etag] of etags)
        if (previous.get(key) !== etag && isAddressableKey(key))
          changes.push({ uri: keyUri(bucket, key) });
      if (complete)
        for (const key of previous.keys())
          if (!etags.has(key) && isAddressableKey(key)) changes.push({ uri: keyUri(bucket, key) });
      // Keys past the bound of an incomplete listing keep their last known ETag.
      if (!complete) for (const [key, etag] of previous) if (!etags.has(key)) etags.set(key, etag);
      previous = etags;
      if (changes.length > 0) listener(changes);
    },
    onError: (error, nextInMs) =>
      logger?.warn({ err: error, bucket, prefix, nextInMs }, 's3 change poll failed; backing off'),
  });
  return () => poller.stop();
}
