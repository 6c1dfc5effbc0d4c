// Pins the files provider's cache of recently read small files (src/providers/files/recent.ts):
// RecentFiles keeps only small, settled files, serves an entry only while a fresh stat matches
// device, inode, size, mtime and ctime (forgetting it otherwise) and evicts oldest first; and
// through read(), a kept file is never served stale — writes, renames, deletes, chmod, symlink
// retargeting, new hard links, .gitignore and access rules all reach the caller on the next read.
import {
  chmodSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  renameSync,
  statSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
  type Stats,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { UnavailableError } from '../../src/core/errors.js';
import type { CallContext, ResourceContents } from '../../src/core/types.js';
import { filesProvider, type FilesProvider } from '../../src/providers/files/index.js';
import { RecentFiles } from '../../src/providers/files/recent.js';
import { eventually } from '../helpers/eventually.js';
import {
  ctx,
  expectNotFound,
  fileUri,
  rejection,
  removeDir,
  tempDir,
  writeTree,
} from './helpers.js';

const isRoot = process.getuid?.() === 0;

interface StatFields {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  file: boolean;
}

const BASE_STATS: StatFields = {
  dev: 1,
  ino: 100,
  size: 10,
  mtimeMs: 1_000_000,
  ctimeMs: 1_000_000,
  file: true,
};

/** A stand-in for fs.Stats with just the fields RecentFiles looks at. */
function fakeStats(overrides: Partial<StatFields> = {}): Stats {
  const f = { ...BASE_STATS, ...overrides };
  return {
    dev: f.dev,
    ino: f.ino,
    size: f.size,
    mtimeMs: f.mtimeMs,
    ctimeMs: f.ctimeMs,
    isFile: () => f.file,
  } as unknown as Stats;
}

function recentFile(text: string): ResourceContents {
  return Object.freeze({ uri: 'file:///r/x.txt', mimeType: 'text/plain', text });
}

/** Well after BASE_STATS' times: the file has settled. */
const LATER = BASE_STATS.ctimeMs + 60_000;

describe('RecentFiles', () => {
  it('returns the kept entry while a fresh stat matches it exactly', () => {
    const recent = new RecentFiles();
    const file = recentFile('hello');
    recent.keep('/r/x.txt', fakeStats(), file, LATER);
    expect(recent.has('/r/x.txt')).toBe(true);
    expect(recent.get('/r/x.txt', fakeStats())).toBe(file);
    // A hit keeps the entry.
    expect(recent.get('/r/x.txt', fakeStats())).toBe(file);
    expect(recent.stats()).toEqual({ files: 1, bytes: 10 });
  });

  it('answers nothing for a path never kept', () => {
    const recent = new RecentFiles();
    expect(recent.has('/r/none')).toBe(false);
    expect(recent.get('/r/none', fakeStats())).toBeUndefined();
  });

  const changes: [string, Partial<StatFields>][] = [
    ['inode', { ino: 101 }],
    ['device', { dev: 2 }],
    ['size', { size: 11 }],
    ['mtime', { mtimeMs: BASE_STATS.mtimeMs + 0.001 }],
    ['ctime', { ctimeMs: BASE_STATS.ctimeMs + 0.001 }],
    ['kind (no longer a regular file)', { file: false }],
  ];
  for (const [what, change] of changes) {
    it(`misses and forgets the entry when the ${what} differs`, () => {
      const recent = new RecentFiles();
      recent.keep('/r/x.txt', fakeStats(), recentFile('hello'), LATER);
      expect(recent.get('/r/x.txt', fakeStats(change))).toBeUndefined();
      expect(recent.has('/r/x.txt')).toBe(false);
      expect(recent.stats()).toEqual({ files: 0, bytes: 0 });
      // Forgotten for good: even the original stats no longer find it.
      expect(recent.get('/r/x.txt', fakeStats())).toBeUndefined();
    });
  }

  it('misses and forgets the entry when the path is gone (no stats)', () => {
    const recent = new RecentFiles();
    recent.keep('/r/x.txt', fakeStats(), recentFile('hello'), LATER);
    expect(recent.get('/r/x.txt', undefined)).toBeUndefined();
    expect(recent.has('/r/x.txt')).toBe(false);
  });

  it('keeps a file only once both its mtime and its ctime are settledMs in the past', () => {
    const recent = new RecentFiles({ settledMs: 1000 });
    const t = BASE_STATS.mtimeMs;
    recent.keep('/r/fresh', fakeStats(), recentFile('a'), t + 999);
    recent.keep('/r/new-mtime', fakeStats({ mtimeMs: t + 500 }), recentFile('a'), t + 1400);
    recent.keep('/r/new-ctime', fakeStats({ ctimeMs: t + 500 }), recentFile('a'), t + 1400);
    recent.keep('/r/future', fakeStats({ mtimeMs: t + 5000 }), recentFile('a'), t + 1000);
    expect(recent.stats()).toEqual({ files: 0, bytes: 0 });
    recent.keep('/r/settled', fakeStats(), recentFile('a'), t + 1000);
    expect(recent.has('/r/settled')).toBe(true);
  });

  it('defaults settledMs to one second', () => {
    const recent = new RecentFiles();
    const t = BASE_STATS.ctimeMs;
    recent.keep('/r/x', fakeStats(), recentFile('a'), t + 999);
    expect(recent.has('/r/x')).toBe(false);
    recent.keep('/r/x', fakeStats(), recentFile('a'), t + 1000);
    expect(recent.has('/r/x')).toBe(true);
  });

  it('does not keep a file larger than maxFileBytes (default 64 KiB), nor anything but a regular file', () => {
    const recent = new RecentFiles();
    recent.keep('/r/at-limit', fakeStats({ size: 65_536 }), recentFile('a'), LATER);
    recent.keep('/r/over', fakeStats({ size: 65_537 }), recentFile('a'), LATER);
    recent.keep('/r/dir', fakeStats({ file: false }), recentFile('a'), LATER);
    expect(recent.has('/r/at-limit')).toBe(true);
    expect(recent.has('/r/over')).toBe(false);
    expect(recent.has('/r/dir')).toBe(false);

    const small = new RecentFiles({ maxFileBytes: 9 });
    small.keep('/r/x', fakeStats({ size: 10 }), recentFile('a'), LATER);
    expect(small.stats()).toEqual({ files: 0, bytes: 0 });
  });

  it('evicts the oldest kept files first once the total exceeds maxTotalBytes', () => {
    const recent = new RecentFiles({ maxTotalBytes: 25 });
    recent.keep('/r/a', fakeStats({ ino: 1, size: 10 }), recentFile('a'), LATER);
    recent.keep('/r/b', fakeStats({ ino: 2, size: 10 }), recentFile('b'), LATER);
    expect(recent.stats()).toEqual({ files: 2, bytes: 20 });
    recent.keep('/r/c', fakeStats({ ino: 3, size: 10 }), recentFile('c'), LATER);
    expect(recent.stats()).toEqual({ files: 2, bytes: 20 });
    expect([recent.has('/r/a'), recent.has('/r/b'), recent.has('/r/c')]).toEqual([
      false,
      true,
      true,
    ]);
    // One large newcomer pushes out as many of the oldest as it takes.
    recent.keep('/r/d', fakeStats({ ino: 4, size: 24 }), recentFile('d'), LATER);
    expect([recent.has('/r/b'), recent.has('/r/c'), recent.has('/r/d')]).toEqual([
      false,
      false,
      true,
    ]);
    expect(recent.stats()).toEqual({ files: 1, bytes: 24 });
  });

  it('replaces an entry kept again under the same path, counting its bytes once', () => {
    const recent = new RecentFiles();
    recent.keep('/r/x', fakeStats({ size: 10 }), recentFile('one'), LATER);
    const second = recentFile('two');
    recent.keep(
      '/r/x',
      fakeStats({ size: 30, mtimeMs: 2_000_000, ctimeMs: 2_000_000 }),
      second,
      2_000_000 + 60_000,
    );
    expect(recent.stats()).toEqual({ files: 1, bytes: 30 });
    expect(
      recent.get('/r/x', fakeStats({ size: 30, mtimeMs: 2_000_000, ctimeMs: 2_000_000 })),
    ).toBe(second);
  });

  it('counts files and bytes as entries are kept and forgotten', () => {
    const recent = new RecentFiles();
    expect(recent.stats()).toEqual({ files: 0, bytes: 0 });
    recent.keep('/r/a', fakeStats({ size: 3 }), recentFile('a'), LATER);
    recent.keep('/r/b', fakeStats({ size: 5 }), recentFile('b'), LATER);
    expect(recent.stats()).toEqual({ files: 2, bytes: 8 });
    recent.forget('/r/a');
    recent.forget('/r/never-kept');
    expect(recent.stats()).toEqual({ files: 1, bytes: 5 });
    recent.get('/r/b', fakeStats({ size: 6 }));
    expect(recent.stats()).toEqual({ files: 0, bytes: 0 });
  });
});

describe('files provider: reads of recently read files', () => {
  let base: string;
  let root: string;
  let outside: string;
  let provider: FilesProvider;
  const abs = (rel: string): string => join(root, rel);
  const uri = (rel: string): string => fileUri(abs(rel));

  async function readOne(rel: string, context: CallContext = ctx()): Promise<ResourceContents> {
    const result = await provider.read(uri(rel), context);
    expect(result.contents).toHaveLength(1);
    return result.contents[0]!;
  }

  function textOf(contents: ResourceContents): string | undefined {
    return 'text' in contents ? contents.text : undefined;
  }

  /** Reads `rel` twice and asserts the second read was served from the cache: the very same frozen object. */
  async function readKept(rel: string, expected: string): Promise<ResourceContents> {
    const first = await readOne(rel);
    expect(textOf(first)).toBe(expected);
    expect(Object.isFrozen(first)).toBe(true);
    const second = await readOne(rel);
    expect(second).toBe(first);
    return first;
  }

  beforeAll(async () => {
    base = tempDir('reservoir-recent-');
    root = join(base, 'root');
    outside = join(base, 'outside');
    mkdirSync(root);
    mkdirSync(outside);
    writeTree(root, {
      'unchanged.txt': 'unchanged\n',
      'rewrite.txt': 'version 1\n',
      'rename.txt': 'before rename\n',
      'delete.txt': 'to be deleted\n',
      'chmod.txt': 'chmod me\n',
      'a.txt': 'content A\n',
      'b.txt': 'content B\n',
      'sub/later.txt': 'ignored later\n',
      'private/target.txt': 'private target\n',
      'hard.txt': 'hard link me\n',
      'inside.txt': 'same bytes\n',
      '.gitignore': 'hidden/\n',
      'limit.txt': Buffer.alloc(64 * 1024, 0x61),
      'big.txt': Buffer.alloc(64 * 1024 + 1, 0x61),
    });
    writeTree(outside, { 'secret.txt': 'content S\n' });
    symlinkSync('a.txt', abs('link.txt'));
    symlinkSync('a.txt', abs('link-out.txt'));
    symlinkSync('private/target.txt', abs('via-link.txt'));
    mkdirSync(abs('hidden'));
    linkSync(abs('inside.txt'), abs('hidden/same.txt'));
    linkSync(abs('inside.txt'), join(outside, 'same.txt'));
    // Every file written so far must look settled (mtime and ctime ≥ settledMs = 1000 ms in the
    // past) to be kept, and every file a test writes later must not. ctime cannot be set back, so
    // the clock moves instead: Date stands still at the last setup change + 1000 ms for the tests
    // below (a whole ms: the fake clock has no fractions), once the file system's clock has moved
    // past it (so later writes are newer).
    const changed = (path: string): number => {
      const stats = lstatSync(path);
      return Math.max(stats.mtimeMs, stats.ctimeMs);
    };
    const setupEnd = Math.ceil(
      Math.max(
        ...[root, outside].flatMap((dir) => [
          changed(dir),
          ...(readdirSync(dir, { recursive: true }) as string[]).map((rel) =>
            changed(join(dir, rel)),
          ),
        ]),
      ),
    );
    await eventually(() => {
      writeFileSync(join(base, 'clock-probe'), String(Math.random()));
      return changed(join(base, 'clock-probe')) > setupEnd;
    }, 'the file system clock to move past the setup');
    vi.useFakeTimers({ toFake: ['Date'], now: setupEnd + 1000 });
    // Hard links are refused by default; these tests are about the cache, so they are allowed here.
    provider = filesProvider({ root, allowHardlinks: true });
  });

  afterAll(async () => {
    vi.useRealTimers();
    await provider?.close?.();
    removeDir(base);
  });

  it('serves a second read of an unchanged settled file as the same frozen contents', async () => {
    const first = await readKept('unchanged.txt', 'unchanged\n');
    expect(first.uri).toBe(uri('unchanged.txt'));
    expect(await readOne('unchanged.txt')).toBe(first);
  });

  it('neither keeps nor answers from the cache a read marked readOnce (the search index reading every file)', async () => {
    const once = (): CallContext => ({ ...ctx(), readOnce: true });
    const first = await readOne('b.txt', once());
    const second = await readOne('b.txt', once());
    expect(textOf(second)).toBe('content B\n');
    expect(second).not.toBe(first);
    // The index's read left nothing behind: a client's first read is read afresh, then kept.
    const client = await readOne('b.txt');
    expect(client).not.toBe(first);
    expect(client).not.toBe(second);
    expect(await readOne('b.txt')).toBe(client);
    // A file a client's read keeps is read afresh by the index too (it gets its own copy).
    expect(await readOne('b.txt', once())).not.toBe(client);
  });

  it('keeps a file of exactly 64 KiB but reads a larger one afresh every time', async () => {
    const kept = await readOne('limit.txt');
    expect(await readOne('limit.txt')).toBe(kept);
    expect(textOf(kept)?.length).toBe(64 * 1024);
    const big1 = await readOne('big.txt');
    const big2 = await readOne('big.txt');
    expect(textOf(big1)?.length).toBe(64 * 1024 + 1);
    expect(textOf(big2)?.length).toBe(64 * 1024 + 1);
    expect(big2).not.toBe(big1);
  });

  it('returns new content after a same-size rewrite, even with the old mtime restored', async () => {
    const path = abs('rewrite.txt');
    const first = await readKept('rewrite.txt', 'version 1\n');
    const before = statSync(path);
    writeFileSync(path, 'version 2\n');
    utimesSync(path, before.atime, before.mtime); // the ctime still moves
    expect(statSync(path).size).toBe(before.size);
    const after = await readOne('rewrite.txt');
    expect(textOf(after)).toBe('version 2\n');
    expect(after).not.toBe(first);
  });

  it('reads a file written moments ago afresh each time and sees same-size changes at once', async () => {
    const path = abs('fresh.txt');
    writeFileSync(path, 'fresh-1\n');
    const first = await readOne('fresh.txt');
    const second = await readOne('fresh.txt');
    expect(textOf(first)).toBe('fresh-1\n');
    expect(textOf(second)).toBe('fresh-1\n');
    expect(second).not.toBe(first);

    const before = statSync(path);
    writeFileSync(path, 'fresh-2\n');
    utimesSync(path, before.atime, before.mtime);
    expect(textOf(await readOne('fresh.txt'))).toBe('fresh-2\n');
  });

  it('returns the new content after the file is replaced by a rename (atomic save)', async () => {
    await readKept('rename.txt', 'before rename\n');
    writeFileSync(abs('rename.txt.tmp'), 'after  rename\n');
    renameSync(abs('rename.txt.tmp'), abs('rename.txt'));
    expect(textOf(await readOne('rename.txt'))).toBe('after  rename\n');
  });

  it('answers not_found once a kept file is deleted', async () => {
    await readKept('delete.txt', 'to be deleted\n');
    unlinkSync(abs('delete.txt'));
    await expectNotFound(provider.read(uri('delete.txt'), ctx()), uri('delete.txt'));
  });

  it('reads a kept file afresh after a chmod, and answers unavailable when it can no longer be read', async () => {
    const first = await readKept('chmod.txt', 'chmod me\n');
    chmodSync(abs('chmod.txt'), 0o000);
    try {
      if (isRoot) {
        // Root reads regardless of mode; the chmod still moved the ctime, so the read was fresh.
        const again = await readOne('chmod.txt');
        expect(textOf(again)).toBe('chmod me\n');
        expect(again).not.toBe(first);
      } else {
        const error = await rejection(provider.read(uri('chmod.txt'), ctx()));
        expect(error).toBeInstanceOf(UnavailableError);
        expect((error as UnavailableError).code).toBe('unavailable');
        expect((error as UnavailableError).data['reason']).toBe('permission denied');
      }
    } finally {
      chmodSync(abs('chmod.txt'), 0o644);
    }
  });

  /** Reads `rel` twice and asserts neither read was kept: a fresh object each time. */
  async function readUnkept(rel: string, expected: string): Promise<void> {
    const first = await readOne(rel);
    const second = await readOne(rel);
    expect([textOf(first), textOf(second)]).toEqual([expected, expected]);
    expect(second).not.toBe(first);
  }

  it('never keeps a file read through a symlink, so a retargeted link reads its new target or not_found', async () => {
    await readUnkept('link.txt', 'content A\n');
    // b.txt is settled and the same size as a.txt, so it could be kept too: only its identity differs.
    unlinkSync(abs('link.txt'));
    symlinkSync('b.txt', abs('link.txt'));
    expect(textOf(await readOne('link.txt'))).toBe('content B\n');

    await readUnkept('link-out.txt', 'content A\n');
    unlinkSync(abs('link-out.txt'));
    symlinkSync(join(outside, 'secret.txt'), abs('link-out.txt'));
    await expectNotFound(provider.read(uri('link-out.txt'), ctx()), uri('link-out.txt'));
  });

  it('answers not_found for a kept file once a new .gitignore excludes it', async () => {
    await readKept('sub/later.txt', 'ignored later\n');
    writeFileSync(abs('sub/.gitignore'), 'later.txt\n');
    await expectNotFound(provider.read(uri('sub/later.txt'), ctx()), uri('sub/later.txt'));
  });

  it('judges access rules on the real target of a symlink on every read', async () => {
    const target = fileUri(abs('private/target.txt'));
    const asked: string[] = [];
    const allowing: CallContext = { ...ctx(), allows: (op, u) => (asked.push(`${op} ${u}`), true) };
    const denying: CallContext = {
      ...ctx(),
      allows: (op, u) => (asked.push(`${op} ${u}`), u !== target),
    };

    expect(textOf(await readOne('via-link.txt', allowing))).toBe('private target\n');
    await expectNotFound(provider.read(uri('via-link.txt'), denying), uri('via-link.txt'));
    expect(textOf(await readOne('via-link.txt', allowing))).toBe('private target\n');
    expect(asked).toEqual([`read ${target}`, `read ${target}`, `read ${target}`]);
  });

  it('answers links to other hard links of a kept file (outside the root, or excluded) with not_found, as a fresh read would', async () => {
    // inside.txt has hard links outside the root and under an excluded directory; links lead to each.
    await readKept('inside.txt', 'same bytes\n');
    symlinkSync(join(outside, 'same.txt'), abs('to-outside.txt'));
    symlinkSync('hidden/same.txt', abs('to-hidden.txt'));
    await expectNotFound(provider.read(uri('to-outside.txt'), ctx()), uri('to-outside.txt'));
    await expectNotFound(provider.read(uri('to-hidden.txt'), ctx()), uri('to-hidden.txt'));
    expect(textOf(await readOne('inside.txt'))).toBe('same bytes\n');
  });

  it('reads a kept file afresh once a new hard link to it moves its ctime', async () => {
    const first = await readKept('hard.txt', 'hard link me\n');
    linkSync(abs('hard.txt'), join(outside, 'hard-elsewhere.txt'));
    const again = await readOne('hard.txt');
    expect(textOf(again)).toBe('hard link me\n');
    expect(again).not.toBe(first);
  });
});
