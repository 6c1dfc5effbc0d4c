/**
 * Listing an S3 source's keys: one ListObjectsV2 page (resumed by continuation token or
 * `StartAfter`), every key under a prefix with its ETag in a bounded number of requests (what the
 * watches and the change feed compare), and an object as the resource a listing shows.
 */
import type { _Object, ListObjectsV2CommandOutput } from '@aws-sdk/client-s3';
import { definedProps } from '../../core/defined.js';
import type { ResourceInfo } from '../../core/types.js';
import { mimeFromName } from '../utils/content.js';
import { keyUri } from './address.js';
import { translateS3Error, type LazyS3Client } from './client.js';

export interface ListParams {
  prefix: string;
  delimiter?: string | undefined;
  maxKeys: number;
  /** The key to list after (when there is no token). */
  after?: string | undefined;
  /** The continuation token S3 gave for the previous page; wins over `after`. */
  token?: string | undefined;
}

/** One ListObjectsV2 page; failures are translated for `uri`. */
export type ListPage = (
  params: ListParams,
  uri: string,
  signal?: AbortSignal,
) => Promise<ListObjectsV2CommandOutput>;

/** Keys under a prefix with their ETags; `complete` false when the request bound cut it short. */
export interface EtagListing {
  etags: Map<string, string>;
  complete: boolean;
}

export interface S3Lister {
  listPage: ListPage;
  /**
   * Every key under `dir` with its ETag (size and time when a store gives none), in at most
   * `maxRequests` requests: the whole tree, or with `delimiter` '/' the keys directly under it.
   */
  listEtags(dir: string, maxRequests: number, delimiter?: string): Promise<EtagListing>;
}

export function s3Lister(bucket: string, s3: LazyS3Client): S3Lister {
  const listPage: ListPage = async (params, uri, signal) => {
    try {
      const { sdk, client } = await s3.get();
      return await client.send(
        new sdk.ListObjectsV2Command({
          Bucket: bucket,
          Prefix: params.prefix,
          MaxKeys: params.maxKeys,
          ...definedProps({
            Delimiter: params.delimiter,
            ContinuationToken: params.token,
            StartAfter: params.token === undefined ? params.after : undefined,
          }),
        }),
        definedProps({ abortSignal: signal }),
      );
    } catch (error) {
      throw translateS3Error(uri, error);
    }
  };

  const listEtags = async (
    dir: string,
    maxRequests: number,
    delimiter?: string,
  ): Promise<EtagListing> => {
    const etags = new Map<string, string>();
    let token: string | undefined;
    for (let request = 0; request < maxRequests; request++) {
      const page = await listPage(
        { prefix: dir, delimiter, maxKeys: 1000, token },
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
  };

  return { listPage, listEtags };
}

/** Adds what a listing says of an object beside its name to `info`: its ETag, when it last changed. */
export function addObjectFacts<T extends ResourceInfo>(info: T, object: _Object): T {
  if (object.ETag !== undefined) info.description = `ETag ${object.ETag}`;
  if (object.LastModified !== undefined)
    info.annotations = { lastModified: object.LastModified.toISOString() };
  return info;
}

/**
 * An object (or a directory marker, a key ending in '/') as the resource a listing shows. Built
 * field by field, in the order the answer shows them: a listing page makes a thousand of these.
 */
export function objectInfo(bucket: string, prefix: string, object: _Object): ResourceInfo {
  const key = object.Key!;
  const directory = key.endsWith('/');
  const info: ResourceInfo = { uri: keyUri(bucket, key), name: key.slice(prefix.length) || key };
  const mimeType = directory ? 'inode/directory' : mimeFromName(key);
  if (mimeType !== undefined) info.mimeType = mimeType;
  if (!directory && object.Size !== undefined) info.size = object.Size;
  return addObjectFacts(info, object);
}
