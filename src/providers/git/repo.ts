/**
 * One repository on disk: where its git directory is, whether it is still there, and the object
 * reads everything else is built on — refs resolved to commits, commits to trees, trees parsed
 * (and cached: objects never change), blobs read under a byte bound. All of it goes through one
 * long-lived cat-file process; only discovery and the views spawn other git commands.
 *
 * Every operation first checks that the git directory is the one the reader was started on (same
 * device and inode). A repository that went missing fails with GitFailure; one that came back —
 * even as a new directory at the same path — is rediscovered and a fresh reader started.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { streamBlob } from './blob-stream.js';
import { CatFile, ObjectTooLarge, type ObjectInfo } from './cat-file.js';
import { gitEnv, GitFailure, runGit } from './exec.js';
import { HEX_ID } from './address.js';
import { parseCommit, parseTree, type CommitObject, type TreeEntry } from './objects.js';

export interface Resolved {
  commit: string;
  /** The full ref name when the ref was a branch, tag or HEAD; undefined for a commit id. */
  fullRef?: string;
}

/** Trees cached, counted in entries. */
const TREE_CACHE_ENTRIES = 200_000;
/** Blob sizes and commit objects cached. */
const SMALL_CACHE = 20_000;
/** Largest tree or commit object read (a pathological object is refused, not buffered). */
const MAX_OBJECT_BYTES = 64 * 1024 * 1024;

export interface RepositoryOptions {
  timeoutMs: number;
}

export class Repository {
  private gitDir: string | undefined;
  private identity: string | undefined;
  private reader: CatFile | undefined;
  private discovering: Promise<string> | undefined;
  private readonly trees = new Map<string, TreeEntry[]>();
  private treeEntries = 0;
  private readonly sizes = new Map<string, number>();
  private readonly commits = new Map<string, CommitObject>();
  private closed = false;

  constructor(
    /** The configured directory: a working tree or a bare repository. */
    readonly dir: string,
    private readonly options: RepositoryOptions,
  ) {}

  /** The git directory, after checking it is still the one in use. Throws GitFailure when missing. */
  async ready(): Promise<{ gitDir: string; reader: CatFile }> {
    if (this.closed) throw new GitFailure('the repository provider is closed');
    if (this.gitDir !== undefined && this.reader !== undefined) {
      if (identityOf(this.gitDir) === this.identity)
        return { gitDir: this.gitDir, reader: this.reader };
      this.reset();
    }
    this.discovering ??= this.discover().finally(() => (this.discovering = undefined));
    const gitDir = await this.discovering;
    return { gitDir, reader: this.reader! };
  }

  /**
   * Runs `git <args>` in the repository (never a shell); see exec.ts. Pathspecs are literal unless
   * `magicPathspecs` (then every pathspec given must carry its own `:(literal,…)` magic).
   */
  async run(
    args: readonly string[],
    maxBytes: number,
    signal?: AbortSignal,
    okCodes?: readonly number[],
    magicPathspecs = false,
  ): Promise<Buffer> {
    const { gitDir } = await this.ready();
    const env = this.env(gitDir);
    if (magicPathspecs) env['GIT_LITERAL_PATHSPECS'] = '0';
    return runGit(args, {
      cwd: gitDir,
      env,
      maxBytes,
      timeoutMs: this.options.timeoutMs,
      signal,
      okCodes,
    });
  }

  /** Where and how a git process of this repository runs (for commands whose output is streamed). */
  async processOptions(): Promise<{ cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }> {
    const { gitDir } = await this.ready();
    return { cwd: gitDir, env: this.env(gitDir), timeoutMs: this.options.timeoutMs };
  }

  /** The full name of the branch HEAD points at, or undefined when HEAD is detached or unreadable. */
  async headBranch(): Promise<string | undefined> {
    const { gitDir } = await this.ready();
    let text: string;
    try {
      text = readHead(`${gitDir}/HEAD`);
    } catch {
      return undefined;
    }
    const match = /^ref: (refs\/heads\/\S+)\s*$/.exec(text);
    if (match !== null && match[1] !== 'refs/heads/.invalid') return match[1];
    if (/^[0-9a-f]{40,64}\s*$/.test(text)) return undefined;
    // Another ref backend (reftable): ask git.
    const out = await this.run(['symbolic-ref', '-q', 'HEAD'], 4096, undefined, [0, 1]);
    const name = out.toString('utf8').trim();
    return name.startsWith('refs/heads/') ? name : undefined;
  }

