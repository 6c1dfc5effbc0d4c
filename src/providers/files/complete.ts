/**
 * Path completion for the files templates' `path` variable, behaving like shell tab completion: the
 * value is a path relative to the root as typed (not percent-encoded); the segment after its last
 * `/` is completed among the entries of the directory before it. Directories come first, with a
 * trailing `/`, then files, each group in name order; at most 100 values, with `total` counting
 * every match in that directory. Dot-names are offered only when the typed segment starts with `.`.
 *
 * Nothing outside the root is ever offered: a `..`, `.` or empty segment, or a leading `/`, answers
 * no values; the directory is opened and the real path of what was opened is checked, exactly as a
 * read is. Excluded entries (`.git`, `.gitignore`d, `--exclude`) are never offered, and neither is
 * anything inside an excluded directory, nor a hidden file (the server's config) under any name.
 * While access rules apply (`ctx.allows`), a symlink is offered only when the caller may read where
 * it leads, and through a symlinked directory the names are judged where the link leads (the
 * registry judges the spelled values), as a read through the link would be.
 *
 * One directory is read per completion. Its classified listing is cached, keyed by the directory's
 * inode and mtime and by the ignore rules in force, and never cached while the directory changed in
 * the last two seconds (a change within one mtime tick would otherwise go unseen). Symbolic links
 * are resolved afresh every time, since their targets change without touching the directory.
 */
import { closeSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Ignore } from 'ignore';
import type { CallContext, Completer, Completion } from '../../core/types.js';
import { fdPath, openInside, relativeKey, type OpenedEntry } from './containment.js';
import { HiddenFiles } from './hidden.js';
import { statInside, type Resolved } from './resolve.js';
import type { IgnoreRules, RuleChain } from './ignore.js';
import { readSortedDir } from './walk.js';

/** Values per answer: the protocol's limit. */
export const MAX_COMPLETION_VALUES = 100;
/** Directories whose listing is kept, and the most names kept across them. */
const CACHE_DIRECTORIES = 64;
const CACHE_NAMES = 500_000;
/** A directory modified more recently than this is read afresh every time. */
const RACY_MS = 2_000;
/** Longer typed values cannot name anything (PATH_MAX) and are answered with nothing. */
const MAX_VALUE_LENGTH = 4_096;

const NOTHING: Completion = { values: [], total: 0, hasMore: false };

interface Listing {
  ino: number;
  mtimeMs: number;
  /** The rule objects the entries were classified under; any change means reclassify. */
  rules: readonly (Ignore | string)[];
  /** Served, non-excluded entries by kind, each sorted by name (UTF-16 code units). */
  dirs: string[];
  files: string[];
  /** Symbolic links (not excluded by name): resolved at every completion. */
  links: string[];
}

export interface PathCompleterOptions {
  root: string;
  rules: IgnoreRules;
  /** Files and directories never offered (what the server keeps: config, keys, state directory). */
  hidden?: HiddenFiles;
}

