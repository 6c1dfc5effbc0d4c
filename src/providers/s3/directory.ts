/**
 * `readDirectory` for s3:// prefixes: the children of a prefix, one ListObjectsV2 request with the
 * '/' delimiter per page, in S3's key order (UTF-8 bytes). A child prefix is a directory named
 * without its '/', an object a file with its size, MIME type, ETag and modification time.
 *
 * The position a page ends at (`last`) is the child's name as it sits in the key — with its '/'
 * for a prefix — so it sorts as S3 sorts. The next page resumes with the continuation token S3
 * gave for that position (remembered for recent pages) or, for a cursor older than those, with
 * `StartAfter` and the children up to the position skipped (S3 may name the prefix holding
 * `StartAfter` again). A store answering more children than asked (s3rver counts no prefixes) has
 * its page cut at the limit, the rest read again from `StartAfter`. A page can come back short, even empty, when children are left out (keys
 * a URI cannot name, the prefix's own marker object, children the access rules hide).
 */
import type { _Object, CommonPrefix } from '@aws-sdk/client-s3';
import { NotFoundError } from '../../core/errors.js';
import type { CallContext, DirectoryEntry, DirectoryPage } from '../../core/types.js';
import { mimeFromName } from '../utils/content.js';
import { definedProps } from '../../core/defined.js';
import { isAddressableKey, keyUri } from './address.js';
import { addObjectFacts, type ListPage } from './listing.js';

/** Continuation tokens remembered, by directory and position. */
const TOKENS_KEPT = 256;

export type ReadS3Directory = (
  dir: string,
  after: string | undefined,
  limit: number,
  ctx: CallContext,
) => Promise<DirectoryPage>;

/** The directory reader of one bucket; `root` is the source's own prefix (it exists even when empty). */
export function s3DirectoryReader(
  bucket: string,
  root: string,
  listPage: ListPage,
): ReadS3Directory {
  const tokens = new Map<string, string>();

  return async (dir, after, limit, ctx) => {
    const uri = keyUri(bucket, dir);
    const remembered = after === undefined ? undefined : tokens.get(`${dir}\0${after}`);
    const answer = await listPage(
      {
        prefix: dir,
        delimiter: '/',
        maxKeys: Math.max(1, Math.min(limit, 1000)),
        // the remembered token when there is one, else StartAfter
        token: remembered,
        after: after === undefined ? undefined : dir + after,
      },
      uri,
      ctx.signal,
    );
    const children = merged(answer.Contents ?? [], answer.CommonPrefixes ?? []);
    if (after === undefined && dir !== root && children.length === 0) throw new NotFoundError(uri);
    const items: DirectoryEntry[] = [];
    let position: string | undefined;
    let cut = false;
    for (const child of children) {
      const name = child.key.slice(dir.length);
      // A child at or before the position: S3 names the prefix holding `StartAfter` again, and
      // some S3-compatible stores continue a token after the last object, not the last prefix.
      if (after !== undefined && compareKeys(name, after) <= 0) continue;
      // Some stores answer more than MaxKeys children (prefixes uncounted): the page ends here.
      if (items.length === limit) {
        cut = true;
        break;
      }
      position = name;
      if (name === '' || !isAddressableKey(child.key)) continue;
      const entry =
        child.object === undefined
          ? prefixEntry(bucket, child.key, name)
          : objectEntry(bucket, child.object, name);
      if (ctx.allows !== undefined && !ctx.allows('list', entry.uri, entry.kind === 'directory'))
        continue;
      items.push(entry);
    }
    // The next page resumes after the last child examined (by StartAfter when the page was cut here).
    const last = position ?? after;
    if (cut) return { items, last: last! };
    if (answer.IsTruncated !== true || last === undefined) return { items };
    if (answer.NextContinuationToken !== undefined) {
      tokens.set(`${dir}\0${last}`, answer.NextContinuationToken);
      if (tokens.size > TOKENS_KEPT) tokens.delete(tokens.keys().next().value!);
    }
    return { items, last };
  };
}

interface Child {
  key: string;
  object?: _Object;
}

/** Objects and common prefixes in one list, in S3's key order. */
function merged(objects: readonly _Object[], prefixes: readonly CommonPrefix[]): Child[] {
  const children: Child[] = [];
  for (const object of objects)
    if (object.Key !== undefined) children.push({ key: object.Key, object });
  for (const prefix of prefixes)
    if (prefix.Prefix !== undefined) children.push({ key: prefix.Prefix });
  return children.sort((a, b) => compareKeys(a.key, b.key));
}

/** S3's key order: by UTF-8 bytes (JavaScript's string order differs past U+D7FF). */
function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

function prefixEntry(bucket: string, key: string, name: string): DirectoryEntry {
  return {
    uri: keyUri(bucket, key),
    name: name.slice(0, -1),
    kind: 'directory',
    mimeType: 'inode/directory',
  };
}

function objectEntry(bucket: string, object: _Object, name: string): DirectoryEntry {
  const mimeType = mimeFromName(name);
  return addObjectFacts<DirectoryEntry>(
    {
      uri: keyUri(bucket, object.Key!),
      name,
      kind: 'file',
      ...definedProps({ mimeType, size: object.Size }),
    },
    object,
  );
}
