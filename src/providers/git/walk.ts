/**
 * Keyset listing of a commit's tree. The order is git's own: a depth-first walk of each tree's
 * entries as stored (sorted by name bytes, a directory as if its name ended in '/'), which is the
 * byte order of full paths. A key is the path of the last entry examined; a key ending in '/' names
 * a directory whose whole subtree was walked. A page resumes by descending along the key's own
 * path, reading only the trees on the way: its cost is the page plus those trees, never the files
 * before it. Trees are immutable and cached, so paging a large tree reads each tree once.
 *
 * Listed: regular files (modes 100644 and 100755) whose path is servable (isServablePath) and
 * valid UTF-8. Symbolic links, submodules and anything else are left out.
 */
import { isServablePath } from './address.js';
import type { TreeEntry } from './objects.js';
import type { Repository } from './repo.js';

/** Deeper trees are not walked. */
export const MAX_DEPTH = 256;
/** Longest key accepted from a cursor. */
const MAX_KEY_LENGTH = 32_768;

export interface ListedFile {
  path: string;
  entry: TreeEntry;
}

export interface TreePage {
  files: ListedFile[];
  last?: string;
}

export function isValidKey(key: string): boolean {
  if (key.length === 0 || key.length > MAX_KEY_LENGTH || key.includes('\0')) return false;
  const parts = (key.endsWith('/') ? key.slice(0, -1) : key).split('/');
  return parts.every((s) => s !== '' && s !== '.' && s !== '..');
}

/** Whether a tree entry at `path` is listed. */
export function isListed(entry: TreeEntry, path: string): boolean {
  return entry.kind === 'file' && entry.valid && isServablePath(path);
}

/**
 * At most `limit` listed files of tree `root` after key `after`, examining at most `budget`
 * entries (a tree of a million symlinks cannot make one call unbounded: the page then ends early).
 */
export async function walkTree(
  repo: Repository,
  root: string,
  after: string | undefined,
  limit: number,
  budget: number,
  signal: AbortSignal,
): Promise<TreePage> {
  const files: ListedFile[] = [];
  let examined = 0;
  let lastKey: string | undefined;
  let stopped = false;

  const visit = async (
    treeId: string,
    dirPath: string,
    resume: string[] | undefined,
    depth: number,
  ): Promise<void> => {
    signal.throwIfAborted();
    const entries = await repo.tree(treeId);
    let i = 0;
    let descend: TreeEntry | undefined;
    if (resume !== undefined) {
      const [segment, ...rest] = resume as [string, ...string[]];
      const name = Buffer.from(segment, 'utf8');
      const asDir = Buffer.concat([name, Buffer.from('/')]);
      if (rest.length === 0) {
        i = firstAfter(entries, name); // a file (or anything) named exactly this was done
      } else if (rest.length === 1 && rest[0] === '') {
        i = firstAfter(entries, asDir); // a directory walked to its end
      } else {
        descend = entries.find((e) => e.kind === 'tree' && e.valid && e.name === segment);
        i = firstAfter(entries, asDir);
        if (descend !== undefined && depth < MAX_DEPTH) {
          const path = dirPath === '' ? segment : `${dirPath}/${segment}`;
          await visit(descend.id, path, rest, depth + 1);
          if (stopped) return;
          lastKey = `${path}/`;
        }
      }
    }
    for (; i < entries.length; i += 1) {
      if (files.length >= limit || examined >= budget) {
        stopped = true;
        return;
      }
      const entry = entries[i]!;
      examined += 1;
      const path = dirPath === '' ? entry.name : `${dirPath}/${entry.name}`;
      if (entry.kind === 'tree') {
        if (entry.valid && depth < MAX_DEPTH && isServablePath(path)) {
          await visit(entry.id, path, undefined, depth + 1);
          if (stopped) return;
        }
        if (entry.valid) lastKey = `${path}/`;
        continue;
      }
      if (entry.valid) lastKey = path;
      if (isListed(entry, path)) files.push({ path, entry });
    }
  };

  await visit(root, '', after === undefined ? undefined : after.split('/'), 0);
  // A name that is not valid UTF-8 has no faithful string key: such entries never become the key (they
  // are never listed, so examining one again on the next page repeats nothing).
  return stopped && lastKey !== undefined ? { files, last: lastKey } : { files };
}

function firstAfter(entries: readonly TreeEntry[], key: Buffer): number {
  let i = 0;
  while (i < entries.length && Buffer.compare(entries[i]!.sortKey, key) <= 0) i += 1;
  return i;
}
