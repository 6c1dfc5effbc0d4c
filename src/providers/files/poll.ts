/**
 * The polling fallback's view of a root's tree: which entries each served directory holds and, when
 * asked (`files`), each served file's stat signature. It answers two questions for the watcher —
 * did anything appear in, or vanish from, the tree (list changes)? and which files were created,
 * changed or deleted (for the search index and skills catalogs)?
 *
 * It never walks the tree in one go. The first scan reads the directories one at a time with async
 * calls. After that, each round stats every known directory (a directory's mtime moves when an entry
 * is added, removed or renamed) and reads again just the ones that changed, plus the `.gitignore`
 * files whose edits change what is served. A write inside a file moves no directory, so with `files`
 * each round also re-stats a bounded slice of the files (`fileStatsPerRound`), going round the tree:
 * adds, removes and renames are seen within a round, an edit within `files / fileStatsPerRound`
 * rounds. The cost follows the number of directories plus that slice, not the tree's size, and is
 * rate-bounded: at most `maxOpsPerSecond` filesystem calls (the first scan `scanOpsPerSecond`), a few
 * at a time, with the event loop free between them; a round starts `intervalMs` after the last ended.
 */
import { createHash } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Poller } from '../utils/poller.js';

export interface PollRules {
  excludedPath(rel: string, isDir: boolean): boolean;
  /** The same test for the entries of one served directory, prepared once for all of them. */
  entriesOf?(rel: string): (name: string, isDir: boolean) => boolean;
}

/** A served file that appeared, changed or vanished (absolute path), as the tree watcher reports it. */
export interface PolledEvent {
  type: 'create' | 'update' | 'delete';
  path: string;
}

/** What one round found: whether the list of served entries moved, and (with `files`) which files changed. */
export interface PollReport {
  listChanged: boolean;
  events: PolledEvent[];
}

export interface TreePollerOptions {
  /** Pause between rounds, ms. @default 1000 */
  intervalMs?: number;
  /** Most filesystem calls (stat, readdir) per second after the first scan. @default 2000 */
  maxOpsPerSecond?: number;
  /** Most filesystem calls per second during the first scan (still async, a few at a time). @default 20000 */
  scanOpsPerSecond?: number;
  /** Calls in flight at once. @default 4 */
  concurrency?: number;
  /** Track each served file's size, mtime, ctime and inode too, and report file events. @default false */
  files?: boolean;
  /** With `files`: how many files a round re-stats, continuing where the last round stopped. @default 500 */
  fileStatsPerRound?: number;
}

interface DirState {
  rel: string;
  /** mtime and ctime of the directory, and of its .gitignore when it has one. */
  signature: string;
  /**
   * Served entries, held compactly: a digest of every served name (and whether it is a directory),
   * the subdirectories' names, and whether a .gitignore is among them. A 1M-file tree keeps a few
   * hundred bytes a directory, not a string a file (56 MB of heap before).
   */
  digest: string;
  subdirs: Set<string>;
  gitignore: boolean;
  /** With `files`: served file name → its stat signature. */
  files: Map<string, string> | undefined;
}

export class TreePoller {
  private readonly dirs = new Map<string, DirState>();
  private readonly intervalMs: number;
  private readonly maxOps: number;
  private readonly concurrency: number;
  private readonly fileStatsPerRound: number;
  /** The calls allowed per second now: the first scan's rate, then the idle rate. */
  private opsLimit: number;
  private poller: Poller | undefined;
  private stopped = false;
  private windowStart = 0;
  private opsInWindow = 0;
  /** Where the file sweep resumes: directories still to visit this pass, and the offset in the first. */
  private sweep: string[] = [];
  private sweepOffset = 0;
  /** The names of the directory the sweep is in, taken once when it got there. */
  private sweepNames: string[] | undefined;
  /** Resolves when the first scan is done: changes after it are noticed. */
  readonly ready: Promise<void>;
  /** Whether file signatures are tracked (fixed for the poller's life). */
  readonly files: boolean;

