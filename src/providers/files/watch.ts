/**
 * Change detection for one files root.
 *
 * - The tree: one recursive watcher per root (dir-watch.ts: an `fs.watch` per directory and nothing
 *   per file — 1,000,000 files in 1,000 directories cost ~11 MB and under a second of CPU to watch,
 *   where `@parcel/watcher`'s record of every file took ~212 MB) reports adds, removes, renames and
 *   directories moving in or out, batched for ~10 ms.
 * - Subscribed resources: a plain `fs.watch` on each directory holding a subscribed file (one per
 *   directory, counted) reports writes within a few milliseconds, which the tree's batching would delay.
 * - Settling: every event for a subscribed path (re)arms a short timer; when the path has been quiet
 *   for `settleMs` (or `maxWaitMs` passed since the first event) its signature (signature.ts) is
 *   compared with the last one notified, and only a changed signature notifies. A truncate-then-write pair, the tree echoing what fs.watch already
 *   reported, or a touch that changed nothing: one notification or none, never two for one write,
 *   and never before the write has settled.
 * - Running out of OS watch handles (inotify limits) is logged once and degrades to polling for this
 *   root: subscribed paths are stat-ed every `pollMs`, and, while anyone listens for list changes
 *   or tree changes, a TreePoller (poll.ts: async, incremental, rate-bounded) watches the tree.
 *   While something wants every change (the search index, skills catalogs) it tracks each served
 *   file's stat signature too, re-stating a bounded slice of files a round, and what changed is
 *   reported as tree events. Nothing walks the tree synchronously.
 */
import { statSync, type BigIntStats } from 'node:fs';
import { basename, dirname, join, sep } from 'node:path';
import { SubscribedDirs } from './subscribed-dirs.js';
import type { Logger } from '../../core/log.js';
import { isInside, relativeKey } from './containment.js';
import type { IgnoreRules } from './ignore.js';
import { TreePoller, type PollReport } from './poll.js';
import { baselineSignature, pathSignature } from './signature.js';
import { directoryBackend } from './dir-watch.js';
import type { TreeEvent, TreeWatcherBackend } from './tree-backend.js';

export type { TreeEvent, TreeWatcherBackend } from './tree-backend.js';

export interface WatchOptions {
  /** Quiet time before a change counts as settled, ms. @default 20 */
  settleMs?: number;
  /** Longest a continuously changing path waits for a notification, ms. @default 250 */
  maxWaitMs?: number;
  /** Polling interval when native watching is unavailable or `mode` is 'poll', ms. @default 1000 */
  pollMs?: number;
  /** 'native' (directory watches, falling back to polling when the OS refuses) or 'poll'. @default 'native' */
  mode?: 'native' | 'poll';
  backend?: TreeWatcherBackend;
}

interface Watched {
  abs: string;
  isDir: boolean;
  listeners: Set<() => void>;
  statSig: string;
  digest: string | undefined;
  /** No digest was taken at the start: the stat alone decides until one is (signature.ts). */
  deferred: boolean;
  timer: NodeJS.Timeout | undefined;
  firstEventAt: number;
}

export class RootWatcher {
  private readonly watched = new Map<string, Watched>();
  private readonly dirWatchers = new SubscribedDirs(
    (dir, child) => {
      if (child !== undefined && this.watched.has(child)) this.touch(child);
      if (this.watched.get(dir)?.isDir === true) this.touch(dir);
    },
    (error) => this.degrade(error),
  );
  private readonly listListeners = new Set<() => void>();
  private readonly changeListeners = new Set<(events: TreeEvent[]) => void>();
  private tree: Promise<{ unsubscribe(): Promise<void> } | undefined> | undefined;
  /** The last tree unsubscribe still under way: a new subscription waits for it (see subscribeTree). */
  private stopping: Promise<void> = Promise.resolve();
  private poller: NodeJS.Timeout | undefined;
  private treePoller: TreePoller | undefined;
  private polling: boolean;
  private readonly settleMs: number;
  private readonly maxWaitMs: number;
  private readonly pollMs: number;
  private warned = false;

  constructor(
    private readonly root: string,
    private readonly rules: IgnoreRules,
    private readonly logger: Logger,
    private readonly options: WatchOptions & { includeGitDir?: boolean | undefined } = {},
  ) {
    this.settleMs = options.settleMs ?? 20;
    this.maxWaitMs = options.maxWaitMs ?? 250;
    this.pollMs = options.pollMs ?? 1000;
    this.polling = options.mode === 'poll';
  }

  /** Open watches, for introspection: subscribed paths, directory watchers, tree subscriptions. */
  stats(): { paths: number; dirWatchers: number; tree: boolean; polling: boolean } {
    return {
      paths: this.watched.size,
      dirWatchers: this.dirWatchers.size,
      tree: this.tree !== undefined,
      polling: this.polling,
    };
  }

