// Pins check-before-open (issue 11, item 7) at the unit level: `resolveInside` finds the real path
// a path leads to with lstat/readlink only, as the kernel would resolve it (absolute and relative
// link targets, `..` taken from the real directory, chains, loops), judges it against the root, and
// says nothing about what lies outside; `openInside` opens only files and directories so judged;
// the files provider's `hide` option keeps a file out by path and by inode.
import { execFileSync } from 'node:child_process';
import { closeSync, linkSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openInside } from '../../src/providers/files/containment.js';
import { filesProvider } from '../../src/providers/files/index.js';
import {
  MAX_LINKS,
  realPathInside,
  resolveInside,
  statInside,
} from '../../src/providers/files/resolve.js';
import { ctx, expectNotFound, removeDir, tempDir, walkProvider, writeTree } from './helpers.js';

let base: string;
let root: string;

beforeAll(() => {
  base = tempDir('reservoir-resolve-');
  root = join(base, 'root');
  writeTree(base, {
    'root/a.txt': 'a',
    'root/dir/b.txt': 'b',
    'root/dir/deeper/c.txt': 'c',
    'outside/o.txt': 'o',
    'root/config.yaml': 'secret: 1\n',
  });
  const at = (rel: string): string => join(root, rel);
  symlinkSync('a.txt', at('rel-link'));
  symlinkSync(at('a.txt'), at('abs-link'));
  symlinkSync('rel-link', at('chain'));
  symlinkSync('dir/deeper/../b.txt', at('dotdot-in-target'));
  symlinkSync('dir', at('dir-link'));
  symlinkSync('../root/a.txt', at('out-and-back'));
  symlinkSync('../outside/o.txt', at('out'));
  symlinkSync('../outside', at('out-dir'));
  symlinkSync('loop-b', at('loop-a'));
  symlinkSync('loop-a', at('loop-b'));
  symlinkSync('a.txt/x', at('through-file'));
  symlinkSync('nothing-here', at('dangling'));
  symlinkSync('config.yaml', at('config-link.yaml'));
  linkSync(at('config.yaml'), at('config-copy.yaml'));
  mkdirSync(at('deep'));
  let previous = 'a.txt';
  for (let i = 0; i < MAX_LINKS + 1; i += 1) {
    symlinkSync(i === 0 ? '../a.txt' : `hop-${i - 1}`, join(at('deep'), `hop-${i}`));
    previous = `deep/hop-${i}`;
  }
  symlinkSync(previous, at('too-many-hops'));
  execFileSync('mkfifo', [at('fifo')]);
});

afterAll(() => removeDir(base));

const INSIDE: [string, string, string][] = [
  ['a plain file', 'a.txt', 'a.txt'],
  ['a relative link', 'rel-link', 'a.txt'],
  ['an absolute link', 'abs-link', 'a.txt'],
  ['a chain of links', 'chain', 'a.txt'],
  ['a link whose target has .. after a directory', 'dotdot-in-target', 'dir/b.txt'],
  ['a path through a linked directory', 'dir-link/deeper/c.txt', 'dir/deeper/c.txt'],
  ['a link that leaves the root and comes back in', 'out-and-back', 'a.txt'],
  ['the root itself', '', ''],
];

const NOWHERE: [string, string][] = [
  ['a link to an outside file', 'out'],
  ['a path through a link to an outside directory', 'out-dir/o.txt'],
  ['a path through a link to an outside directory, missing there', 'out-dir/none.txt'],
  ['a loop of links', 'loop-a'],
  ['more links than the kernel follows', 'too-many-hops'],
  ['a link through a file', 'through-file'],
  ['a dangling link', 'dangling'],
  ['a missing file', 'none.txt'],
  ['a path through a file', 'a.txt/x'],
];

const abs = (rel: string): string => (rel === '' ? root : join(root, rel));

describe('resolveInside (the walk, component by component)', () => {
  it.each(INSIDE)('resolves %s to its real path inside the root', (_what, rel, real) => {
    const resolved = resolveInside(root, abs(rel));
    expect(resolved?.realPath).toBe(abs(real));
    expect(resolved?.stats.isSymbolicLink()).toBe(false);
  });

  it.each(NOWHERE)('answers %s with undefined, opening nothing', (_what, rel) => {
    expect(resolveInside(root, abs(rel))).toBeUndefined();
  });

  it('follows exactly MAX_LINKS links and no more', () => {
    expect(resolveInside(root, join(root, 'deep', `hop-${MAX_LINKS - 1}`))?.realPath).toBe(
      join(root, 'a.txt'),
    );
    expect(resolveInside(root, join(root, 'deep', `hop-${MAX_LINKS}`))).toBeUndefined();
  });
});

describe('realPathInside and statInside (realpath(3) first)', () => {
  it.each(INSIDE)('agree with the walk on %s', (_what, rel, real) => {
    expect(realPathInside(root, abs(rel))).toBe(abs(real));
    expect(statInside(root, abs(rel))?.realPath).toBe(abs(real));
  });

  it.each(NOWHERE)('agree with the walk on %s (undefined)', (_what, rel) => {
    expect(realPathInside(root, abs(rel))).toBeUndefined();
    expect(statInside(root, abs(rel))).toBeUndefined();
  });
});

describe('openInside', () => {
  it('opens a file and a directory reached through links, and nothing that is neither (a FIFO) nor outside', () => {
    for (const rel of ['chain', 'dir-link']) {
      const opened = openInside(root, join(root, rel));
      expect(opened).toBeDefined();
      closeSync(opened!.fd);
    }
    expect(openInside(root, join(root, 'fifo'))).toBeUndefined();
    expect(openInside(root, join(root, 'out'))).toBeUndefined();
  });
});

describe('files provider: hide', () => {
  it('answers a hidden file under every name that reaches it (path, symlink, hard link) like a missing one, and lists none of them', async () => {
    const provider = filesProvider({
      root,
      hide: [join(root, 'config.yaml')],
      allowHardlinks: true,
    });
    try {
      for (const rel of ['config.yaml', 'config-link.yaml', 'config-copy.yaml']) {
        const uri = pathToFileURL(join(root, rel)).href;
        await expectNotFound(provider.read(uri, ctx()), uri);
        await expect(
          Promise.resolve().then(() => provider.watch!(uri, () => undefined)),
        ).rejects.toMatchObject({ name: 'NotFoundError' });
      }
      const titles = (await walkProvider(provider, 100)).items.map((item) => item.title);
      expect(titles).toContain('a.txt');
      expect(titles.filter((t) => t?.startsWith('config'))).toEqual([]);
    } finally {
      await provider.close?.();
    }
  });
});
