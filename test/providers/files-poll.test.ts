// Pins the polling fallback's tree poller (providers/files/poll.ts): after its first scan it
// notices a file added, removed or renamed, a directory (with contents) moving in, and a .gitignore
// edit — one notification per round — and ignores changes inside a file, excluded paths and an idle
// tree. It stays within its budget of filesystem calls per second, and once stopped it calls nobody.
// (End to end, through the SDK client in both eras, polling is pinned by test/subscriptions/limits.test.ts.)
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TreePoller, type PollRules } from '../../src/providers/files/poll.js';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { waitFor } from '../subscriptions/harness.js';

const rules: PollRules = { excludedPath: (rel) => rel === 'skip' || rel.startsWith('skip/') || rel.endsWith('.tmp') };

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

async function started(options: ConstructorParameters<typeof TreePoller>[3] = { intervalMs: 20 }): Promise<TreePoller> {
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
    expect(p.directories).toBe(3);
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
    await started({ intervalMs: 10, maxOpsPerSecond: 20, concurrency: 2 });
    // 34 directories: 34 readdirs and 34 stats at most 20 a second: the scan takes over 2 s.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2000);
  });

  it('calls nobody once stopped', async () => {
    const p = await started({ intervalMs: 10 });
    p.stop();
    writeFileSync(join(root, 'after-stop.txt'), 'x');
    await new Promise((done) => setTimeout(done, 100));
    expect(changes).toBe(0);
  });
});