  /**
   * Watches one path (already checked to be inside the root and served); `stats` is what the check
   * just found there, the baseline of its signature when it is not watched yet.
   */
  async watchPath(
    abs: string,
    isDir: boolean,
    onChange: () => void,
    stats?: BigIntStats,
  ): Promise<() => void> {
    await this.startTree();
    let entry = this.watched.get(abs);
    if (entry === undefined) {
      const sig = baselineSignature(this.root, abs, stats);
      entry = {
        abs,
        isDir,
        listeners: new Set(),
        statSig: sig.stat,
        digest: sig.digest,
        deferred: sig.deferred === true,
        timer: undefined,
        firstEventAt: 0,
      };
      this.watched.set(abs, entry);
      this.dirWatchers.retain(isDir ? abs : dirname(abs), !this.polling);
    }
    const listener = (): void => onChange();
    entry.listeners.add(listener);
    const current = entry;
    let stopped = false;
    return () => {
      if (stopped) return;
      stopped = true;
      current.listeners.delete(listener);
      if (current.listeners.size > 0 || this.watched.get(abs) !== current) return;
      this.watched.delete(abs);
      if (current.timer !== undefined) clearTimeout(current.timer);
      this.dirWatchers.release(isDir ? abs : dirname(abs));
      this.stopTreeIfIdle();
    };
  }

  async onListChanged(listener: () => void): Promise<() => void> {
    await this.startTree();
    const wrapped = (): void => listener();
    this.listListeners.add(wrapped);
    await this.syncTreePoller();
    let stopped = false;
    return () => {
      if (stopped) return;
      stopped = true;
      this.listListeners.delete(wrapped);
      void this.syncTreePoller();
      this.stopTreeIfIdle();
    };
  }

  /** Every tree event inside the root (what changed anywhere, not only subscribed paths), for the search index. */
  async onTreeChanges(listener: (events: TreeEvent[]) => void): Promise<() => void> {
    await this.startTree();
    const wrapped = (events: TreeEvent[]): void => listener(events);
    this.changeListeners.add(wrapped);
    // Polling: resolves once the poller's first scan holds every file's signature to diff against.
    await this.syncTreePoller();
    let stopped = false;
    return () => {
      if (stopped) return;
      stopped = true;
      this.changeListeners.delete(wrapped);
      void this.syncTreePoller();
      this.stopTreeIfIdle();
    };
  }

  /** Stops everything. */
  async close(): Promise<void> {
    for (const entry of this.watched.values())
      if (entry.timer !== undefined) clearTimeout(entry.timer);
    this.watched.clear();
    this.listListeners.clear();
    this.changeListeners.clear();
    this.dirWatchers.close();
    await this.stopTree();
  }

  // --- the tree -----------------------------------------------------------------------------

  private startTree(): Promise<unknown> {
    this.tree ??= this.subscribeTree();
    return this.tree;
  }

  private async subscribeTree(): Promise<{ unsubscribe(): Promise<void> } | undefined> {
    // A subscribe made while the previous unsubscribe is still running could share (or race) the
    // watches that unsubscribe then tears down (@parcel/watcher's did, and never heard an event).
    await this.stopping;
    if (!this.polling) {
      try {
        const backend = this.options.backend ?? directoryBackend;
        // What the server keeps below the root (its state directory, whose index it writes) is not
        // watched at all: its events would say nothing anyone may know, and would never stop.
        const reserved = this.rules.reservedPaths.map((rel) => join(this.root, ...rel.split('/')));
        const ignore = [...(this.options.includeGitDir === true ? [] : ['**/.git']), ...reserved];
        return await backend.subscribe(this.root, (events) => this.onTreeEvents(events), {
          ignore,
          onError: (error) => this.degrade(error),
        });
      } catch (error) {
        this.degrade(error);
      }
    }
    this.startPolling();
    return undefined;
  }

  private stopTreeIfIdle(): void {
    if (this.watched.size === 0 && this.listListeners.size === 0 && this.changeListeners.size === 0)
      void this.stopTree();
  }

  private async stopTree(): Promise<void> {
    const tree = this.tree;
    this.tree = undefined;
    if (this.poller !== undefined) clearInterval(this.poller);
    this.poller = undefined;
    this.stopTreePoller();
    const stopped = this.stopping.then(async () => {
      const subscription = await tree?.catch(() => undefined);
      await subscription
        ?.unsubscribe()
        .catch((error: unknown) =>
          this.logger.debug({ err: error }, 'unsubscribing a tree watcher'),
        );
    });
    this.stopping = stopped;
    await stopped;
  }