  constructor(
    private readonly root: string,
    private readonly rules: PollRules,
    private readonly onChange: (report: PollReport) => void,
    options: TreePollerOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? 1000;
    this.maxOps = options.maxOpsPerSecond ?? 2000;
    this.opsLimit = Math.max(options.scanOpsPerSecond ?? 20_000, this.maxOps);
    this.concurrency = options.concurrency ?? 4;
    this.files = options.files ?? false;
    this.fileStatsPerRound = options.fileStatsPerRound ?? 500;
    // Rounds run on the kit's poller (one at a time, the next `intervalMs` after the last ended);
    // the pacing of calls within a round stays here (`spend`).
    this.ready = this.scan('', undefined).then(() => {
      this.opsLimit = this.maxOps;
      if (!this.stopped)
        this.poller = new Poller({ intervalMs: this.intervalMs, check: () => this.round() });
    });
  }

  /** Directories known, for tests and stats. */
  get directories(): number {
    return this.dirs.size;
  }

  /** Rounds run and filesystem calls made so far, for tests and stats. */
  readonly counters = { rounds: 0, calls: 0 };

  /** Served files known (with `files`), for tests and stats. */
  get fileCount(): number {
    let count = 0;
    for (const dir of this.dirs.values()) count += dir.files?.size ?? 0;
    return count;
  }

  stop(): void {
    this.stopped = true;
    this.poller?.stop();
    this.poller = undefined;
  }

  /** One round: stat every known directory and read again those that changed; then a slice of files. */
  private async round(): Promise<void> {
    const events: PolledEvent[] = [];
    let listChanged = false;
    this.counters.rounds += 1;
    const known = [...this.dirs.values()];
    for (let i = 0; i < known.length && !this.stopped; i += this.concurrency) {
      const batch = known
        .slice(i, i + this.concurrency)
        .filter((dir) => this.dirs.get(dir.rel) === dir);
      const signatures = await Promise.all(
        batch.map((dir) => this.signature(dir.rel, dir.gitignore)),
      );
      for (const [j, dir] of batch.entries()) {
        if (signatures[j] === dir.signature || this.dirs.get(dir.rel) !== dir) continue;
        if (await this.rescan(dir, events)) listChanged = true;
      }
    }
    if (this.files && !this.stopped) await this.sweepFiles(events);
    if (this.stopped || (!listChanged && events.length === 0)) return;
    this.onChange({ listChanged, events });
  }

  /** Re-stats up to `fileStatsPerRound` files, resuming where the last round stopped; reports edits. */
  private async sweepFiles(events: PolledEvent[]): Promise<void> {
    let budget = this.fileStatsPerRound;
    while (budget > 0 && !this.stopped) {
      if (this.sweep.length === 0) {
        this.sweep = [...this.dirs.keys()];
        this.sweepOffset = 0;
        this.sweepNames = undefined;
        if (this.sweep.length === 0) return;
      }
      const dir = this.dirs.get(this.sweep[0]!);
      this.sweepNames ??= dir?.files === undefined ? [] : [...dir.files.keys()];
      const names = this.sweepNames.slice(
        this.sweepOffset,
        this.sweepOffset + Math.min(budget, this.concurrency),
      );
      if (dir === undefined || names.length === 0) {
        this.sweep.shift();
        this.sweepOffset = 0;
        this.sweepNames = undefined;
        // An empty pass (no files anywhere) ends the round rather than spinning.
        if (this.sweep.length === 0) return;
        continue;
      }
      this.sweepOffset += names.length;
      budget -= names.length;
      const signatures = await Promise.all(names.map((name) => this.fileSignature(dir.rel, name)));
      // The directory may have been read again meanwhile: compare only with what is still current.
      if (this.dirs.get(dir.rel) !== dir) continue;
      for (const [j, name] of names.entries()) {
        const before = dir.files!.get(name);
        const after = signatures[j];
        if (before === undefined || after === undefined || after === before) continue;
        dir.files!.set(name, after);
        events.push({ type: 'update', path: this.abs(childRel(dir.rel, name)) });
      }
    }
  }

