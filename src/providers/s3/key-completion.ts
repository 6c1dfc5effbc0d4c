/**
 * Completion of an s3:// template's `key` by prefix: one ListObjectsV2 request with the '/'
 * delimiter under the typed text, at most 100 keys and prefixes (each judged by `ctx.allows`),
 * URI-encoded relative to the source's prefix.
 */
import type { CallContext, Completion } from '../../core/types.js';
import { encodeKey, isAddressableKey, keyUri } from './address.js';
import type { ListPage } from './listing.js';

export type CompleteKey = (
  value: string,
  context: Record<string, string>,
  ctx: CallContext,
) => Promise<Completion>;

export function keyCompletion(source: {
  bucket: string;
  prefix: string;
  root: string;
  listPage: ListPage;
}): CompleteKey {
  const { bucket, prefix, root, listPage } = source;
  return async (value, _context, ctx) => {
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
  };
}
