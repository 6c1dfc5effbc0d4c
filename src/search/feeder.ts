/**
 * Keeps the index in step with the sources. On start each indexed mount is reconciled: its list is
 * walked and compared with the stored signatures (size and modification time, or the content where
 * the source reports no time), so an unchanged tree costs one walk and no reads, and what changed
 * while the server was down is caught up. Then the provider's change events — the same detection
 * that serves subscriptions — feed it live: changed resources are re-read, vanished ones removed, a
 * directory that appeared or moved in reconciles its own subtree (`Provider.listUnder`; its whole
 * mount where the provider cannot list a subtree), so a file in a new directory is as quick to find
 * as any other, whatever the size of the mount.
 *
 * Work runs in slices of about SLICE_MS with the event loop released between them, so reads and
 * searches are answered while a large build or a burst of changes is absorbed. A change heard while
 * a build runs is not queued behind it: between two resources of the build (and before its next
 * batch is sent) the changes heard are indexed and written on their own, after at most the build's
 * batch in flight, then queued again to run once more after the build (what the build read before
 * the change must not stay over it).
 */
import type { Provider, ResourceChange, ResourceInfo } from '../core/types.js';
import { buildDoc, listedSignature, textKey } from './document.js';
import type { IndexWriter, MountLeases } from './backend.js';
import { readForIndex, type AheadItem, type ReadForIndex } from './feeder-read.js';
import { Batches } from './batches.js';
import { MountHearing } from './feeder-hearing.js';
import { reconcile, type ReconcileHost } from './feeder-reconcile.js';
import { TaskQueue } from './feeder-tasks.js';
import { isChange, type FeederOptions, type Progress, type Task } from './feeder-types.js';
import type { NewDoc } from './store.js';

export type { FeederOptions, Progress } from './feeder-types.js';

const SLICE_MS = 12;

export class Feeder {
  readonly progress: Progress = {
    done: 0,
    total: 0,
    bytes: 0,
    building: false,
    startedAt: Date.now(),
  };
  private readonly tasks = new TaskQueue();
  /** The mounts heard, and how to stop hearing them. */
  private readonly hearing: MountHearing;
  private readonly listeners = new Set<() => void>();
  private running: Promise<void> | undefined;
  private closed = false;
  private readonly abort = new AbortController();
  /** What is queued for the index, and the batch being written while the next is read. */
  private readonly queuedDocs: Batches;
  /** The documents of changes run ahead of a build, written apart from the build's batches. */
  private readonly changeDocs: Batches;
  private sliceStart = 0;
  /** A whole mount is being reconciled (a build): changes heard meanwhile are run ahead of it. */
  private inBuild = false;
  /** Changes are being run ahead of the build (their documents go to `changeDocs`). */
  private aheadOfBuild = false;
  /** A change was queued since the build last looked. */
  private changesHeard = false;
  /** What a reconcile (feeder-reconcile.ts) uses of this feeder. */
  private readonly host: ReconcileHost;

  constructor(
    /** The index writer (replaced when the index is rebuilt, with a new feeder). */
    private readonly writer: () => IndexWriter,
    private readonly mounts: readonly Provider[],
    private readonly options: FeederOptions,
  ) {
    this.queuedDocs = new Batches(writer);
    this.changeDocs = new Batches(writer);
    this.host = {
      batches: () => this.batches,
      store: () => this.store,
      signal: this.abort.signal,
      options,
      progress: this.progress,
      isClosed: () => this.closed,
      settle: (next) => this.settle(next),
      pace: () => this.pace(),
      queue: (doc) => this.queue(doc),
      remove: async (uris) => {
        // One at a time: a batch is sent as soon as it is full, never past it.
        for (const uri of uris) {
          this.batches.remove([uri]);
          await this.sendIfFull();
        }
      },
    };
    this.hearing = new MountHearing(
      mounts,
      {
        enqueue: (task) => this.enqueue(task),
        queued: (mount) => this.tasks.queued(mount),
        forget: (mount) => this.tasks.forget(mount),
        isClosed: () => this.closed,
      },
      options.logger,
    );
  }