  /**
   * Resolves a checked ref (see isValidRef) to a commit, as git does for a short name: the tag,
   * then the branch; a full `refs/heads/…` or `refs/tags/…` name as given; `HEAD`; and, failing
   * those, a commit id or an unambiguous abbreviation of one (4 or more hex digits).
   */
  async resolve(ref: string): Promise<Resolved | undefined> {
    const { reader } = await this.ready();
    const candidates =
      ref === 'HEAD'
        ? ['HEAD']
        : ref.startsWith('refs/heads/') || ref.startsWith('refs/tags/')
          ? [ref]
          : ref.startsWith('refs/')
            ? []
            : [`refs/tags/${ref}`, `refs/heads/${ref}`];
    for (const candidate of candidates) {
      const info = await reader.info(`${candidate}^{commit}`);
      if (info !== undefined) return { commit: info.id, fullRef: candidate };
    }
    if (HEX_ID.test(ref)) {
      const info = await reader.info(`${ref}^{commit}`);
      // Only a real id prefix: never something git's own ref lookup found under that name.
      if (info !== undefined && info.id.startsWith(ref)) return { commit: info.id };
    }
    return undefined;
  }

  /** The commits whose id starts with `prefix` (4+ hex digits). */
  async commitsWithPrefix(prefix: string, max: number): Promise<string[]> {
    if (!HEX_ID.test(prefix)) return [];
    const out = await this.run(
      ['rev-parse', `--disambiguate=${prefix}`],
      1 << 20,
      undefined,
      [0, 1, 128],
    );
    const ids = out
      .toString('utf8')
      .split('\n')
      .filter((id) => /^[0-9a-f]{40,64}$/.test(id))
      .sort();
    const { reader } = await this.ready();
    const found: string[] = [];
    for (const id of ids) {
      if (found.length >= max) break;
      if ((await reader.info(id))?.type === 'commit') found.push(id);
    }
    return found;
  }

  /** The parsed commit object `id`. */
  async commit(id: string): Promise<CommitObject> {
    const cached = this.commits.get(id);
    if (cached !== undefined) return cached;
    const { reader } = await this.ready();
    const object = await reader.contents(id, MAX_OBJECT_BYTES);
    if (object === undefined || object.info.type !== 'commit')
      throw new GitFailure(`commit ${id} could not be read`);
    const parsed = parseCommit(object.info.id, object.data);
    remember(this.commits, id, parsed, SMALL_CACHE);
    return parsed;
  }

  /** The entries of tree `id`, in git's order. */
  async tree(id: string): Promise<TreeEntry[]> {
    const cached = this.trees.get(id);
    if (cached !== undefined) {
      this.trees.delete(id);
      this.trees.set(id, cached);
      return cached;
    }
    const { reader } = await this.ready();
    let object: { info: ObjectInfo; data: Buffer } | undefined;
    try {
      object = await reader.contents(id, MAX_OBJECT_BYTES);
    } catch (error) {
      if (error instanceof ObjectTooLarge) throw new GitFailure(`tree ${id} is too large to read`);
      throw error;
    }
    if (object === undefined || object.info.type !== 'tree')
      throw new GitFailure(`tree ${id} could not be read`);
    const entries = parseTree(object.data, object.info.id.length / 2);
    this.trees.set(id, entries);
    this.treeEntries += entries.length;
    while (this.treeEntries > TREE_CACHE_ENTRIES && this.trees.size > 1) {
      const [oldest, evicted] = this.trees.entries().next().value!;
      this.trees.delete(oldest);
      this.treeEntries -= evicted.length;
    }
    return entries;
  }

