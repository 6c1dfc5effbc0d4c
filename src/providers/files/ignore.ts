/**
 * What the files provider leaves out: `.git/` (unless asked), paths matched by `.gitignore` files
 * (nested ones apply below their own directory, and may re-include with `!`), and `--exclude`
 * patterns (gitignore syntax, relative to the root), files that hold secrets (secrets.ts, unless
 * served), and what the server keeps (hidden.ts) by its path below the root. Excluded paths are
 * neither listed nor read. No `.gitignore` can bring back a secret or a reserved path.
 */
import { closeSync, lstatSync, readSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import ignore, { type Ignore } from 'ignore';
import { openInside } from './containment.js';
import { statInside } from './resolve.js';
import { secretMatcher, type SecretOptions } from './secrets.js';

/**
 * Largest `.gitignore` read, bytes. A larger one is never read into memory; its directory is then
 * treated as wholly ignored (failing closed: its rules often hide secrets such as `.env`).
 */
export const MAX_GITIGNORE_BYTES = 4 * 1024 * 1024;

export interface IgnoreOptions extends SecretOptions {
  /** Honour `.gitignore` files. @default true */
  gitignore?: boolean | undefined;
  /** Serve the contents of `.git` directories. @default false */
  includeGitDir?: boolean | undefined;
  /** Extra patterns in gitignore syntax, relative to the root. @default [] */
  exclude?: string[] | undefined;
  /**
   * Paths below the root (relative, '/'-joined) that are always left out, with everything under
   * them, whatever the other rules say: what the server keeps (`HiddenFiles.relativeTo`). @default []
   */
  reserved?: string[] | undefined;
}

/** One level of rules: the patterns of a `.gitignore` in directory `base` (relative, '' for the root). */
export interface RuleLevel {
  base: string;
  rules: Ignore;
}

export type RuleChain = readonly RuleLevel[];

interface CachedRules {
  mtimeMs: number;
  size: number;
  ino: number;
  rules: Ignore | undefined;
}

export class IgnoreRules {
  private readonly gitignore: boolean;
  private readonly includeGitDir: boolean;
  private readonly exclude: Ignore | undefined;
  private readonly secrets: Ignore | undefined;
  private readonly reserved: ReadonlySet<string>;
  private readonly cache = new Map<string, CachedRules>();

  constructor(
    private readonly root: string,
    options: IgnoreOptions = {},
  ) {
    this.gitignore = options.gitignore ?? true;
    this.includeGitDir = options.includeGitDir ?? false;
    const patterns = options.exclude ?? [];
    this.exclude = patterns.length > 0 ? ignore().add(patterns) : undefined;
    this.secrets = secretMatcher(options);
    this.reserved = new Set(options.reserved ?? []);
  }

  /** The reserved paths below the root, relative to it. */
  get reservedPaths(): readonly string[] {
    return [...this.reserved];
  }

  /** Whether `rel` is a reserved path or lies below one (no rule can bring it back). */
  reservedPath(rel: string): boolean {
    if (this.reserved.size === 0 || rel === '') return false;
    if (this.reserved.has(rel)) return true;
    for (let cut = rel.indexOf('/'); cut >= 0; cut = rel.indexOf('/', cut + 1))
      if (this.reserved.has(rel.slice(0, cut))) return true;
    return false;
  }

  /** The chain in force inside directory `rel`, given the chain of its parent. */
  enter(parent: RuleChain, rel: string, hasGitignore = true): RuleChain {
    if (!this.gitignore || !hasGitignore) return parent;
    const rules = this.load(rel);
    return rules === undefined ? parent : [...parent, { base: rel, rules }];
  }

  /** Whether the entry `rel` (a directory when `isDir`) is left out under `chain`. */
  excluded(chain: RuleChain, rel: string, name: string, isDir: boolean): boolean {
    if (!this.includeGitDir && name === '.git') return true;
    if (this.reserved.has(rel)) return true;
    const subject = isDir ? `${rel}/` : rel;
    if (this.secrets !== undefined && test(this.secrets, subject)) return true;
    if (this.exclude !== undefined && test(this.exclude, subject)) return true;
    let ignored = false;
    for (const level of chain) {
      const local = level.base === '' ? subject : subject.slice(level.base.length + 1);
      const verdict = safeTest(level.rules, local);
      if (verdict.ignored) ignored = true;
      else if (verdict.unignored) ignored = false;
    }
    return ignored;
  }

  /**
   * Whether `rel` (a path below the root, with `isDir` for its own kind) or any directory above it
   * is left out. Used for reads, which arrive without the walk's context.
   */
  excludedPath(rel: string, isDir: boolean): boolean {
    if (rel === '') return false;
    const parts = rel.split('/');
    let chain = this.enter([], '');
    let prefix = '';
    for (let i = 0; i < parts.length; i += 1) {
      const name = parts[i]!;
      prefix = prefix === '' ? name : `${prefix}/${name}`;
      const last = i === parts.length - 1;
      if (this.excluded(chain, prefix, name, last ? isDir : true)) return true;
      if (!last) chain = this.enter(chain, prefix);
    }
    return false;
  }

  /**
   * The test for the entries of directory `rel`, itself served: its rule chain is built once (one
   * .gitignore lookup per level), not once per entry as `excludedPath` would.
   */
  entriesOf(rel: string): (name: string, isDir: boolean) => boolean {
    let chain = this.enter([], '');
    if (rel !== '') {
      let prefix = '';
      for (const name of rel.split('/')) {
        prefix = prefix === '' ? name : `${prefix}/${name}`;
        chain = this.enter(chain, prefix);
      }
    }
    return (name, isDir) => this.excluded(chain, rel === '' ? name : `${rel}/${name}`, name, isDir);
  }

  private load(rel: string): Ignore | undefined {
    const file = join(this.root, rel, '.gitignore');
    // Checked before opened, like every read: a .gitignore symlinked outside the root (or to a
    // FIFO) is never opened and holds no rules.
    let stats: Stats | undefined;
    try {
      // Most directories have no .gitignore: an lstat that reports it missing without throwing
      // settles that case (a failed realpath builds an exception on every read). Anything present
      // is judged by statInside as before.
      stats =
        lstatSync(file, { throwIfNoEntry: false }) === undefined
          ? undefined
          : statInside(this.root, file)?.stats;
    } catch {
      stats = undefined; // e.g. EACCES: a directory we may read but not enter has no rules we can see
    }
    if (stats === undefined || !stats.isFile()) {
      this.cache.delete(file);
      return undefined;
    }
    const cached = this.cache.get(file);
    if (
      cached !== undefined &&
      cached.mtimeMs === stats.mtimeMs &&
      cached.size === stats.size &&
      cached.ino === stats.ino
    ) {
      return cached.rules;
    }
    let rules: Ignore | undefined;
    if (stats.size > MAX_GITIGNORE_BYTES) {
      rules = ignore().add('*');
    } else {
      try {
        const text = readSmallFile(this.root, file);
        rules = text === undefined || text.trim() === '' ? undefined : ignore().add(text);
      } catch {
        rules = undefined;
      }
    }
    this.cache.set(file, { mtimeMs: stats.mtimeMs, size: stats.size, ino: stats.ino, rules });
    return rules;
  }
}

/** The UTF-8 text of a regular file inside `root`, opened only once judged inside; undefined otherwise. */
function readSmallFile(root: string, path: string): string | undefined {
  const opened = openInside(root, path);
  if (opened === undefined) return undefined;
  try {
    if (!opened.stats.isFile() || opened.stats.size > MAX_GITIGNORE_BYTES) return undefined;
    const buffer = Buffer.allocUnsafe(opened.stats.size);
    let offset = 0;
    while (offset < buffer.length) {
      const n = readSync(opened.fd, buffer, offset, buffer.length - offset, offset);
      if (n === 0) break;
      offset += n;
    }
    return buffer.toString('utf8', 0, offset);
  } finally {
    closeSync(opened.fd);
  }
}

function test(rules: Ignore, path: string): boolean {
  return safeTest(rules, path).ignored;
}

/**
 * The matcher (node-ignore) remembers its verdict on every path it ever tested, and on each of the
 * path's parent directories, and never forgets one: listing a million files left ~1M entries
 * (~130 MB of heap) behind. Each matcher's memory is dropped after this many tests, which keeps
 * what it is for (the verdicts on the directories of the walk under way).
 */
const TESTS_PER_MEMORY = 20_000;
const testsSinceReset = new WeakMap<Ignore, number>();

function safeTest(rules: Ignore, path: string): { ignored: boolean; unignored: boolean } {
  const tests = (testsSinceReset.get(rules) ?? 0) + 1;
  testsSinceReset.set(rules, tests >= TESTS_PER_MEMORY ? 0 : tests);
  if (tests >= TESTS_PER_MEMORY) forget(rules);
  try {
    return rules.test(path);
  } catch {
    // The matcher refuses some names it considers not relative; they match no pattern.
    return { ignored: false, unignored: false };
  }
}

/** Drops the matcher's remembered verdicts (its `_initCache`, what `add` calls for new patterns). */
function forget(rules: Ignore): void {
  const reset = (rules as unknown as { _initCache?: () => void })._initCache;
  if (typeof reset === 'function') reset.call(rules);
}