  /**
   * Subscribes to every mount's changes, then reconciles each one. Resolves when the build is done.
   * Where the index is shared (`leases`), only the mounts whose lease this instance holds are fed;
   * a lease taken later has its mount subscribed and caught up then, a lease lost stops it.
   */
  async start(leases?: MountLeases): Promise<void> {
    Object.assign(this.progress, {
      done: 0,
      total: 0,
      bytes: 0,
      building: true,
      startedAt: Date.now(),
    });
    delete this.progress.partial;
    const fed = this.mounts.filter((m) => leases === undefined || leases.holds(m.root));
    if (leases !== undefined) this.hearing.follow(leases);
    for (const mount of fed) {
      await this.hearing.subscribe(mount);
      if (this.closed) return;
    }
    if (this.closed) return;
    if (fed.length > 0) {
      try {
        await this.store.keepMounts(this.mounts.map((m) => m.root));
      } catch (error) {
        if (!this.store.isWriteFailure(error)) throw error;
        this.writeFailed(error);
      }
    }
    for (const mount of fed) this.tasks.push({ kind: 'reconcile', mount });
    this.tasks.push({ kind: 'built' });
    await this.kick();
  }

  private get store(): IndexWriter {
    return this.writer();
  }

  /** Where documents are queued now: a change run ahead of the build writes its own. */
  private get batches(): Batches {
    return this.aheadOfBuild ? this.changeDocs : this.queuedDocs;
  }

