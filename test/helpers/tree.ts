/**
 * Temporary directory trees for end-to-end tests: created under a temp base (tmpfs when it can), returned as
 * canonical (real) paths — the server canonicalises its roots, so the URIs it lists are built from
 * real paths — and removed by `removeTree`.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  accessSync,
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  openSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Where trees are built: $RESERVOIR_E2E_TMP, else /dev/shm when writable (tmpfs: building a
 * 10,000-file tree there is several times faster than on disk), else the OS temp dir.
 */
const TEMP_BASE = ((): string => {
  const chosen = process.env['RESERVOIR_E2E_TMP'];
  if (chosen !== undefined && chosen !== '') return chosen;
  try {
    accessSync('/dev/shm', constants.W_OK);
    return '/dev/shm';
  } catch {
    return tmpdir();
  }
})();

/** A fresh empty directory, as its real path. */
export function makeTempDir(prefix = 'reservoir-e2e-'): string {
  return realpathSync.native(mkdtempSync(join(TEMP_BASE, prefix)));
}

export function removeTree(path: string | undefined): void {
  if (path !== undefined) rmSync(path, { recursive: true, force: true, maxRetries: 3 });
}

/** Writes `files` (relative '/'-joined path → content) under `root`, creating directories. */
export function writeTree(root: string, files: Record<string, string | Uint8Array>): void {
  for (const [rel, content] of Object.entries(files)) {
    const abs = join(root, ...rel.split('/'));
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, content);
  }
}

/** The URI the server lists for a file: Node's own percent-encoding of the absolute path. */
export function fileUri(root: string, rel: string): string {
  return pathToFileURL(join(root, ...rel.split('/'))).href;
}

/** The URI of a directory, always with its trailing slash. */
export function dirUri(root: string, rel = ''): string {
  const href = pathToFileURL(rel === '' ? root : join(root, ...rel.split('/'))).href;
  return href.endsWith('/') ? href : `${href}/`;
}

export function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Builds a nested tree of `count` small text files: `dNN/sNN/fNNNN.txt`, ten files per leaf
 * directory at least, spread over several levels. Returns the relative paths, in creation order.
 */
export function buildNestedTree(root: string, count: number, perDir = 100, perTop = 10): string[] {
  const rels: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const dir = Math.floor(i / perDir);
    const top = Math.floor(dir / perTop);
    const rel = `d${pad(top, 3)}/s${pad(dir % perTop, 2)}/f${pad(i, 5)}.txt`;
    rels.push(rel);
  }
  const made = new Set<string>();
  for (const rel of rels) {
    const abs = join(root, ...rel.split('/'));
    const parent = dirname(abs);
    if (!made.has(parent)) {
      mkdirSync(parent, { recursive: true });
      made.add(parent);
    }
    writeFileSync(abs, `${rel}\n`);
  }
  return rels;
}

export function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

/** A small deterministic PRNG (mulberry32), so churn tests replay identically. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Rewrites an existing file in ONE write at offset 0, padded to at least its current size, so there
 * is no intermediate state for the watcher to settle on. writeFileSync truncates first, and a writer
 * descheduled for longer than the settle time between the truncate and the write (these 2-core
 * machines at load 15 do that) rightly gets two notifications, one per settled state; the kinds
 * below that are two steps on purpose (truncate then write, delete then recreate) keep them.
 */
export function overwrite(path: string, text: string): void {
  const fd = openSync(path, 'r+');
  try {
    const body = text.replace(/\n$/, '');
    const size = fstatSync(fd).size;
    writeSync(fd, `${body.padEnd(size - 1, ' ')}\n`, 0);
  } finally {
    closeSync(fd);
  }
}

/**
 * Creates `path` holding `text` in one step: the text is written to a scratch file in
 * `scratchDir` — outside the tree, on its filesystem: by default beside the trees of makeTempDir —
 * then renamed into place. writeFileSync creates the file empty and writes after, and a writer
 * descheduled between the two (as on a loaded machine) leaves an empty file that is a settled state
 * of its own, rightly notified (or indexed) on its own.
 */
export function createWhole(path: string, text: string, scratchDir = TEMP_BASE): void {
  const scratch = join(
    scratchDir,
    `.reservoir-whole-${process.pid}-${randomBytes(6).toString('hex')}`,
  );
  writeFileSync(scratch, text);
  renameSync(scratch, path);
}