  /** Reads a changed directory again; true when its served entries differ. */
  private async rescan(dir: DirState, events: PolledEvent[]): Promise<boolean> {
    const fresh = await this.read(dir.rel);
    if (fresh === undefined) {
      this.forget(dir.rel, events);
      return true;
    }
    let differs = await this.replace(dir, fresh, events);
    // A .gitignore edit can change what every directory below serves: read them again.
    if (fresh.signature.split('|')[1] !== dir.signature.split('|')[1]) {
      await this.rescanBelow(dir.rel, events);
      differs = true;
    }
    return differs;
  }

  /**
   * Puts `fresh` in place of `before`: scans directories that appeared, forgets those that went,
   * and reports files created, changed or deleted. True when the served entries differ.
   */
  private async replace(
    before: DirState,
    fresh: DirState,
    events: PolledEvent[],
  ): Promise<boolean> {
    const differs = fresh.digest !== before.digest;
    this.dirs.set(fresh.rel, fresh);
    for (const name of before.subdirs)
      if (!fresh.subdirs.has(name)) this.forget(childRel(before.rel, name), events);
    for (const name of fresh.subdirs)
      if (!before.subdirs.has(name)) await this.scan(childRel(fresh.rel, name), events);
    if (fresh.files !== undefined) {
      const old = before.files ?? new Map<string, string>();
      for (const [name, sig] of fresh.files) {
        const was = old.get(name);
        if (was === undefined)
          events.push({ type: 'create', path: this.abs(childRel(fresh.rel, name)) });
        else if (was !== sig)
          events.push({ type: 'update', path: this.abs(childRel(fresh.rel, name)) });
      }
      for (const name of old.keys())
        if (!fresh.files.has(name))
          events.push({ type: 'delete', path: this.abs(childRel(fresh.rel, name)) });
    }
    return differs;
  }

  private async rescanBelow(rel: string, events: PolledEvent[]): Promise<void> {
    for (const dir of [...this.dirs.values()]) {
      if (dir.rel === rel || !(rel === '' || dir.rel.startsWith(`${rel}/`))) continue;
      if (this.dirs.get(dir.rel) !== dir) continue; // forgotten or replaced while this ran
      const fresh = await this.read(dir.rel);
      if (fresh === undefined) this.forget(dir.rel, events);
      else await this.replace(dir, fresh, events);
    }
  }

  /**
   * Reads `rel` and every served directory below it (the first scan, or a directory moving in);
   * with `events`, reports each file found as created.
   */
  private async scan(rel: string, events: PolledEvent[] | undefined): Promise<void> {
    const pending = [rel];
    while (pending.length > 0 && !this.stopped) {
      const batch = pending.splice(0, this.concurrency);
      const states = await Promise.all(batch.map((dir) => this.read(dir)));
      for (const state of states) {
        if (state === undefined) continue;
        const before = this.dirs.get(state.rel);
        if (before !== undefined && events !== undefined) {
          await this.replace(before, state, events);
          continue;
        }
        this.dirs.set(state.rel, state);
        if (events !== undefined && state.files !== undefined) {
          for (const name of state.files.keys())
            events.push({ type: 'create', path: this.abs(childRel(state.rel, name)) });
        }
        for (const name of state.subdirs) pending.push(childRel(state.rel, name));
      }
    }
  }

