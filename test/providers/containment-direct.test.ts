// Pins the direct route of a checked open (Linux): the files provider takes an O_PATH handle on the
// path as asked and judges what the kernel reached, instead of resolving every component first. What
// it must still refuse, read by read: a directory on the way swapped for a link out of the root, a
// final symlink out of the root (followed the slow way, judged where it leads), a FIFO (never opened:
// a writer blocked on it stays blocked), a file replaced after the walk listed it and before it is
// read — by a link out, a FIFO, or a directory link — and a plain directory on the way renamed out of
// the root and back while reads run.
import { execFileSync, spawn } from 'node:child_process';
import {
  closeSync,
  constants,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotFoundError } from '../../src/core/errors.js';
import type { Provider, ResourceContents } from '../../src/core/types.js';
import { openInside } from '../../src/providers/files/containment.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { eventually } from '../helpers/eventually.js';
import { startRacer } from '../helpers/racer.js';
import { ctx, expectNotFound, removeDir, tempDir, walkProvider, writeTree } from './helpers.js';

const SECRET = 'TOP SECRET: must never be served';
const INSIDE = 'inside content';
const linux = process.platform === 'linux';

let base: string;
let docs: string;
let provider: Provider;
let R: string;

beforeAll(async () => {
  base = tempDir('reservoir-direct-');
  docs = join(base, 'docs');
  writeTree(base, {
    'docs/a.txt': INSIDE,
    'docs/real/b.txt': INSIDE,
    'docs/swap/file.txt': INSIDE,
    'docs/later/one.txt': INSIDE,
    'docs/later/two.txt': INSIDE,
    'docs/later/three.txt': INSIDE,
    'docs/moving/file.txt': INSIDE,
    'outside.txt': SECRET,
    'outside-dir/file.txt': SECRET,
    'outside-dir/b.txt': SECRET,
  });
  symlinkSync('a.txt', join(docs, 'link-in.txt'));
  symlinkSync(join(base, 'outside.txt'), join(docs, 'link-out.txt'));
  symlinkSync('real', join(docs, 'dir-in'));
  symlinkSync(join(base, 'outside-dir'), join(docs, 'dir-out'));
  symlinkSync('../docs/real', join(docs, 'out-and-back'));
  provider = await filesProvider({ root: docs });
  R = provider.root;
});

afterAll(() => removeDir(base));

describe.runIf(linux)('openInside, the direct route', () => {
  it('opens a plain path inside the root and reports its real path', () => {
    const opened = openInside(docs, join(docs, 'real', 'b.txt'))!;
    try {
      expect(opened.realPath).toBe(join(docs, 'real', 'b.txt'));
      expect(opened.stats.isFile()).toBe(true);
      expect(text(opened.fd)).toBe(INSIDE);
    } finally {
      closeSync(opened.fd);
    }
  });

  it('reports where a directory link on the way leads, inside the root', () => {
    for (const via of ['dir-in', 'out-and-back']) {
      const opened = openInside(docs, join(docs, via, 'b.txt'))!;
      closeSync(opened.fd);
      expect(opened.realPath).toBe(join(docs, 'real', 'b.txt'));
    }
  });

  it('follows a final symlink inside the root to its target, and reports the target', () => {
    const opened = openInside(docs, join(docs, 'link-in.txt'))!;
    closeSync(opened.fd);
    expect(opened.realPath).toBe(join(docs, 'a.txt'));
  });

  it('answers a final symlink, or a directory link on the way, leading outside as missing', () => {
    expect(openInside(docs, join(docs, 'link-out.txt'))).toBeUndefined();
    expect(openInside(docs, join(docs, 'dir-out', 'file.txt'))).toBeUndefined();
    expect(openInside(docs, join(docs, 'dir-out', 'missing.txt'))).toBeUndefined();
    expect(openInside(docs, join(docs, 'dir-out'))).toBeUndefined();
  });
});

