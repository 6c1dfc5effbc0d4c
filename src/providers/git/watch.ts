/**
 * Change detection by polling refs — cheaply. While anything is watched, one timer checks every
 * `intervalMs` the refs in use: one `info <ref>^{commit}` per distinct ref through the repository's
 * already-running cat-file process (no process is spawned per check), plus a read of HEAD's file
 * for the default branch. Polling was chosen over fs.watch on `.git/refs`: it sees every way a ref
 * moves (commit, fetch, reset, pack-refs, another ref backend, a network filesystem) with one code
 * path, costs microseconds per ref, and needs no native watcher per repository.
 *
 * When a ref moved, each file watched at it is looked up in the new commit (trees are cached) and
 * its listener fires only when its blob id changed (or it appeared or disappeared). A history view
 * fires when its ref moved. List listeners fire when the default branch's set of listed files
 * changed (found by comparing the two trees, descending only into subtrees whose ids differ), when
 * the default branch itself changed, and when the repository went missing or came back. The timer
 * stops when the last watcher leaves; a tick never overlaps the previous one.
 */
import type { Logger } from '../../core/log.js';
import { Poller } from '../utils/poller.js';
import { isServablePath } from './address.js';
import type { TreeEntry } from './objects.js';
import type { Repository } from './repo.js';
import { isListed } from './walk.js';

/** Trees a list comparison may read before it assumes the file set changed. */
const COMPARE_BUDGET = 2_000;

interface Watched {
  ref: string;
  /** The file path watched, or undefined for a history view (fires when the ref moves). */
  path: string | undefined;
  commit: string | undefined;
  blob: string | null | undefined;
  onChange: () => void;
}

export interface WatcherOptions {
  intervalMs: number;
  logger: Logger;
  /** The default branch's ref (what `list` shows). */
  defaultRef(): Promise<string>;
}

export class RefWatcher {
  private readonly watched = new Set<Watched>();
  private readonly listListeners = new Set<() => void>();
  private poller: Poller | undefined;
  private ticking = false;
  private listState: { ref: string; commit: string | undefined } | 'unavailable' | undefined;
  private unavailable = false;
  private closed = false;

  constructor(
    private readonly repo: Repository,
    private readonly options: WatcherOptions,
  ) {}

  /** Watches `path` at `ref` (already resolved to `commit`, where the blob is `blob`). */
  watch(
    ref: string,
    path: string | undefined,
    commit: string | undefined,
    blob: string | undefined,
    onChange: () => void,
  ): () => void {
    const item: Watched = {
      ref,
      path,
      commit,
      blob: path === undefined ? undefined : (blob ?? null),
      onChange,
    };
    this.watched.add(item);
    this.schedule();
    return () => {
      this.watched.delete(item);
      this.maybeStop();
    };
  }

  async onListChanged(listener: () => void): Promise<() => void> {
    if (this.listListeners.size === 0) {
      try {
        this.listState = await this.listSnapshot();
      } catch {
        this.listState = 'unavailable'; // it fires when the repository (re)appears
      }
    }
    this.listListeners.add(listener);
    this.schedule();
    return () => {
      this.listListeners.delete(listener);
      if (this.listListeners.size === 0) this.listState = undefined;
      this.maybeStop();
    };
  }

  stats(): { watches: number; listListeners: number; polling: boolean } {
    return {
      watches: this.watched.size,
      listListeners: this.listListeners.size,
      polling: this.poller !== undefined || this.ticking,
    };
  }

  close(): void {
    this.closed = true;
    this.watched.clear();
    this.listListeners.clear();
    this.maybeStop();
  }

  private schedule(): void {
    if (this.closed || this.poller !== undefined || this.ticking) return;
    if (this.watched.size === 0 && this.listListeners.size === 0) return;
    // The kit's poller: ticks never overlap, and a missing repository is checked at a doubling
    // interval (up to 8 times the configured one) until it returns.
    this.poller = new Poller({
      intervalMs: this.options.intervalMs,
      maxBackoff: 8,
      check: () => this.tick(),
    });
  }

  private maybeStop(): void {
    if (this.watched.size > 0 || this.listListeners.size > 0) return;
    this.poller?.stop();
    this.poller = undefined;
  }