  private onTreeEvents(reported: TreeEvent[]): void {
    const events = reported.filter(
      (event) =>
        isInside(this.root, event.path) &&
        !this.rules.reservedPath(relativeKey(this.root, event.path)),
    );
    let listChanged = false;
    const changed: string[] = [];
    for (const event of events) {
      const path = event.path;
      if (this.changeListeners.size > 0 && path !== this.root) changed.push(path);
      if (this.watched.has(path)) this.touch(path);
      // A directory that moved, appeared or vanished takes its subscribed contents with it.
      if (event.type !== 'update') {
        for (const abs of this.watched.keys()) if (abs.startsWith(path + sep)) this.touch(abs);
        const parent = dirname(path);
        if (this.watched.get(parent)?.isDir === true) this.touch(parent);
        if (event.type === 'create' && !this.polling) this.dirWatchers.reopen(path);
      }
      if (!listChanged && this.affectsList(event)) listChanged = true;
    }
    if (listChanged) for (const listener of [...this.listListeners]) listener();
    if (this.changeListeners.size > 0) {
      const inside = events.filter((event) => event.path !== this.root);
      if (inside.length > 0) for (const listener of [...this.changeListeners]) listener(inside);
    }
  }

  private affectsList(event: TreeEvent): boolean {
    const rel = relativeKey(this.root, event.path);
    if (rel === '') return false;
    if (event.type === 'update')
      return basename(event.path) === '.gitignore' && !this.rules.excludedPath(rel, false);
    if (event.type === 'create') {
      const isDir = statSync(event.path, { throwIfNoEntry: false })?.isDirectory() ?? false;
      return !this.rules.excludedPath(rel, isDir);
    }
    return !this.rules.excludedPath(rel, false) || !this.rules.excludedPath(rel, true);
  }

  // --- settling --------------------------------------------------------------------------------

  private touch(abs: string): void {
    const entry = this.watched.get(abs);
    if (entry === undefined) return;
    const now = Date.now();
    if (entry.timer === undefined) entry.firstEventAt = now;
    else clearTimeout(entry.timer);
    const wait = now - entry.firstEventAt >= this.maxWaitMs ? 0 : this.settleMs;
    entry.timer = setTimeout(() => this.settle(entry, true), wait);
    entry.timer.unref();
  }

  private settle(entry: Watched, fromEvent: boolean): void {
    entry.timer = undefined;
    if (this.watched.get(entry.abs) !== entry) return;
    const sig = pathSignature(this.root, entry.abs, fromEvent);
    const statChanged = sig.stat !== entry.statSig;
    // Same inode, size and timestamps can still hide a rewrite within one timestamp tick: an event
    // makes the content digest decide — unless the baseline was taken from a settled stat, which
    // proves the content unchanged (no digest was taken then). A poll (no event) trusts the stat
    // signature alone.
    const changed = statChanged || (fromEvent && !entry.deferred && sig.digest !== entry.digest);
    entry.statSig = sig.stat;
    if (fromEvent) entry.digest = sig.digest;
    else if (statChanged) entry.digest = pathSignature(this.root, entry.abs, true).digest;
    if (fromEvent || statChanged) entry.deferred = false;
    if (!changed) return;
    for (const listener of [...entry.listeners]) listener();
  }

  // --- polling fallback ------------------------------------------------------------------------

  private degrade(error: unknown): void {
    if (!this.warned) {
      this.warned = true;
      this.logger.warn(
        { err: error, root: this.root },
        'native file watching is unavailable (OS watch limit?); polling this root instead',
      );
    }
    if (this.polling) return;
    this.polling = true;
    this.dirWatchers.suspend();
    if (this.tree !== undefined) this.startPolling();
  }

  private startPolling(): void {
    if (this.poller === undefined) {
      this.poller = setInterval(() => this.poll(), this.pollMs);
      this.poller.unref();
    }
    void this.syncTreePoller();
  }

  /** Subscribed paths: a stat each (and a digest when it moved), settled as any event would be. */
  private poll(): void {
    for (const entry of this.watched.values())
      if (entry.timer === undefined) this.settle(entry, false);
  }

  /**
   * Runs a TreePoller while polling and anyone listens for list or tree changes, tracking file
   * signatures while a tree-change listener is there; resolves once its first scan is done. A poller
   * that tracks files is kept when the last tree-change listener leaves but a list listener stays
   * (its idle cost is bounded either way; starting again would rescan the tree).
   */
  private syncTreePoller(): Promise<void> {
    const wanted =
      this.polling &&
      this.tree !== undefined &&
      (this.listListeners.size > 0 || this.changeListeners.size > 0);
    if (!wanted) {
      this.stopTreePoller();
      return Promise.resolve();
    }
    const files = this.changeListeners.size > 0;
    if (this.treePoller !== undefined && files && !this.treePoller.files) this.stopTreePoller();
    this.treePoller ??= new TreePoller(this.root, this.rules, (report) => this.onPolled(report), {
      intervalMs: this.pollMs,
      files,
    });
    return this.treePoller.ready;
  }

  private onPolled(report: PollReport): void {
    if (report.listChanged) for (const listener of [...this.listListeners]) listener();
    if (report.events.length > 0)
      for (const listener of [...this.changeListeners]) listener(report.events);
  }

  private stopTreePoller(): void {
    this.treePoller?.stop();
    this.treePoller = undefined;
  }
}
