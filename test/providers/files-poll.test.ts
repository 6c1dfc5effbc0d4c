// Pins the polling fallback's tree poller (providers/files/poll.ts): after its first scan it
// notices a file added, removed or renamed, a directory (with contents) moving in, and a .gitignore
// edit — one notification per round — and ignores changes inside a file, excluded paths and an idle
// tree. Tracking files (for the search index), it reports each file created, edited, deleted or
// renamed, re-stating only a bounded slice of files a round. It stays within its budget of filesystem calls per second, and once stopped it calls nobody.
// (End to end, through the SDK client in both eras, polling is pinned by test/subscriptions/limits.test.ts.)
import { mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { IgnoreRules } from '../../src/providers/files/ignore.js';
import { TreePoller, type PollReport, type PollRules } from '../../src/providers/files/poll.js';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { waitFor } from '../subscriptions/harness.js';

const rules: PollRules = {
  excludedPath: (rel) => rel === 'skip' || rel.startsWith('skip/') || rel.endsWith('.tmp'),
};

let root: string;
let poller: TreePoller | undefined;
let changes = 0;

beforeEach(() => {
  root = makeTempDir();
  writeTree(root, { 'a.txt': 'a', 'dir/b.txt': 'b', 'dir/deep/c.txt': 'c', 'skip/x.txt': 'x' });
  changes = 0;
});

afterEach(() => {
  poller?.stop();
  poller = undefined;
  removeTree(root);
});

async function started(
  options: ConstructorParameters<typeof TreePoller>[3] = { intervalMs: 20 },
): Promise<TreePoller> {
  poller = new TreePoller(root, rules, () => (changes += 1), options);
  await poller.ready;
  return poller;
}

/** Waits for the next notification after `action`, then checks no second one follows the same round. */
async function notifiedBy(action: () => void): Promise<void> {
  const before = changes;
  action();
  await waitFor(() => changes > before, 'a list change');
  expect(changes).toBe(before + 1);
}

describe('tree poller', () => {
  it('knows every served directory after its first scan, and none that is excluded', async () => {
    expect((await started()).directories).toBe(3); // root, dir, dir/deep
  });

  it('notices a file added, removed and renamed, deep in the tree', async () => {
    await started();
    await notifiedBy(() => writeFileSync(join(root, 'dir/deep/new.txt'), 'n'));
    await notifiedBy(() => rmSync(join(root, 'a.txt')));
    await notifiedBy(() => renameSync(join(root, 'dir/b.txt'), join(root, 'dir/b2.txt')));
  });

  it('notices a directory with contents moving in, and then changes inside it', async () => {
    const outside = makeTempDir();
    writeTree(outside, { 'moved/inner/f.txt': 'f' });
    const p = await started();
    await notifiedBy(() => renameSync(join(outside, 'moved'), join(root, 'moved')));
    expect(p.directories).toBe(5);
    await notifiedBy(() => writeFileSync(join(root, 'moved/inner/g.txt'), 'g'));
    await notifiedBy(() => rmSync(join(root, 'moved'), { recursive: true }));
    // a recursive remove is many steps: a round that read the tree halfway (its reads run on the
    // thread pool while this thread removes) sees the rest gone at the next
    await waitFor(() => p.directories === 3, 'the moved directories to be gone');
    removeTree(outside);
  });

  it('notices a .gitignore edit, which can change what is served', async () => {
    writeFileSync(join(root, 'dir/.gitignore'), 'b.txt\n');
    await started();
    await notifiedBy(() => writeFileSync(join(root, 'dir/.gitignore'), 'c.txt\n'));
  });

  it('says nothing for a write inside a file, an excluded path, or an idle tree', async () => {
    const p = await started({ intervalMs: 10 });
    writeFileSync(join(root, 'a.txt'), 'changed contents');
    writeFileSync(join(root, 'skip/y.txt'), 'y');
    writeFileSync(join(root, 'dir/scratch.tmp'), 't');
    rmSync(join(root, 'dir/scratch.tmp'));
    // A sentinel change proves rounds ran after those writes; it is the only notification.
    await notifiedBy(() => mkdirSync(join(root, 'sentinel')));
    expect(p.directories).toBe(4);
  });

  it('keeps within its budget of filesystem calls per second', async () => {
    for (let i = 0; i < 30; i += 1) mkdirSync(join(root, `many/d${i}`), { recursive: true });
    const t0 = Date.now();
    await started({ intervalMs: 10, maxOpsPerSecond: 20, scanOpsPerSecond: 20, concurrency: 2 });
    // 34 directories: 34 readdirs and 34 stats at most 20 a second: the scan takes over 2 s.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2000);
  });

  it('calls nobody once stopped', async () => {
    const p = await started({ intervalMs: 10 });
    p.stop();
    // A witness poller on the same tree, still running, proves rounds ran after the write: by the
    // time it reports the new file, the stopped one would have too.
    let witnessed = 0;
    const witness = new TreePoller(root, rules, () => (witnessed += 1), { intervalMs: 10 });
    try {
      await witness.ready;
      writeFileSync(join(root, 'after-stop.txt'), 'x');
      await waitFor(() => witnessed > 0, 'the witness poller to notice the new file');
    } finally {
      witness.stop();
    }
    expect(changes).toBe(0);
  });
});

describe('tree poller tracking files (what feeds the search index under --watch poll)', () => {
  let reports: PollReport[];

  async function tracking(
    options: ConstructorParameters<typeof TreePoller>[3] = {},
  ): Promise<TreePoller> {
    reports = [];
    poller = new TreePoller(root, rules, (report) => reports.push(report), {
      intervalMs: 10,
      files: true,
      ...options,
    });
    await poller.ready;
    return poller;
  }

  /** The file events of the first round that reports any after `action`, as `type rel` lines. */
  async function eventsOf(action: () => void): Promise<string[]> {
    const before = reports.length;
    action();
    await waitFor(() => reports.slice(before).some((r) => r.events.length > 0), 'file events');
    const report = reports.slice(before).find((r) => r.events.length > 0)!;
    return report.events
      .map((e) => `${e.type} ${relative(root, e.path).split(sep).join('/')}`)
      .sort();
  }

  it('knows every served file after its first scan and reports nothing for an idle tree', async () => {
    const p = await tracking();
    expect(p.fileCount).toBe(3); // a.txt, dir/b.txt, dir/deep/c.txt — skip/ is excluded
    // Rounds run (the sentinel is found) and it is the only thing reported.
    expect(await eventsOf(() => writeFileSync(join(root, 'sentinel.txt'), 's'))).toEqual([
      'create sentinel.txt',
    ]);
    expect(reports.flatMap((r) => r.events)).toHaveLength(1);
  });

  it('reports an edit inside a file (no directory moves), a create, a delete and a rename', async () => {
    await tracking();
    expect(
      await eventsOf(() => writeFileSync(join(root, 'dir/deep/c.txt'), 'c, longer now')),
    ).toEqual(['update dir/deep/c.txt']);
    expect(await eventsOf(() => writeFileSync(join(root, 'dir/new.txt'), 'n'))).toEqual([
      'create dir/new.txt',
    ]);
    expect(await eventsOf(() => rmSync(join(root, 'a.txt')))).toEqual(['delete a.txt']);
    expect(
      await eventsOf(() => renameSync(join(root, 'dir/b.txt'), join(root, 'dir/deep/b.txt'))),
    ).toEqual(['create dir/deep/b.txt', 'delete dir/b.txt']);
  });

  it('reports the files of a directory moving in as created, and moving out as deleted', async () => {
    const outside = makeTempDir();
    writeTree(outside, { 'moved/inner/f.txt': 'f', 'moved/g.txt': 'g' });
    await tracking();
    expect(await eventsOf(() => renameSync(join(outside, 'moved'), join(root, 'moved')))).toEqual([
      'create moved/g.txt',
      'create moved/inner/f.txt',
    ]);
    expect(await eventsOf(() => renameSync(join(root, 'moved'), join(outside, 'back')))).toEqual([
      'delete moved/g.txt',
      'delete moved/inner/f.txt',
    ]);
    removeTree(outside);
  });

  it('never reports an excluded file', async () => {
    await tracking();
    writeFileSync(join(root, 'skip/x.txt'), 'changed');
    writeFileSync(join(root, 'dir/scratch.tmp'), 't');
    expect(await eventsOf(() => writeFileSync(join(root, 'sentinel.txt'), 's'))).toEqual([
      'create sentinel.txt',
    ]);
  });

  it('re-stats a bounded slice of files a round, and still finds an edit anywhere in the tree', async () => {
    for (let i = 0; i < 40; i += 1) writeFileSync(join(root, `dir/f${i}.txt`), 'x');
    const p = await tracking({ fileStatsPerRound: 4 });
    expect(p.fileCount).toBe(43);
    const start = { ...p.counters };
    expect(await eventsOf(() => writeFileSync(join(root, 'dir/f9.txt'), 'edited'))).toEqual([
      'update dir/f9.txt',
    ]);
    const rounds = p.counters.rounds - start.rounds;
    const calls = p.counters.calls - start.calls;
    // Each round: one stat per directory (3) and at most 4 file stats; a round that reads the
    // edited file's directory again would not be needed (an edit moves no directory).
    expect(rounds).toBeGreaterThan(0);
    expect(calls).toBeLessThanOrEqual(rounds * (3 + 4));
  });
});

describe("the poller's per-directory ignore test", () => {
  it('agrees with excludedPath on every entry of a tree with nested .gitignore files, negations and exclude patterns', () => {
    writeTree(root, {
      '.gitignore': '*.log\nbuild/\n!keep.log\n',
      'src/.gitignore': 'gen/\n*.tmp\n!important.tmp\n',
      'src/a.ts': 'a',
      'src/x.log': 'x',
      'src/keep.log': 'k',
      'src/gen/out.ts': 'o',
      'src/t.tmp': 't',
      'src/important.tmp': 'i',
      'src/deep/.gitignore': 'secret*\n',
      'src/deep/secret.txt': 's',
      'src/deep/open.txt': 'o',
      'build/b.js': 'b',
      'docs/private/p.md': 'p',
      'docs/readme.md': 'r',
    });
    const ignoreRules = new IgnoreRules(root, { exclude: ['docs/private/'] });
    const checked: string[] = [];
    const visit = (rel: string): void => {
      const inDir = ignoreRules.entriesOf(rel);
      for (const entry of readdirSync(rel === '' ? root : join(root, rel), {
        withFileTypes: true,
      })) {
        const childRel = rel === '' ? entry.name : `${rel}/${entry.name}`;
        const isDir = entry.isDirectory();
        const expected = ignoreRules.excludedPath(childRel, isDir);
        expect(inDir(entry.name, isDir), childRel).toBe(expected);
        if (expected) checked.push(childRel);
        if (isDir && !expected) visit(childRel);
      }
    };
    visit('');
    // The rules did exclude things, so agreement is not vacuous.
    expect(checked.sort()).toEqual(
      ['build', 'docs/private', 'src/deep/secret.txt', 'src/gen', 'src/t.tmp', 'src/x.log'].sort(),
    );
  });
});