export function pathCompleter({
  root,
  rules,
  hidden = new HiddenFiles(),
}: PathCompleterOptions): Completer {
  const cache = new Map<string, Listing>();
  let cachedNames = 0;

  /** The ignore rules in force inside directory `rel` (its own `.gitignore` included). */
  const chainFor = (rel: string): RuleChain => {
    let chain = rules.enter([], '');
    if (rel === '') return chain;
    let prefix = '';
    for (const part of rel.split('/')) {
      prefix = prefix === '' ? part : `${prefix}/${part}`;
      chain = rules.enter(chain, prefix);
    }
    return chain;
  };

  /** The directory's classified listing: from the cache when still valid, else read and classified. */
  const listing = (
    opened: OpenedEntry,
    rel: string,
    chain: RuleChain,
    realRel: string,
  ): Listing => {
    const { stats, realPath: key } = opened;
    const chains =
      realRel === rel
        ? [{ base: rel, chain }]
        : [
            { base: rel, chain },
            { base: realRel, chain: chainFor(realRel) },
          ];
    const ruleKey = chains.flatMap((c) => [c.base, ...c.chain.map((level) => level.rules)]);
    const cached = cache.get(key);
    if (cached !== undefined) {
      cache.delete(key);
      cachedNames -= size(cached);
    }
    if (
      cached !== undefined &&
      cached.ino === stats.ino &&
      cached.mtimeMs === stats.mtimeMs &&
      sameRules(cached.rules, ruleKey)
    ) {
      cache.set(key, cached);
      cachedNames += size(cached);
      return cached;
    }
    const excluded = (name: string, isDir: boolean): boolean =>
      chains.some(({ base, chain: c }) =>
        rules.excluded(c, base === '' ? name : `${base}/${name}`, name, isDir),
      );
    const fresh: Listing = {
      ino: stats.ino,
      mtimeMs: stats.mtimeMs,
      rules: ruleKey,
      dirs: [],
      files: [],
      links: [],
    };
    for (const entry of readSortedDir(fdPath(opened.fd, opened.realPath))) {
      if (entry.kind === 'directory') {
        if (!excluded(entry.name, true)) fresh.dirs.push(entry.name);
      } else if (entry.kind === 'file') {
        if (!excluded(entry.name, false)) fresh.files.push(entry.name);
      } else if (entry.kind === 'symlink') {
        fresh.links.push(entry.name); // whether it is served depends on what it points to, now
      }
    }
    if (Date.now() - stats.mtimeMs > RACY_MS) {
      cache.set(key, fresh);
      cachedNames += size(fresh);
      while (cache.size > CACHE_DIRECTORIES || cachedNames > CACHE_NAMES) {
        const [oldest, evicted] = cache.entries().next().value!;
        cache.delete(oldest);
        cachedNames -= size(evicted);
      }
    }
    return fresh;
  };

  /**
   * What a symlink in the directory is, if served: resolved inside the root, not excluded, and (while
   * access rules apply) where it leads readable by the caller, as a read through it would require.
   */
  const resolveLink = (
    dirAbs: string,
    rel: string,
    name: string,
    chain: RuleChain,
    allows: Allows | undefined,
  ): 'dir' | 'file' | undefined => {
    let target: Resolved | undefined;
    try {
      target = statInside(root, join(dirAbs, name)); // judged without opening it
    } catch {
      return undefined;
    }
    if (target === undefined) return undefined;
    const isDir = target.stats.isDirectory();
    if (!isDir && !target.stats.isFile()) return undefined;
    const childRel = rel === '' ? name : `${rel}/${name}`;
    if (rules.excluded(chain, childRel, name, isDir)) return undefined;
    if (
      rules.excludedPath(relativeKey(root, target.realPath), isDir) ||
      hidden.has(target.realPath, target.stats)
    )
      return undefined;
    if (allows !== undefined && !allows('read', entryUri(target.realPath, isDir), isDir))
      return undefined;
    return isDir ? 'dir' : 'file';
  };

  return (value, _context, ctx) => {
    const allows = ctx?.allows;
    if (typeof value !== 'string' || value.length > MAX_VALUE_LENGTH || value.includes('\0'))
      return NOTHING;
    const slash = value.lastIndexOf('/');
    const typedDir = value.slice(0, slash + 1);
    const segment = value.slice(slash + 1);
    const parts = typedDir === '' ? [] : typedDir.slice(0, -1).split('/');
    // Never anything outside the root, and no aliases of inside paths either.
    if (parts.some((p) => p === '' || p === '.' || p === '..')) return NOTHING;
    const rel = parts.join('/');
    const dirAbs = parts.length === 0 ? root : join(root, ...parts);
    let opened: OpenedEntry | undefined;
    try {
      opened = openInside(root, dirAbs);
    } catch {
      return NOTHING; // e.g. permission denied: nothing we could read
    }
    if (opened === undefined) return NOTHING;
    let found: Listing;
    let chain: RuleChain;
    const realDir = opened.realPath;
    // Through a symlinked directory, the names offered are those of where it leads: judged there
    // (the spelled values are judged by the registry), as a read through the link would be.
    const linked = realDir !== dirAbs && allows !== undefined ? allows : undefined;
    try {
      if (!opened.stats.isDirectory() || hidden.has(realDir, opened.stats)) return NOTHING;
      const realRel = relativeKey(root, realDir);
      if (rel !== '' && (rules.excludedPath(rel, true) || rules.excludedPath(realRel, true)))
        return NOTHING;
      if (linked !== undefined && !linked('read', entryUri(realDir, true), true)) return NOTHING;
      chain = chainFor(rel);
      found = listing(opened, rel, chain, realRel);
    } finally {
      closeSync(opened.fd);
    }

    const dotted = segment.startsWith('.');
    const pick = (names: readonly string[], isDir: boolean | undefined): string[] => {
      const out: string[] = [];
      for (
        let i = lowerBound(names, segment);
        i < names.length && names[i]!.startsWith(segment);
        i += 1
      ) {
        const name = names[i]!;
        if (!dotted && name.startsWith('.')) continue;
        if (isDir !== undefined) {
          const real = join(realDir, name);
          if (hidden.hasPath(real)) continue;
          if (linked !== undefined && !linked('read', entryUri(real, isDir), isDir)) continue;
        }
        out.push(name);
      }
      return out;
    };
    const dirs = pick(found.dirs, true);
    const files = pick(found.files, false);
    for (const name of pick(found.links, undefined)) {
      const kind = resolveLink(dirAbs, rel, name, chain, allows);
      if (kind === 'dir') insertSorted(dirs, name);
      else if (kind === 'file') insertSorted(files, name);
    }
    const total = dirs.length + files.length;
    const values: string[] = [];
    for (const name of dirs) {
      if (values.length >= MAX_COMPLETION_VALUES) break;
      values.push(`${typedDir}${name}/`);
    }
    for (const name of files) {
      if (values.length >= MAX_COMPLETION_VALUES) break;
      values.push(`${typedDir}${name}`);
    }
    return { values, total, hasMore: total > values.length };
  };
}

type Allows = NonNullable<CallContext['allows']>;

/** The file: URI of a real path (a directory's with its trailing slash). */
function entryUri(abs: string, isDir: boolean): string {
  const href = pathToFileURL(abs).href;
  return isDir && !href.endsWith('/') ? `${href}/` : href;
}

function size(listing: Listing): number {
  return listing.dirs.length + listing.files.length + listing.links.length;
}

function sameRules(a: readonly (Ignore | string)[], b: readonly (Ignore | string)[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function lowerBound(names: readonly string[], name: string): number {
  let lo = 0;
  let hi = names.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (names[mid]! < name) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function insertSorted(names: string[], name: string): void {
  const at = lowerBound(names, name);
  names.splice(at, 0, name);
}
