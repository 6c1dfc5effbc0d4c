/**
 * The entries of a directory read (`resources/directory/read`), built the same way by every
 * tree-shaped source: a file carries the type its name implies and its size; a directory is
 * `inode/directory`; a special entry (FIFO, device, git symlink or submodule) is only named.
 * `link` is present, and true, only for a symbolic link.
 */
import { definedProps } from '../../core/defined.js';
import type { DirectoryEntry } from '../../core/types.js';
import { mimeFromName } from './content.js';

/** A readable file's entry. */
export function fileEntry(name: string, uri: string, size: number, link = false): DirectoryEntry {
  const entry: DirectoryEntry = {
    name,
    uri,
    kind: 'file',
    ...definedProps({ mimeType: mimeFromName(name) }),
    size,
  };
  return withLink(entry, link);
}

/** A directory's entry (its URI ends in '/'). */
export function directoryEntry(name: string, uri: string, link = false): DirectoryEntry {
  return withLink({ name, uri, kind: 'directory', mimeType: 'inode/directory' }, link);
}

/** An entry that is named but never served. */
export function specialEntry(name: string, uri: string, link = false): DirectoryEntry {
  return withLink({ name, uri, kind: 'special' }, link);
}

function withLink(entry: DirectoryEntry, link: boolean): DirectoryEntry {
  if (link) entry.link = true;
  return entry;
}
