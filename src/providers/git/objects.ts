/**
 * git's object formats as this provider reads them: a tree object's entries (mode, name, id, and
 * git's own sort key) and a commit object's headers and message, parsed from the raw bytes that
 * cat-file hands back. Pure functions over buffers; repo.ts does the reading and the caching.
 */
import { isUtf8 } from 'node:buffer';
import { GitFailure } from './exec.js';

export type EntryKind = 'file' | 'tree' | 'link' | 'submodule';

export interface TreeEntry {
  /** The name, decoded as UTF-8; `valid` is false when the bytes were not UTF-8. */
  name: string;
  valid: boolean;
  kind: EntryKind;
  mode: string;
  id: string;
  /** git's sort key: the name's bytes, with '/' appended for a tree. */
  sortKey: Buffer;
}

export interface Person {
  name: string;
  email: string;
  date: string;
}

export interface CommitObject {
  id: string;
  tree: string;
  parents: string[];
  author: Person;
  committer: Person;
  message: string;
}

const KINDS: Record<string, EntryKind> = {
  '100644': 'file',
  '100755': 'file',
  '100664': 'file',
  '40000': 'tree',
  '120000': 'link',
  '160000': 'submodule',
};

/** Parses a raw tree object: `<mode> <name>\0<raw id>` repeated. */
export function parseTree(data: Buffer, idBytes: number): TreeEntry[] {
  const entries: TreeEntry[] = [];
  let at = 0;
  while (at < data.length) {
    const space = data.indexOf(0x20, at);
    const nul = data.indexOf(0, space + 1);
    if (space < 0 || nul < 0 || nul + 1 + idBytes > data.length)
      throw new GitFailure('a tree object could not be parsed');
    const mode = data.toString('latin1', at, space);
    const nameBytes = data.subarray(space + 1, nul);
    const kind = KINDS[mode] ?? 'submodule';
    const id = data.toString('hex', nul + 1, nul + 1 + idBytes);
    const sortKey =
      kind === 'tree' ? Buffer.concat([nameBytes, Buffer.from('/')]) : Buffer.from(nameBytes);
    entries.push({
      name: nameBytes.toString('utf8'),
      valid: isUtf8(nameBytes),
      kind,
      mode,
      id,
      sortKey,
    });
    at = nul + 1 + idBytes;
  }
  return entries;
}

/** Parses a raw commit object's headers and message. */
export function parseCommit(id: string, data: Buffer): CommitObject {
  const text = data.toString('utf8');
  const split = text.indexOf('\n\n');
  const head = split < 0 ? text : text.slice(0, split);
  const message = split < 0 ? '' : text.slice(split + 2);
  let tree = '';
  const parents: string[] = [];
  let author: Person = { name: '', email: '', date: '' };
  let committer: Person = author;
  for (const line of head.split('\n')) {
    if (line.startsWith(' ')) continue; // continuation of a multi-line header (gpgsig)
    const space = line.indexOf(' ');
    const key = line.slice(0, space);
    const value = line.slice(space + 1);
    if (key === 'tree') tree = value;
    else if (key === 'parent') parents.push(value);
    else if (key === 'author') author = parsePerson(value);
    else if (key === 'committer') committer = parsePerson(value);
  }
  return { id, tree, parents, author, committer, message };
}

/** `Name <email> 1700000000 +0100` → name, email and an ISO 8601 date in the recorded offset. */
function parsePerson(value: string): Person {
  const match = /^(.*?) ?<([^>]*)> (\d+) ([+-])(\d\d)(\d\d)$/.exec(value);
  if (match === null) return { name: value, email: '', date: '' };
  const [, name, email, seconds, sign, hh, mm] = match;
  const offsetMin = (sign === '-' ? -1 : 1) * (Number(hh) * 60 + Number(mm));
  const local = new Date(Number(seconds) * 1000 + offsetMin * 60_000).toISOString().slice(0, 19);
  return { name: name!, email: email!, date: `${local}${sign}${hh}:${mm}` };
}
