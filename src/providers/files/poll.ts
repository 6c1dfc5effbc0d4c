/**
 * The polling fallback's view of a root's tree: which entries each served directory holds. It
 * answers one question — did anything appear in, or vanish from, the tree? — for list-change
 * notifications when native watching is off or refused.
 *
 * It never walks the tree in one go. The first scan reads the directories one at a time with async
 * calls; after that, each round only stats every known directory (a directory's mtime moves when an
 * entry is added, removed or renamed) and reads again just the ones that changed, plus the
 * `.gitignore` files whose edits change what is served. Its cost follows the number of directories,
 * not files, and is rate-bounded: at most `maxOpsPerSecond` filesystem calls, a few at a time, with
 * the event loop free between them; a round starts `intervalMs` after the last one ended.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Poller } from '../utils/poller.js';

export interface PollRules {
  excludedPath(rel: string, isDir: boolean): boolean;
}

export interface TreePollerOptions {
  /** Pause between rounds, ms. @default 1000 */
  intervalMs?: number;
  /** Most filesystem calls (stat, readdir) per second. @default 2000 */
  maxOpsPerSecond?: number;
  /** Calls in flight at once. @default 4 */
  concurrency?: number;
}

interface DirState {
  rel: string;
  /** mtime and ctime of the directory, and of its .gitignore when it has one. */
  signature: string;
  /** Served entries: name → is a directory. */
  entries: Map<string, boolean>;
}

export class TreePoller {
  private readonly dirs = new Map<string, DirState>();
  private readonly intervalMs: number;
  private readonly maxOps: number;
  private readonly concurrency: number;
  private poller: Poller | undefined;
  private stopped = false;
  private windowStart = 0;
  private opsInWindow = 0;
  /** Resolves when the first scan is done: changes after it are noticed. */
  readonly ready: Promise<void>;

  constructor(
    private readonly root: string,
    private readonly rules: PollRules,
    private readonly onChange: () => void,
    options: TreePollerOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? 1000;
    this.maxOps = options.maxOpsPerSecond ?? 2000;
    this.concurrency = options.concurrency ?? 4;
    // Rounds run on the kit's poller (one at a time, the next `intervalMs` after the last ended);
    // the pacing of calls within a round stays here (`spend`).
    this.ready = this.scan('').then(() => {
      if (!this.stopped) this.poller = new Poller({ intervalMs: this.intervalMs, check: () => this.round() });
    });
  }

  /** Directories known, for tests and stats. */
  get directories(): number {
    return this.dirs.size;
  }

  stop(): void {
    this.stopped = true;
    this.poller?.stop();
    this.poller = undefined;
  }

  /** One round: stat every known directory; read again those that changed. */
  private async round(): Promise<void> {
    let changed = false;
    const known = [...this.dirs.values()];
    for (let i = 0; i < known.length && !this.stopped; i += this.concurrency) {
      const batch = known.slice(i, i + this.concurrency).filter((dir) => this.dirs.get(dir.rel) === dir);
      const signatures = await Promise.all(batch.map((dir) => this.signature(dir.rel, dir.entries.has('.gitignore'))));
      for (const [j, dir] of batch.entries()) {
        if (signatures[j] === dir.signature) continue;
        if (await this.rescan(dir)) changed = true;
      }
    }
    if (changed && !this.stopped) this.onChange();
  }

  /** Reads a changed directory again; true when its served entries differ. */
  private async rescan(dir: DirState): Promise<boolean> {
    const before = dir.entries;
    const fresh = await this.read(dir.rel);
    if (fresh === undefined) {
      this.forget(dir.rel);
      return true;
    }
    let differs = fresh.entries.size !== before.size;
    for (const [name, isDir] of fresh.entries) {
      if (before.get(name) !== isDir) differs = true;
      if (isDir && !before.has(name)) await this.scan(childRel(dir.rel, name));
    }
    for (const [name, isDir] of before) if (isDir && fresh.entries.get(name) !== true) this.forget(childRel(dir.rel, name));
    // A .gitignore edit can change what every directory below serves: read them again.
    if (fresh.signature.split('|')[1] !== dir.signature.split('|')[1]) {
      await this.rescanBelow(dir.rel);
      differs = true;
    }
    this.dirs.set(dir.rel, fresh);
    return differs;
  }

  private async rescanBelow(rel: string): Promise<void> {
    for (const dir of [...this.dirs.values()]) {
      if (dir.rel === rel || !(rel === '' || dir.rel.startsWith(`${rel}/`))) continue;
      const fresh = await this.read(dir.rel);
      if (fresh === undefined) this.forget(dir.rel);
      else this.dirs.set(dir.rel, fresh);
    }
  }

  /** Reads `rel` and every served directory below it (a first scan, or a directory moving in). */
  private async scan(rel: string): Promise<void> {
    const pending = [rel];
    while (pending.length > 0 && !this.stopped) {
      const batch = pending.splice(0, this.concurrency);
      const states = await Promise.all(batch.map((dir) => this.read(dir)));
      for (const state of states) {
        if (state === undefined) continue;
        this.dirs.set(state.rel, state);
        for (const [name, isDir] of state.entries) if (isDir) pending.push(childRel(state.rel, name));
      }
    }
  }

  private async read(rel: string): Promise<DirState | undefined> {
    const abs = rel === '' ? this.root : join(this.root, rel);
    await this.spend();
    let list;
    try {
      list = await readdir(abs, { withFileTypes: true });
    } catch {
      return undefined;
    }
    const entries = new Map<string, boolean>();
    for (const entry of list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const isDir = entry.isDirectory();
      if (!this.rules.excludedPath(childRel(rel, entry.name), isDir)) entries.set(entry.name, isDir);
    }
    const signature = await this.signature(rel, entries.has('.gitignore'));
    return signature === undefined ? undefined : { rel, signature, entries };
  }

  /** The directory's mtime/ctime, and its .gitignore's when it has one; undefined when it is gone. */
  private async signature(rel: string, gitignore: boolean): Promise<string | undefined> {
    const abs = rel === '' ? this.root : join(this.root, rel);
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

  private forget(rel: string): void {
    for (const key of [...this.dirs.keys()]) if (key === rel || key.startsWith(`${rel}/`) || rel === '') this.dirs.delete(key);
  }

  /** Waits, when this second's budget of calls is spent, for the next second. */
  private async spend(): Promise<void> {
    const now = Date.now();
    if (now - this.windowStart >= 1000) {
      this.windowStart = now;
      this.opsInWindow = 0;
    }
    this.opsInWindow += 1;
    if (this.opsInWindow <= this.maxOps) return;
    const wait = 1000 - (now - this.windowStart);
    await new Promise<void>((done) => setTimeout(done, Math.max(wait, 1)).unref());
    this.windowStart = Date.now();
    this.opsInWindow = 1;
  }
}

function childRel(rel: string, name: string): string {
  return rel === '' ? name : `${rel}/${name}`;
}
