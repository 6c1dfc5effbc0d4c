// The sorted snapshots of large directories (providers/files/sorted-dirs.ts): kept once the
// directory is older than a timestamp tick, used while its times are unchanged, and never served
// stale — a name added or removed after the snapshot was kept shows in the very next read.
import { mkdirSync, readdirSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { IgnoreRules } from '../../src/providers/files/ignore.js';
import { walkPage } from '../../src/providers/files/walk.js';
import {
  MAX_RETIRED_ENTRIES,
  MIN_CACHED,
  readSortedDir,
  readSortedDirAsync,
  sortedDirCacheStats,
} from '../../src/providers/files/sorted-dirs.js';
import { eventually } from '../helpers/eventually.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';
import { SpentSlice, turnsDuring } from '../helpers/turns.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) removeTree(dir);
});

function directory(count: number): string {
  const root = makeTempDir('reservoir-sorted-');
  dirs.push(root);
  // Written in reverse so the read order is not already sorted by chance.
  for (let i = count - 1; i >= 0; i -= 1) writeFileSync(join(root, `n${i}`), '');
  mkdirSync(join(root, 'sub'));
  return root;
}

const settled = (dir: string) => (): boolean => {
  const stats = statSync(dir);
  return Date.now() - Math.max(stats.mtimeMs, stats.ctimeMs) > 1_500;
};

describe('sorted directory snapshots', () => {
  it('sorts by UTF-16 code units and tells files from directories', async () => {
    const root = directory(3);
    writeFileSync(join(root, 'B'), '');
    writeFileSync(join(root, 'é'), '');
    const names = readSortedDir(root).map((e) => e.name);
    expect(names).toEqual(['B', 'n0', 'n1', 'n2', 'sub', 'é']);
    expect((await readSortedDirAsync(root)).find((e) => e.name === 'sub')?.kind).toBe('directory');
    expect(readSortedDir(join(root, 'missing'))).toEqual([]);
    expect(readSortedDir(join(root, 'n0'))).toEqual([]);
  });

  it('keeps a large settled directory and shows a name added or removed since in the next read', async () => {
    const root = directory(MIN_CACHED + 100);
    await eventually(settled(root), 'the directory to be older than the timestamp-tick window');
    const before = sortedDirCacheStats().directories;
    const first = readSortedDir(root);
    expect(first).toHaveLength(MIN_CACHED + 101);
    expect(sortedDirCacheStats().directories).toBe(before + 1);
    expect(readSortedDir(root)).toBe(first); // the snapshot itself, not a new read

    writeFileSync(join(root, 'n00-new'), '');
    unlinkSync(join(root, 'n1'));
    const next = (await readSortedDirAsync(root)).map((e) => e.name);
    expect(next).toContain('n00-new');
    expect(next).not.toContain('n1');
    expect(next).toHaveLength(MIN_CACHED + 101);
  });

  it('does not keep a directory modified within the tick window, nor a small one', async () => {
    const before = sortedDirCacheStats().directories;
    const fresh = directory(MIN_CACHED + 10);
    readSortedDir(fresh);
    expect(sortedDirCacheStats().directories).toBe(before);
    const small = directory(10);
    await eventually(settled(small), 'the directory to be older than the timestamp-tick window');
    readSortedDir(small);
    expect(sortedDirCacheStats().directories).toBe(before);
    rmSync(small, { recursive: true });
  });

  it('keeps the snapshot of a directory a page stopped inside, and of the last one a walk finished only', async () => {
    const root = directory(MIN_CACHED + 100);
    await eventually(settled(root), 'the directory to be older than the timestamp-tick window');
    const rules = new IgnoreRules(root);
    const before = sortedDirCacheStats().directories;
    const first = await walkPage(root, rules, undefined, 10, 10_000);
    expect(first.entries).toHaveLength(10);
    expect(first.last).toBe(first.entries[9]!.name);
    expect(sortedDirCacheStats().directories).toBe(before + 1); // to resume the next page from
    const rest = await walkPage(root, rules, first.last, 10_000, 10_000);
    expect(rest.last).toBeUndefined();
    expect(first.entries.length + rest.entries.length).toBe(MIN_CACHED + 100);
    // The walk reached the end: kept as the one finished directory (a client asking for the first
    // page again reads it first), until a walk finishes another.
    expect(sortedDirCacheStats().directories).toBe(before + 1);
    const other = directory(MIN_CACHED + 1);
    await eventually(settled(other), 'the directory to be older than the timestamp-tick window');
    await walkPage(other, new IgnoreRules(other), undefined, 10_000, 10_000);
    // The second finished directory replaces the first: one held, not one per directory walked.
    expect(sortedDirCacheStats().directories).toBe(before + 1);
    expect((await walkPage(root, rules, undefined, 10, 10_000)).entries).toHaveLength(10);
    expect(sortedDirCacheStats().directories).toBe(before + 2); // read again, to resume from
  });

  it('drops at once the snapshot of a finished directory too large to keep after the walk', async () => {
    const root = directory(MAX_RETIRED_ENTRIES + 1);
    await eventually(settled(root), 'the directory to be older than the timestamp-tick window');
    const rules = new IgnoreRules(root);
    const first = await walkPage(root, rules, undefined, 10, MAX_RETIRED_ENTRIES * 2);
    const held = sortedDirCacheStats().entries;
    expect(held).toBeGreaterThan(MAX_RETIRED_ENTRIES); // kept while a page stopped inside it
    await walkPage(root, rules, first.last, MAX_RETIRED_ENTRIES * 2, MAX_RETIRED_ENTRIES * 2);
    expect(sortedDirCacheStats().entries).toBeLessThan(held - MAX_RETIRED_ENTRIES);
  });

  it('sorts a directory too large to sort in one piece in runs between turns, in the same order', async () => {
    const root = makeTempDir('reservoir-sorted-');
    dirs.push(root);
    // More names than one run (8,192), written in a scrambled order, some not ASCII, one directory.
    for (let i = 0; i < 20_000; i += 1)
      writeFileSync(join(root, `${(i * 7919) % 20_000}${i % 97 === 0 ? 'é' : ''}`), '');
    mkdirSync(join(root, '5000d'));
    const expected = readdirSync(root).sort();
    const { turns, result: entries } = await turnsDuring(() =>
      readSortedDirAsync(root, new SpentSlice()),
    );
    expect(entries.map((e) => e.name)).toEqual(expected);
    expect(entries.find((e) => e.name === '5000d')?.kind).toBe('directory');
    expect(entries.filter((e) => e.kind !== 'file')).toHaveLength(1);
    expect(turns).toBeGreaterThan(1);
  });
});
