/**
 * A tree of a git ref read as a directory (`resources/directory/read`, skills catalogs): its
 * children by name, keyset-paged. Files are listed as the provider lists them; symlinks and
 * submodules are named as `special` entries (never served: git stores a link as a blob of its
 * target's path, which the provider does not follow).
 */
import { NotFoundError } from '../../core/errors.js';
import type { CallContext, DirectoryEntry, DirectoryPage } from '../../core/types.js';
import { directoryEntry, fileEntry, specialEntry } from '../utils/directory-entry.js';
import { fileUri, isServablePath, parseGitDirectory } from './address.js';
import type { Repository } from './repo.js';

export async function readGitDirectory(
  repo: Repository,
  root: string,
  uri: string,
  after: string | undefined,
  limit: number,
  ctx: CallContext,
): Promise<DirectoryPage> {
  const { ref, refSegment, path } = parseGitDirectory(root, uri);
  const resolved = await repo.resolve(ref);
  if (resolved === undefined) throw new NotFoundError(uri);
  const tree = await repo.treeAt(resolved.commit, path);
  if (tree === undefined) throw new NotFoundError(uri);
  const children = (await repo.tree(tree))
    .filter((entry) => entry.valid)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const items: DirectoryEntry[] = [];
  for (const entry of children) {
    if (after !== undefined && entry.name <= after) continue;
    const childPath = path === '' ? entry.name : `${path}/${entry.name}`;
    if (!isServablePath(childPath)) continue;
    const fileRef = fileUri(root, refSegment, childPath);
    const child =
      entry.kind === 'tree'
        ? directoryEntry(entry.name, `${fileRef}/`)
        : entry.kind === 'file'
          ? fileEntry(entry.name, fileRef, await repo.blobSize(entry.id))
          : specialEntry(entry.name, fileRef, entry.kind === 'link');
    if (ctx.allows !== undefined && !ctx.allows('list', child.uri, child.kind === 'directory'))
      continue;
    if (items.length === limit) return { items, last: items[items.length - 1]!.name };
    items.push(child);
  }
  return { items };
}