  /** The entry at `path` (checked, '/'-joined) in the tree of `commit`, or undefined. */
  async entryAt(commit: string, path: string): Promise<TreeEntry | undefined> {
    let tree = (await this.commit(commit)).tree;
    const parts = path.split('/');
    for (let i = 0; i < parts.length; i += 1) {
      const entry = (await this.tree(tree)).find((e) => e.valid && e.name === parts[i]);
      if (entry === undefined) return undefined;
      if (i === parts.length - 1) return entry;
      if (entry.kind !== 'tree') return undefined;
      tree = entry.id;
    }
    return undefined;
  }

  /** The tree at `path` ('' for the root) in `commit`, or undefined. */
  async treeAt(commit: string, path: string): Promise<string | undefined> {
    if (path === '') return (await this.commit(commit)).tree;
    const entry = await this.entryAt(commit, path);
    return entry?.kind === 'tree' ? entry.id : undefined;
  }

  async blobSize(id: string): Promise<number> {
    const cached = this.sizes.get(id);
    if (cached !== undefined) return cached;
    const { reader } = await this.ready();
    const info = await reader.info(id);
    if (info === undefined) throw new GitFailure(`blob ${id} is missing from the object store`);
    remember(this.sizes, id, info.size, SMALL_CACHE);
    return info.size;
  }

  /** The blob's bytes, or ObjectTooLarge (with its size) past `maxBytes`. */
  async blob(id: string, maxBytes: number): Promise<Buffer> {
    const size = await this.blobSize(id);
    if (size > maxBytes) throw new ObjectTooLarge({ id, type: 'blob', size });
    const { reader } = await this.ready();
    const object = await reader.contents(id, maxBytes);
    if (object === undefined) throw new GitFailure(`blob ${id} is missing from the object store`);
    return object.data;
  }

  /** The bytes of blob `id`, streamed by a `git cat-file blob` of its own (see blob-stream.ts). */
  async *blobChunks(id: string, signal?: AbortSignal): AsyncGenerator<Buffer> {
    const { gitDir } = await this.ready();
    yield* streamBlob(id, {
      cwd: gitDir,
      env: this.env(gitDir),
      stallMs: this.options.timeoutMs,
      signal,
    });
  }

  /** The running object reader, if any (for tests and the bench). */
  get objectReader(): CatFile | undefined {
    return this.reader;
  }

  close(): void {
    this.closed = true;
    this.reset();
  }

  private reset(): void {
    this.reader?.stop(true);
    this.reader = undefined;
    this.gitDir = undefined;
    this.identity = undefined;
  }

  private async discover(): Promise<string> {
    const env = gitEnv({ GIT_CEILING_DIRECTORIES: dirname(this.dir) });
    let out: Buffer;
    try {
      out = await runGit(['rev-parse', '--absolute-git-dir'], {
        cwd: this.dir,
        env,
        maxBytes: 65_536,
        timeoutMs: this.options.timeoutMs,
      });
    } catch (error) {
      if (error instanceof GitFailure)
        throw new GitFailure(
          `the repository is missing or not a git repository (${error.reason})`,
          { cause: error },
        );
      throw error;
    }
    const gitDir = out.toString('utf8').trim();
    const identity = identityOf(gitDir);
    if (identity === undefined) throw new GitFailure('the repository is missing');
    if (this.closed) throw new GitFailure('the repository provider is closed');
    this.gitDir = gitDir;
    this.identity = identity;
    this.reader = new CatFile({
      cwd: gitDir,
      env: this.env(gitDir),
      stallMs: this.options.timeoutMs,
    });
    return gitDir;
  }

  private env(gitDir: string): NodeJS.ProcessEnv {
    return gitEnv({ GIT_DIR: gitDir, GIT_CEILING_DIRECTORIES: dirname(this.dir) });
  }
}

function identityOf(path: string): string | undefined {
  const stats = statSync(path, { throwIfNoEntry: false });
  const head = statSync(`${path}/HEAD`, { throwIfNoEntry: false });
  return stats?.isDirectory() && head !== undefined ? `${stats.dev}:${stats.ino}` : undefined;
}

function remember<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value!);
}

/** A HEAD file's text, at most 4 KiB of it (a ref line is short; a larger file is never read whole). */
function readHead(path: string): string {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(4096);
    const n = readSync(fd, buffer, 0, buffer.length, 0);
    return buffer.toString('utf8', 0, n);
  } finally {
    closeSync(fd);
  }
}
