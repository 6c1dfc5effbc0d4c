// The open behind list hints (open-listed.ts): a listed file is read only while it is the very
// inode the listing saw, reached inside the root — a file replaced, or swapped for a link or a
// FIFO, after its listing is not opened.
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  lstatSync,
  readSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openListed, type ListedStats } from '../../src/providers/files/open-listed.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';

let root: string;
let outside: string;
beforeEach(() => {
  root = makeTempDir('reservoir-open-listed-');
  outside = makeTempDir('reservoir-open-listed-out-');
});
afterEach(() => {
  removeTree(root);
  removeTree(outside);
});

const opener = {
  open: (abs: string, listed: ListedStats): number | undefined => openListed(root, abs, listed),
};

function text(fd: number | undefined): string | undefined {
  if (fd === undefined) return undefined;
  try {
    const buffer = Buffer.alloc(64);
    return buffer.subarray(0, readSync(fd, buffer, 0, 64, 0)).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

describe('opening a listed file for its head', () => {
  it('reads the file the listing saw, several from one directory', () => {
    writeFileSync(join(root, 'a.txt'), 'alpha\n');
    writeFileSync(join(root, 'b.txt'), 'bravo\n');
    expect(text(opener.open(join(root, 'a.txt'), lstatSync(join(root, 'a.txt'))))).toBe('alpha\n');
    expect(text(opener.open(join(root, 'b.txt'), lstatSync(join(root, 'b.txt'))))).toBe('bravo\n');
  });

  it('does not read a file replaced since it was listed', () => {
    const path = join(root, 'a.txt');
    writeFileSync(path, 'alpha\n');
    const listed = lstatSync(path);
    writeFileSync(join(root, 'new.txt'), 'other\n');
    renameSync(join(root, 'new.txt'), path);
    expect(opener.open(path, listed)).toBeUndefined();
  });

  it('does not follow a link swapped in for a listed file, to the same inode outside the root or not', () => {
    const path = join(root, 'a.txt');
    writeFileSync(path, 'alpha\n');
    const listed = lstatSync(path);
    // The listed inode itself, moved outside and linked back: refused by where the link leads.
    renameSync(path, join(outside, 'a.txt'));
    symlinkSync(join(outside, 'a.txt'), path);
    expect(opener.open(path, listed)).toBeUndefined();
  });

  it('reads a listed symlink to a file inside the root, judged by where it leads', () => {
    writeFileSync(join(root, 'target.txt'), 'target\n');
    symlinkSync(join(root, 'target.txt'), join(root, 'link.txt'));
    const listed = lstatSync(join(root, 'target.txt'));
    expect(text(opener.open(join(root, 'link.txt'), listed))).toBe('target\n');
  });

  it('never opens a FIFO swapped in for a listed file', () => {
    const path = join(root, 'a.txt');
    writeFileSync(path, 'alpha\n');
    const listed = lstatSync(path);
    rmSync(path);
    execFileSync('mkfifo', [path]);
    // Opening a FIFO's read end with no writer would not block (O_NONBLOCK), but it is not opened.
    expect(opener.open(path, listed)).toBeUndefined();
  });

  it('reads nothing from a directory outside the root', () => {
    writeFileSync(join(outside, 'a.txt'), 'outside\n');
    expect(opener.open(join(outside, 'a.txt'), lstatSync(join(outside, 'a.txt')))).toBeUndefined();
  });
});