  private async read(rel: string): Promise<DirState | undefined> {
    const abs = this.abs(rel);
    await this.spend();
    let list;
    try {
      list = await readdir(abs, { withFileTypes: true });
    } catch {
      return undefined;
    }
    const digest = createHash('sha1');
    const subdirs = new Set<string>();
    const names: string[] = [];
    const excluded =
      this.rules.entriesOf?.(rel) ??
      ((name: string, isDir: boolean) => this.rules.excludedPath(childRel(rel, name), isDir));
    for (const entry of list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const isDir = entry.isDirectory();
      if (excluded(entry.name, isDir)) continue;
      digest.update(`${isDir ? 'd' : 'f'}${entry.name}\0`);
      if (isDir) subdirs.add(entry.name);
      else names.push(entry.name);
    }
    const gitignore = names.includes('.gitignore');
    const signature = await this.signature(rel, gitignore);
    if (signature === undefined) return undefined;
    let files: Map<string, string> | undefined;
    if (this.files) {
      files = new Map();
      for (let i = 0; i < names.length && !this.stopped; i += this.concurrency) {
        const batch = names.slice(i, i + this.concurrency);
        const signatures = await Promise.all(batch.map((name) => this.fileSignature(rel, name)));
        for (const [j, name] of batch.entries())
          if (signatures[j] !== undefined) files.set(name, signatures[j]!);
      }
    }
    return { rel, signature, digest: digest.digest('base64'), subdirs, gitignore, files };
  }

  /** The directory's mtime/ctime, and its .gitignore's when it has one; undefined when it is gone. */
  private async signature(rel: string, gitignore: boolean): Promise<string | undefined> {
    const abs = this.abs(rel);
    await this.spend();
    const dir = await stat(abs, { bigint: true }).catch(() => undefined);
    if (dir === undefined || !dir.isDirectory()) return undefined;
    let ignore = '';
    if (gitignore) {
      await this.spend();
      const file = await stat(join(abs, '.gitignore'), { bigint: true }).catch(() => undefined);
      ignore = file === undefined ? 'gone' : `${file.mtimeNs}:${file.ctimeNs}:${file.size}`;
    }
    return `${dir.mtimeNs}:${dir.ctimeNs}:${dir.ino}|${ignore}`;
  }

  /** A file's inode, size, mtime and ctime (following a link); undefined when gone or not a file. */
  private async fileSignature(rel: string, name: string): Promise<string | undefined> {
    await this.spend();
    // Numbers, not bigints: a fraction of the cost, and mtime/ctime keep sub-millisecond precision.
    const file = await stat(this.abs(childRel(rel, name))).catch(() => undefined);
    if (file === undefined || file.isDirectory()) return undefined;
    return `${file.ino}:${file.size}:${file.mtimeMs}:${file.ctimeMs}`;
  }

  /** Drops `rel` and everything below it; with `files`, reports each file it held as deleted. */
  private forget(rel: string, events: PolledEvent[]): void {
    for (const [key, dir] of [...this.dirs]) {
      if (!(key === rel || key.startsWith(`${rel}/`) || rel === '')) continue;
      this.dirs.delete(key);
      if (dir.files !== undefined)
        for (const name of dir.files.keys())
          events.push({ type: 'delete', path: this.abs(childRel(key, name)) });
    }
  }

  private abs(rel: string): string {
    return rel === '' ? this.root : join(this.root, rel);
  }

  /** Waits, when this second's budget of calls is spent, for the next second. */
  private async spend(): Promise<void> {
    this.counters.calls += 1;
    const now = Date.now();
    if (now - this.windowStart >= 1000) {
      this.windowStart = now;
      this.opsInWindow = 0;
    }
    this.opsInWindow += 1;
    if (this.opsInWindow <= this.opsLimit) return;
    const wait = 1000 - (now - this.windowStart);
    await new Promise<void>((done) => setTimeout(done, Math.max(wait, 1)).unref());
    this.windowStart = Date.now();
    this.opsInWindow = 1;
  }
}

function childRel(rel: string, name: string): string {
  return rel === '' ? name : `${rel}/${name}`;
}
