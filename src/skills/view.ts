/**
 * What a skills catalog serves, assembled from the SDK-built entries of every part: the skills in
 * URI order, each file's source URI and digest, the directories inside skills with their children,
 * and a key per resource that every spelling of its URI shares (for access rules and lookups).
 * Each part's own view is built once, when the part is (re)built; the catalog's view is patched
 * from them (`patchView`: the edited parts' entries out, their new ones in, in URI order), so an
 * edit costs the size of the skill it touched, not of the catalog.
 */
import type { Skill } from '@modelcontextprotocol/server/ext/skills';
import type { DirectoryEntry } from '../core/types.js';
import type { SourceEntry } from './files.js';
import { definedProps } from '../core/defined.js';

/** One servable skill file. */
export interface SkillFile {
  uri: string;
  /** Where the bytes live in the source. */
  source: string;
  digest: string;
  size: number;
  mimeType?: string | undefined;
}

export interface SkillsView {
  skills: readonly Skill[];
  byUri: ReadonlyMap<string, Skill>;
  files: ReadonlyMap<string, SkillFile>;
  /** Children of each directory inside a skill (the skill's own folder included), sorted by name. */
  dirs: ReadonlyMap<string, DirectoryEntry[]>;
  /** Decoded path (relative to the catalog root) → the URI as served, for files and directories. */
  keys: ReadonlyMap<string, string>;
}

export const EMPTY_VIEW: SkillsView = {
  skills: [],
  byUri: new Map(),
  files: new Map(),
  dirs: new Map(),
  keys: new Map(),
};

/** The decoded path of `uri` under `root`, or undefined when it is not a plain path below it. */
export function pathKey(root: string, uri: string): string | undefined {
  if (!uri.startsWith(root)) return undefined;
  let rest = uri.slice(root.length);
  if (/[?#]/.test(rest)) return undefined;
  if (rest.endsWith('/')) rest = rest.slice(0, -1);
  try {
    const segments = rest.split('/').map((segment) => decodeURIComponent(segment));
    return segments.some((s) => s === '' || s === '.' || s === '..' || s.includes('/'))
      ? undefined
      : segments.join('/');
  } catch {
    return undefined;
  }
}

export function buildView(
  root: string,
  parts: Iterable<{ skills: readonly Skill[]; seen: ReadonlyMap<string, SourceEntry> }>,
): SkillsView {
  const skills: Skill[] = [];
  const files = new Map<string, SkillFile>();
  const dirs = new Map<string, Map<string, DirectoryEntry>>();
  const keys = new Map<string, string>();
  const child = (dir: string, entry: DirectoryEntry): void => {
    let children = dirs.get(dir);
    if (children === undefined) dirs.set(dir, (children = new Map()));
    children.set(entry.name, entry);
  };
  for (const part of parts) {
    for (const skill of part.skills) {
      skills.push(skill);
      const skillDir = skill.uri.slice(0, -'/SKILL.md'.length);
      if (!dirs.has(skillDir)) dirs.set(skillDir, new Map());
      const skillKey = pathKey(root, skillDir);
      if (skillKey !== undefined) keys.set(skillKey, skillDir);
      if (skill.resources === 'dynamic') continue;
      for (const resource of skill.resources) {
        const key = pathKey(root, resource.uri);
        const source = key === undefined ? undefined : part.seen.get(key);
        if (key === undefined || source === undefined) continue;
        keys.set(key, resource.uri);
        const file: SkillFile = {
          uri: resource.uri,
          source: source.uri,
          digest: resource.digest,
          size: resource.size,
          mimeType: source.mimeType,
        };
        files.set(resource.uri, file);
        // Name the file in its folder, and each folder up to the skill's in its parent.
        let uri = resource.uri;
        let dir = uri.slice(0, uri.lastIndexOf('/'));
        child(dir, {
          name: nameOf(uri),
          uri,
          kind: 'file',
          size: file.size,
          ...definedProps({ mimeType: file.mimeType }),
        });
        while (dir.length > skillDir.length) {
          uri = dir;
          dir = uri.slice(0, uri.lastIndexOf('/'));
          const dirKey = pathKey(root, uri);
          if (dirKey !== undefined) keys.set(dirKey, uri);
          child(dir, { name: nameOf(uri), uri, kind: 'directory', mimeType: 'inode/directory' });
        }
      }
    }
  }
  skills.sort(byUri);
  const sortedDirs = new Map<string, DirectoryEntry[]>();
  for (const [dir, children] of dirs)
    sortedDirs.set(
      dir,
      [...children.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    );
  return {
    skills,
    byUri: new Map(skills.map((skill) => [skill.uri, skill])),
    files,
    dirs: sortedDirs,
    keys,
  };
}

/**
 * `view` with the parts whose views are `out` replaced by those whose views are `into` (a part
 * removed is only out, one added only in). Parts never share a URI: each owns one top-level folder.
 * `view` itself is left as it was (readers may hold it).
 */
export function patchView(
  view: SkillsView,
  out: readonly SkillsView[],
  into: readonly SkillsView[],
): SkillsView {
  if (out.length === 0 && into.length === 0) return view;
  const gone = new Set<string>();
  for (const part of out) for (const skill of part.skills) gone.add(skill.uri);
  const skills =
    gone.size === 0 ? [...view.skills] : view.skills.filter((skill) => !gone.has(skill.uri));
  const added = into.flatMap((part) => part.skills);
  if (added.length > 64) {
    skills.push(...added);
    skills.sort(byUri);
  } else for (const skill of added) skills.splice(lowerBound(skills, skill.uri), 0, skill);
  const byUriMap = new Map(view.byUri);
  const files = new Map(view.files);
  const dirs = new Map(view.dirs);
  const keys = new Map(view.keys);
  for (const part of out) {
    for (const uri of part.byUri.keys()) byUriMap.delete(uri);
    for (const uri of part.files.keys()) files.delete(uri);
    for (const dir of part.dirs.keys()) dirs.delete(dir);
    for (const key of part.keys.keys()) keys.delete(key);
  }
  for (const part of into) {
    for (const [uri, skill] of part.byUri) byUriMap.set(uri, skill);
    for (const [uri, file] of part.files) files.set(uri, file);
    for (const [dir, children] of part.dirs) dirs.set(dir, children);
    for (const [key, uri] of part.keys) keys.set(key, uri);
  }
  return { skills, byUri: byUriMap, files, dirs, keys };
}

function byUri(a: Skill, b: Skill): number {
  return a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0;
}

/** The first index of `skills` (in URI order) whose URI is not below `uri`. */
function lowerBound(skills: readonly Skill[], uri: string): number {
  let low = 0;
  let high = skills.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (skills[mid]!.uri < uri) low = mid + 1;
    else high = mid;
  }
  return low;
}

function nameOf(uri: string): string {
  const segment = uri.slice(uri.lastIndexOf('/') + 1);
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