  private async tick(): Promise<void> {
    this.ticking = true;
    try {
      await this.check();
      if (this.unavailable)
        this.options.logger.info({ dir: this.repo.dir }, 'git repository is available again');
      this.unavailable = false;
    } catch (error) {
      if (!this.unavailable)
        this.options.logger.warn(
          { err: error, dir: this.repo.dir },
          'git repository unavailable; watching for it to return',
        );
      this.unavailable = true;
      if (this.listListeners.size > 0 && this.listState !== 'unavailable') {
        this.listState = 'unavailable';
        this.fireList();
      }
      throw error;
    } finally {
      this.ticking = false;
      // A watcher that arrived while the last poller's tick ran starts its poller now.
      this.schedule();
    }
  }

  private async check(): Promise<void> {
    const commits = new Map<string, string | undefined>();
    const commitOf = async (ref: string): Promise<string | undefined> => {
      if (!commits.has(ref)) commits.set(ref, (await this.repo.resolve(ref))?.commit);
      return commits.get(ref);
    };
    for (const item of [...this.watched]) {
      const commit = await commitOf(item.ref);
      if (commit === item.commit) continue;
      item.commit = commit;
      if (item.path === undefined) {
        if (this.watched.has(item)) item.onChange();
        continue;
      }
      const entry = commit === undefined ? undefined : await this.repo.entryAt(commit, item.path);
      const blob = entry !== undefined && isListed(entry, item.path) ? entry.id : null;
      if (blob === item.blob) continue;
      item.blob = blob;
      if (this.watched.has(item)) item.onChange();
    }
    if (this.listListeners.size === 0) return;
    const next = await this.listSnapshot();
    const previous = this.listState;
    this.listState = next;
    if (previous === undefined) return; // no baseline yet: this is it
    if (previous === 'unavailable') return this.fireList(); // it came back

    if (next.ref !== previous.ref) return this.fireList();
    if (next.commit === previous.commit) return;
    const before =
      previous.commit === undefined ? undefined : (await this.repo.commit(previous.commit)).tree;
    const after =
      next.commit === undefined ? undefined : (await this.repo.commit(next.commit)).tree;
    if (await this.fileSetDiffers(before, after, '', { reads: 0 })) this.fireList();
  }

  private async listSnapshot(): Promise<{ ref: string; commit: string | undefined }> {
    const ref = await this.options.defaultRef();
    return { ref, commit: (await this.repo.resolve(ref))?.commit };
  }

  private fireList(): void {
    for (const listener of [...this.listListeners]) listener();
  }

  /** Whether the listed files under two trees (either may be absent) differ. */
  private async fileSetDiffers(
    a: string | undefined,
    b: string | undefined,
    dir: string,
    budget: { reads: number },
  ): Promise<boolean> {
    if (a === b) return false;
    if (a === undefined || b === undefined)
      return (await this.hasListed((a ?? b)!, dir, budget)) || false;
    if ((budget.reads += 2) > COMPARE_BUDGET) return true;
    const left = await this.repo.tree(a);
    const right = await this.repo.tree(b);
    const byName = new Map<string, TreeEntry>();
    for (const e of right) if (e.valid) byName.set(e.name, e);
    const seen = new Set<string>();
    for (const e of left) {
      if (!e.valid) continue;
      seen.add(e.name);
      const path = dir === '' ? e.name : `${dir}/${e.name}`;
      if (await this.entryDiffers(e, byName.get(e.name), path, budget)) return true;
    }
    for (const e of right) {
      if (!e.valid || seen.has(e.name)) continue;
      const path = dir === '' ? e.name : `${dir}/${e.name}`;
      if (await this.entryDiffers(undefined, e, path, budget)) return true;
    }
    return false;
  }

  private async entryDiffers(
    a: TreeEntry | undefined,
    b: TreeEntry | undefined,
    path: string,
    budget: { reads: number },
  ): Promise<boolean> {
    const treeOf = (e: TreeEntry | undefined): string | undefined =>
      e?.kind === 'tree' && isServablePath(path) ? e.id : undefined;
    const fileOf = (e: TreeEntry | undefined): boolean => e !== undefined && isListed(e, path);
    if (fileOf(a) !== fileOf(b)) return true;
    return this.fileSetDiffers(treeOf(a), treeOf(b), path, budget);
  }

  private async hasListed(tree: string, dir: string, budget: { reads: number }): Promise<boolean> {
    if ((budget.reads += 1) > COMPARE_BUDGET) return true;
    for (const e of await this.repo.tree(tree)) {
      const path = dir === '' ? e.name : `${dir}/${e.name}`;
      if (!e.valid) continue;
      if (isListed(e, path)) return true;
      if (e.kind === 'tree' && isServablePath(path) && (await this.hasListed(e.id, path, budget)))
        return true;
    }
    return false;
  }
}
