/**
 * `annotations.lastModified` of listed git files: the committer date of the last commit that
 * touched each path, reachable from the listed commit. One `git log --name-only` pass per list page
 * covers all of the page's paths (as literal pathspecs), streamed and stopped as soon as every path
 * has been seen; dates are cached per listed commit, so paging on, or listing again, runs nothing.
 * The page waits at most its budget; a pass still running then completes for the next page.
 */
import { spawn } from 'node:child_process';
import type { ResourceInfo } from '../../core/types.js';
import { gitArgs } from './exec.js';
import type { Repository } from './repo.js';
import { waitAtMost } from '../utils/wait-at-most.js';

/** Pathspec bytes per `git log` process (well under the kernel's argument limits). */
const ARGUMENT_BYTES = 256 * 1024;
/** Commits whose dates are kept (the listed commit and the ones it moved from). */
const COMMITS_KEPT = 4;

export interface Dated {
  item: ResourceInfo;
  path: string;
}

export class LastModified {
  /** commit → path → ISO date ('' when the walk ended without it). */
  private readonly dates = new Map<string, Map<string, string>>();
  /** commit → paths a running pass is looking for. */
  private readonly pending = new Map<string, Set<string>>();
  private readonly running = new Set<() => void>();

  constructor(private readonly repo: Repository) {}

  /** Dates the items of a page of `commit`; waits for a pass at most `budgetMs`. */
  async annotate(commit: string, listed: readonly Dated[], budgetMs: number): Promise<void> {
    const known = this.datesOf(commit);
    const pending = this.pending.get(commit);
    const missing = listed
      .map((entry) => entry.path)
      .filter((path) => !known.has(path) && pending?.has(path) !== true);
    if (missing.length > 0) await waitAtMost(this.run(commit, missing), budgetMs);
    for (const { item, path } of listed) {
      const date = known.get(path);
      if (date !== undefined && date !== '')
        item.annotations = { ...item.annotations, lastModified: date };
    }
  }

  /** Stops every running pass. */
  close(): void {
    for (const stop of this.running) stop();
    this.running.clear();
  }

  private datesOf(commit: string): Map<string, string> {
    let known = this.dates.get(commit);
    if (known === undefined) {
      known = new Map();
      this.dates.set(commit, known);
      while (this.dates.size > COMMITS_KEPT) this.dates.delete(this.dates.keys().next().value!);
    }
    return known;
  }

  /** Passes over `paths` in batches that fit on a command line, one after another. */
  private async run(commit: string, paths: string[]): Promise<void> {
    let pending = this.pending.get(commit);
    if (pending === undefined) this.pending.set(commit, (pending = new Set()));
    for (const path of paths) pending.add(path);
    try {
      let start = 0;
      while (start < paths.length) {
        let end = start;
        let bytes = 0;
        while (end < paths.length && (end === start || bytes + paths[end]!.length < ARGUMENT_BYTES))
          bytes += paths[end++]!.length + 1;
        await this.pass(commit, paths.slice(start, end));
        start = end;
      }
    } finally {
      for (const path of paths) pending.delete(path);
      if (pending.size === 0) this.pending.delete(commit);
    }
  }

  /** One streamed `git log` over `paths`: the first commit naming a path dates it. */
  private async pass(commit: string, paths: string[]): Promise<void> {
    const { cwd, env, timeoutMs } = await this.repo.processOptions();
    const known = this.datesOf(commit);
    const wanted = new Set(paths);
    const args = gitArgs([
      'log',
      '--no-renames',
      '--name-only',
      '-z',
      '--format=%x01%cI',
      commit,
      '--',
      ...paths,
    ]);
    await new Promise<void>((resolve) => {
      const child = spawn('git', args, { cwd, env, stdio: ['ignore', 'pipe', 'ignore'] });
      let date = '';
      let rest = '';
      const stop = (): void => {
        child.kill('SIGKILL');
      };
      const timer = setTimeout(stop, timeoutMs);
      this.running.add(stop);
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (chunk: string) => {
        const tokens = (rest + chunk).split('\0');
        rest = tokens.pop()!;
        for (const token of tokens) {
          if (token.startsWith('\x01')) {
            date = token.slice(1).trim();
            continue;
          }
          const path = token.startsWith('\n') ? token.slice(1) : token;
          if (date === '' || !wanted.delete(path)) continue;
          known.set(path, new Date(date).toISOString());
        }
        if (wanted.size === 0) stop();
      });
      const done = (): void => {
        clearTimeout(timer);
        this.running.delete(stop);
        resolve();
      };
      child.once('error', done);
      child.once('close', (code) => {
        // A walk that ended: what it never named is not in this history (a shallow clone's edge).
        if (code === 0) for (const path of wanted) known.set(path, '');
        done();
      });
    });
  }
}
