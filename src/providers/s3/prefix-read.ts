/**
 * Reading an s3:// URI that ends in '/': the prefix's children as one JSON text listing
 * (`inode/directory`, as the files provider), at most MAX_DIRECTORY_ENTRIES of them, each judged
 * by `ctx.allows`. (`readDirectory`, which pages them, is directory.ts.)
 */
import { NotFoundError } from '../../core/errors.js';
import { definedProps } from '../../core/defined.js';
import type { CallContext, ReadResult } from '../../core/types.js';
import { isAddressableKey, keyUri } from './address.js';
import type { ListPage } from './listing.js';

/** Most entries a directory-style read lists. */
export const MAX_DIRECTORY_ENTRIES = 1000;

interface Entry {
  name: string;
  uri: string;
  kind: 'file' | 'directory';
  size?: number;
}

/** The listing of `dir`; NotFoundError when it holds nothing and is not the source's own prefix. */
export async function readPrefix(
  source: { bucket: string; prefix: string; listPage: ListPage },
  dir: string,
  ctx: CallContext,
): Promise<ReadResult> {
  const { bucket, prefix, listPage } = source;
  const uri = keyUri(bucket, dir);
  const page = await listPage(
    { prefix: dir, delimiter: '/', maxKeys: MAX_DIRECTORY_ENTRIES },
    uri,
    ctx.signal,
  );
  const entries: Entry[] = [];
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
