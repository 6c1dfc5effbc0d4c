// The files root's tree watcher (dir-watch.ts): a watch per directory and no record per file. What
// it must still see: files in directories made after it started (however deep, however fast they
// were made), a directory removed and made again, and nothing from what it is told to ignore.
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { directoryBackend } from '../../src/providers/files/dir-watch.js';
import type { TreeEvent } from '../../src/providers/files/tree-backend.js';
import { eventually } from '../helpers/eventually.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';

let root: string;
let events: TreeEvent[];
let stop: (() => Promise<void>) | undefined;

beforeEach(() => {
  root = makeTempDir('reservoir-dir-watch-');
  events = [];
});
afterEach(async () => {
  await stop?.();
  stop = undefined;
  removeTree(root);
});

async function watch(ignore: string[] = []): Promise<void> {
  const subscription = await directoryBackend.subscribe(
    root,
    (batch) => void events.push(...batch),
    { ignore },
  );
  stop = () => subscription.unsubscribe();
}

const seen = (type: TreeEvent['type'], path: string): boolean =>
  events.some((event) => event.type === type && event.path === path);

describe('the directory tree watcher', () => {
  it('reports a file in a nested directory made after it started, and later writes in it', async () => {
    await watch();
    const deep = join(root, 'new', 'a', 'b');
    mkdirSync(deep, { recursive: true });
    writeFileSync(join(deep, 'first.txt'), 'first\n');
    await eventually(() => seen('create', join(root, 'new')), 'the new top directory');
    // The new directories are watched as they appear: a file written there afterwards is reported.
    await eventually(async () => {
      writeFileSync(join(deep, 'later.txt'), `${Date.now()}\n`);
      await new Promise((resolve) => setImmediate(resolve));
      return events.some((event) => event.path === join(deep, 'later.txt'));
    }, 'a write inside the new nested directory');
  });

  it('watches the directories that were there when it started, at any depth', async () => {
    mkdirSync(join(root, 'x', 'y', 'z'), { recursive: true });
    await watch();
    writeFileSync(join(root, 'x', 'y', 'z', 'f.txt'), 'f\n');
    await eventually(() => seen('create', join(root, 'x', 'y', 'z', 'f.txt')), 'the deep file');
  });

  it('reports a removed directory as deleted, and watches it again when it comes back', async () => {
    mkdirSync(join(root, 'gone'));
    await watch();
    rmSync(join(root, 'gone'), { recursive: true });
    await eventually(() => seen('delete', join(root, 'gone')), 'the directory deleted');
    // The directory's own removal comes named after it, as if a child: not taken for one.
    expect(events.filter((event) => event.path === join(root, 'gone', 'gone'))).toEqual([]);
    mkdirSync(join(root, 'gone'));
    await eventually(() => seen('create', join(root, 'gone')), 'the directory back');
    await eventually(async () => {
      writeFileSync(join(root, 'gone', 'again.txt'), `${Date.now()}\n`);
      await new Promise((resolve) => setImmediate(resolve));
      return events.some((event) => event.path === join(root, 'gone', 'again.txt'));
    }, 'a file in the directory that came back');
  });

  it('reports a directory moved in as created, and the files later written inside it', async () => {
    const outside = makeTempDir('reservoir-dir-watch-outside-');
    try {
      mkdirSync(join(outside, 'moved', 'inner'), { recursive: true });
      await watch();
      renameSync(join(outside, 'moved'), join(root, 'moved'));
      await eventually(() => seen('create', join(root, 'moved')), 'the directory moved in');
      await eventually(async () => {
        writeFileSync(join(root, 'moved', 'inner', 'n.txt'), `${Date.now()}\n`);
        await new Promise((resolve) => setImmediate(resolve));
        return events.some((event) => event.path === join(root, 'moved', 'inner', 'n.txt'));
      }, 'a file inside the moved-in tree');
    } finally {
      removeTree(outside);
    }
  });

  it('says nothing of directories it is told to ignore, by name or by path', async () => {
    mkdirSync(join(root, 'sub', '.git'), { recursive: true });
    mkdirSync(join(root, 'state'));
    await watch(['**/.git', join(root, 'state')]);
    writeFileSync(join(root, 'sub', '.git', 'HEAD'), 'ref\n');
    writeFileSync(join(root, 'state', 'index.db'), 'x\n');
    mkdirSync(join(root, '.git'));
    writeFileSync(join(root, 'served.txt'), 'served\n');
    await eventually(() => seen('create', join(root, 'served.txt')), 'the served file');
    expect(events.filter((event) => /\.git|state/.test(event.path))).toEqual([]);
  });

  it('refuses to subscribe to a root that does not exist (the provider then polls)', async () => {
    rmSync(root, { recursive: true });
    await expect(directoryBackend.subscribe(root, () => undefined, { ignore: [] })).rejects.toThrow(
      /ENOENT/,
    );
    mkdirSync(root);
  });
});