  /** Calls `listener` after every slice of work and whenever the queue runs dry (progress moved). */
  onProgress(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves when no work is queued. */
  async idle(): Promise<void> {
    while (this.running !== undefined) await this.running;
  }

  close(): void {
    this.closed = true;
    this.abort.abort();
    this.hearing.close();
    this.listeners.clear();
  }

  private enqueue(task: Task): void {
    if (this.closed) return;
    this.tasks.push(task);
    if (isChange(task)) this.changesHeard = true;
    this.kickInBackground();
  }

  /**
   * Starts the drain for work nobody awaits: a write it could not make (an index statement past its
   * deadline, a lost connection) is logged, never left an unhandled rejection.
   */
  private kickInBackground(): void {
    this.kick().catch((error: unknown) => {
      if (!this.closed)
        this.options.logger.warn({ err: error }, 'search index: could not write to the index');
    });
  }

  private kick(): Promise<void> {
    this.running ??= this.drain().finally(() => {
      this.running = undefined;
      // A task queued while the drain's last flush was being written found it still running and
      // started nothing: start again for it (a slow index write made this window wide).
      if (this.tasks.length > 0 && !this.closed) this.kickInBackground();
    });
    return this.running;
  }

  private async drain(): Promise<void> {
    this.sliceStart = Date.now();
    while (!this.closed) {
      const task = this.tasks.shift();
      if (task === undefined) break;
      if (!(await this.run(task))) return;
    }
    try {
      await this.flush();
    } catch (error) {
      if (!this.store.isWriteFailure(error)) throw error;
      this.writeFailed(error);
    }
    this.emit();
  }

  /** Runs one task; false when the feeder was closed meanwhile. */
  private async run(task: Task): Promise<boolean> {
    try {
      if (task.kind === 'built') {
        await this.flush();
        this.progress.building = false;
        this.emit();
      } else if (task.kind === 'reconcile') {
        this.inBuild = true;
        try {
          await this.reconcile(task.mount);
        } finally {
          this.inBuild = false;
        }
      } else if (task.kind === 'subtree') await this.reconcile(task.mount, task.uri);
      else await this.apply(task.mount, task.changes);
    } catch (error) {
      if (this.closed) return false;
      if (task.kind === 'built') this.progress.building = false;
      if (this.store.isWriteFailure(error)) this.writeFailed(error);
      else
        this.options.logger.warn(
          { err: error, source: task.kind === 'built' ? undefined : task.mount.root },
          'search index: could not index a source',
        );
    }
    return true;
  }

  /**
   * Runs the changes heard during a build ahead of it (those it queues too, a new directory's
   * subtree), then writes their documents — after the build's batch in flight, before its next — and
   * queues each again, to run once more after the build.
   */
  private async runChangesAhead(): Promise<void> {
    this.changesHeard = false;
    this.aheadOfBuild = true;
    try {
      let ran = false;
      for (;;) {
        const task = this.closed ? undefined : this.tasks.takeChangeAhead();
        if (task === undefined) break;
        if (!(await this.run(task))) return;
        this.tasks.push({ ...task, again: true });
        ran = true;
      }
      if (!ran || this.closed) return;
      await this.queuedDocs.settle();
      await this.changeDocs.flush(true, this.closed);
    } finally {
      this.aheadOfBuild = false;
    }
  }

  /** Whether the build should stop for the changes heard since it last looked. */
  private get changesWaiting(): boolean {
    return this.changesHeard && this.inBuild && !this.aheadOfBuild;
  }

  /**
   * A write to the index failed (disk full, I/O error, read-only): the index is marked partial, said
   * once in the log, and the build stops reading sources whose words could not be kept — only its
   * end stays queued. Later changes are still tried.
   */
  private writeFailed(error: unknown): void {
    const { code, message } = error as { code: string; message: string };
    if (this.progress.partial === undefined) {
      this.progress.partial = { code, message };
      this.options.logger.error(
        { err: error },
        `search index: cannot write the index (${code}: ${message}); it is partial and searches may miss matches`,
      );
    }
    this.tasks.dropReconciles();
  }

  /** Reconciles a mount, or only what it lists under the container `under`. */
  private reconcile(mount: Provider, under?: string): Promise<void> {
    return reconcile(this.host, mount, under);
  }

  /** Indexes one resource a reconcile read ahead, then counts it and paces. */
  private async settle(next: AheadItem): Promise<void> {
    await this.index(next.mount, next.info, next.listed, next.stored, next.extra, next.read);
    this.progress.done += 1;
    await this.pace();
  }

  private async apply(mount: Provider, changes: readonly ResourceChange[]): Promise<void> {
    for (const change of changes) {
      if (change.container === true) {
        if (mount.listUnder === undefined || change.uri === mount.root) {
          if (!this.tasks.queued(mount)) this.tasks.push({ kind: 'reconcile', mount });
        } else if (!this.tasks.queued(mount, change.uri)) {
          this.tasks.push({ kind: 'subtree', mount, uri: change.uri });
        }
      } else if (change.info === undefined) {
        await this.flush();
        this.batches.remove(await this.store.under(change.uri));
      } else {
        await this.index(mount, change.info, listedSignature(change.info), undefined);
      }
      await this.pace();
    }
  }

  /**
   * Queues one resource's document: its text read from the source, or — when its content id names
   * a text already indexed — that text, unread. The name and path alone when the text is not
   * indexable.
   */
  private async index(
    mount: Provider,
    info: ResourceInfo,
    listed: string | undefined,
    stored: string | undefined,
    extra?: string,
    readAhead?: Promise<ReadForIndex>,
  ): Promise<void> {
    const key = extra === undefined ? textKey(info) : `uri:${info.uri}`;
    if (
      listed !== undefined &&
      info.contentId !== undefined &&
      extra === undefined &&
      (this.batches.holds(key) || (await this.stored(key)))
    ) {
      this.queue(buildDoc(info, mount.root, listed, this.options.segmenter, { key }));
      return;
    }
    const read =
      (await readAhead) ??
      (await readForIndex(mount, info, listed, this.options, this.abort.signal, extra));
    if (read.kind === 'gone') {
      this.batches.remove([info.uri]);
      return;
    }
    if (read.kind === 'read' && listed === undefined && read.sig === stored) return;
    const sig = read.sig;
    const text = read.text === '' && extra !== undefined ? extra : read.text;
    this.queue(
      buildDoc(info, mount.root, sig ?? 'name-only', this.options.segmenter, { key, text }),
    );
    await this.sendIfFull();
  }

  /** Sends the batch queued once it is full (the build's only once the changes heard ran ahead). */
  private async sendIfFull(): Promise<void> {
    if (!this.batches.full) return;
    if (this.inBuild && !this.aheadOfBuild) {
      // The build's next batch waits for the changes heard while the last one was written.
      await this.batches.settle();
      if (this.changesWaiting) await this.runChangesAhead();
    }
    await this.batches.flush(false, this.closed);
  }

  /** Whether the text `key` is in the index, the batch in flight included. */
  private async stored(key: string): Promise<boolean> {
    await this.batches.settle();
    return this.store.hasText(key);
  }

  private queue(doc: NewDoc): void {
    this.batches.add(doc);
    if (doc.text?.body !== undefined && this.progress.building)
      this.progress.bytes += doc.text.bytes;
  }

  /** Reports progress and yields the event loop when the slice has run long enough (writes go by batch). */
  private async pace(): Promise<void> {
    if (this.changesWaiting) await this.runChangesAhead();
    if (Date.now() - this.sliceStart < SLICE_MS) return;
    this.emit();
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.sliceStart = Date.now();
  }

  /**
   * Writes what is queued and waits until it is written — outside a run of changes ahead of a build,
   * also change documents left queued there (the build's batch failed before they were written).
   */
  private async flush(): Promise<void> {
    await this.batches.flush(true, this.closed);
    if (!this.aheadOfBuild) await this.changeDocs.flush(true, this.closed);
  }

  private emit(): void {
    for (const listener of [...this.listeners]) listener();
  }
}