describe.runIf(linux)('the direct route through the files provider', () => {
  it('never opens a FIFO: a writer blocked on it is still waiting after every read and listing', async () => {
    const fifo = join(docs, 'pipe');
    execFileSync('mkfifo', [fifo]);
    // Blocks in open(2) until some reader opens the FIFO; it then writes one line and exits.
    const writer = spawn('sh', ['-c', `printf 'released by the server' > '${fifo}'`], {
      stdio: 'ignore',
    });
    try {
      await expectNotFound(provider.read(`${R}pipe`, ctx()), `${R}pipe`);
      await expectNotFound(provider.read(`${R}pipe?lines=1-2`, ctx()));
      expect((await walkProvider(provider, 1000)).items.map((i) => i.title)).not.toContain('pipe');
      // Had the server opened it, the writer's line went to the server and is gone. Now the test's
      // own reader opens it: the still-blocked writer hands its line over.
      const fd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
      try {
        const got = await eventually(() => {
          const buffer = Buffer.alloc(64);
          try {
            const n = readSync(fd, buffer, 0, 64, null);
            return n > 0 ? buffer.subarray(0, n).toString('utf8') : undefined;
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code === 'EAGAIN') return undefined;
            throw error;
          }
        }, "the blocked writer's line");
        expect(got).toBe('released by the server');
      } finally {
        closeSync(fd);
      }
    } finally {
      writer.kill();
      unlinkSync(fifo);
    }
  });

  it('answers a file replaced after the walk listed it — by a link out, a FIFO, a directory link out — as missing', async () => {
    const listed = (await walkProvider(provider, 1000)).items.map((i) => i.uri);
    for (const name of ['one.txt', 'two.txt', 'three.txt'])
      expect(listed).toContain(`${R}later/${name}`);
    const later = join(docs, 'later');
    unlinkSync(join(later, 'one.txt'));
    symlinkSync(join(base, 'outside.txt'), join(later, 'one.txt'));
    unlinkSync(join(later, 'two.txt'));
    execFileSync('mkfifo', [join(later, 'two.txt')]);
    unlinkSync(join(later, 'three.txt'));
    symlinkSync(join(base, 'outside-dir'), join(later, 'three.txt'));
    for (const name of ['one.txt', 'two.txt', 'three.txt'])
      await expectNotFound(provider.read(`${R}later/${name}`, ctx()), `${R}later/${name}`);
    await expectNotFound(provider.read(`${R}later/three.txt/file.txt`, ctx()));
  });

  it('answers a path whose directory was swapped for a link out of the root as missing', async () => {
    const swap = join(docs, 'swap');
    expect(await readText(`${R}swap/file.txt`)).toBe(INSIDE);
    renameSync(swap, join(base, 'swap-away'));
    symlinkSync(join(base, 'outside-dir'), swap);
    try {
      await expectNotFound(provider.read(`${R}swap/file.txt`, ctx()), `${R}swap/file.txt`);
      await expectNotFound(provider.read(`${R}swap/`, ctx()));
    } finally {
      unlinkSync(swap);
      renameSync(join(base, 'swap-away'), swap);
    }
  });

  it(
    'never serves the outside file while a plain directory on the way is swapped with a link out, or renamed out of the root and back',
    { timeout: 15_000 },
    async () => {
      const racer = startRacer(SWAPPER, {
        dir: join(docs, 'moving'),
        parked: join(base, 'moving-parked'),
        outsideDir: join(base, 'outside-dir'),
        ms: 1500,
      });
      const seen = { inside: 0, refused: 0, leaked: 0 };
      try {
        while (racer.running()) {
          try {
            const got = await readText(`${R}moving/file.txt`);
            if (got.includes('SECRET')) seen.leaked += 1;
            else if (got === INSIDE) seen.inside += 1;
          } catch (error) {
            if (!(error instanceof NotFoundError)) throw error;
            seen.refused += 1;
          }
          await new Promise((resolve) => setImmediate(resolve));
        }
      } finally {
        await racer.stop();
        rmSync(join(docs, 'moving'), { force: true, recursive: true });
        mkdirSync(join(docs, 'moving'));
      }
      expect(await racer.changes).toBeGreaterThan(10);
      expect(seen.leaked).toBe(0);
      expect(seen.inside).toBeGreaterThan(0);
      expect(seen.refused).toBeGreaterThan(0);
    },
  );
});

async function readText(uri: string): Promise<string> {
  const result = await provider.read(uri, ctx());
  return contentText(result.contents[0]!);
}

function contentText(content: ResourceContents): string {
  return 'text' in content ? content.text : Buffer.from(content.blob, 'base64').toString('utf8');
}

function text(fd: number): string {
  const buffer = Buffer.alloc(1024);
  return buffer.subarray(0, readSync(fd, buffer, 0, 1024, 0)).toString('utf8');
}

/**
 * Runs in a worker thread until `ms` have passed: the real directory is moved out of the root and a
 * link to the outside directory put in its place, then the directory is moved back (by rename).
 */
const SWAPPER = `
const { workerData, parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const d = workerData;
const end = Date.now() + d.ms;
let swaps = 0;
while (Date.now() < end) {
  fs.renameSync(d.dir, d.parked);
  fs.symlinkSync(d.outsideDir, d.dir + '.tmp');
  fs.renameSync(d.dir + '.tmp', d.dir);
  fs.unlinkSync(d.dir);
  fs.renameSync(d.parked, d.dir);
  swaps += 1;
}
parentPort.postMessage(swaps);
`;
