// Pins keyset paging under concurrent change: while a client pages through a tree, files are added
// (before and after the cursor), removed (seen and unseen, including the very file the cursor
// points after, and a whole directory around it) and rewritten between pages. Every file that was
// there throughout is listed exactly once, nothing is listed twice, nothing that never existed is
// listed — over stdio and HTTP, in both eras.
import { mkdirSync, readdirSync, rmSync, unlinkSync, writeFileSync, appendFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import {
  Cleanup,
  connectTarget,
  listPage,
  spawnHttpServer,
  TARGETS,
  type Target,
} from '../helpers/clients.js';
import {
  buildNestedTree,
  fileUri,
  makeTempDir,
  pad,
  removeTree,
  seededRandom,
} from '../helpers/tree.js';

const FILES = 2_000;
const PAGE_SIZE = 100;

const cleanup = new Cleanup();

beforeAll(() => ensureBuilt());
afterEach(() => cleanup.run());

interface Outcome {
  /** How many times each URI was listed. */
  seen: Map<string, number>;
  initial: Set<string>;
  removed: Set<string>;
  added: Set<string>;
  pages: number;
  anchorsRemoved: number;
  dirsRemoved: number;
}

async function pageWhileChanging(target: Target, seed: number): Promise<Outcome> {
  const root = makeTempDir();
  cleanup.add(() => removeTree(root));
  const rels = buildNestedTree(root, FILES, 50, 5);
  const uriOf = (rel: string): string => fileUri(root, rel);
  const present = new Set(rels);
  const initial = new Set(rels.map(uriOf));
  const removed = new Set<string>();
  const added = new Set<string>();
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

  const args = ['--page-size', String(PAGE_SIZE)];
  const httpUrl =
    target.transport === 'http' ? (await spawnHttpServer([root], args, cleanup)).url : undefined;
  const client = await connectTarget(
    target,
    { roots: [root], args, ...(httpUrl === undefined ? {} : { httpUrl }) },
    cleanup,
  );

  const relOfUri = new Map(rels.map((rel) => [uriOf(rel), rel]));
  const remove = (rel: string): void => {
    if (!present.has(rel)) return;
    unlinkSync(join(root, ...rel.split('/')));
    present.delete(rel);
    if (initial.has(uriOf(rel))) removed.add(uriOf(rel));
  };
  let serial = 0;
  const add = (rel: string): void => {
    const abs = join(root, ...rel.split('/'));
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, `added ${rel}\n`);
    present.add(rel);
    added.add(uriOf(rel));
    relOfUri.set(uriOf(rel), rel);
  };

  const seen = new Map<string, number>();
  let cursor: string | undefined;
  let pages = 0;
  let anchorsRemoved = 0;
  let dirsRemoved = 0;
  do {
    const page = await listPage(client, cursor);
    pages += 1;
    for (const r of page.resources) seen.set(r.uri, (seen.get(r.uri) ?? 0) + 1);
    cursor = page.nextCursor;
    if (cursor === undefined) break;

    const anchor = relOfUri.get(page.resources.at(-1)!.uri)!;
    const anchorDir = dirname(anchor);
    // New files right after the anchor, right before it, in a new directory before and after it.
    add(`${anchor.replace(/\.txt$/, '')}a.txt`);
    add(`${anchorDir}/e${pad(serial++, 5)}.txt`);
    add(`${anchorDir}/new${pad(serial++, 5)}/x.txt`);
    add(`d000/a-new${pad(serial++, 5)}.txt`);
    add(`z-new/${pad(serial++, 5)}.txt`);
    // Random additions and removals anywhere, seen or not.
    const live = [...present];
    for (let i = 0; i < 10; i += 1) remove(pick(live));
    for (let i = 0; i < 10; i += 1) add(`${dirname(pick(live))}/r${pad(serial++, 5)}.txt`);
    // Rewrites: the file stays, its content and size change.
    for (let i = 0; i < 5; i += 1) {
      const rel = pick([...present]);
      appendFileSync(join(root, ...rel.split('/')), 'more\n');
    }
    // The cursor's own file disappears every third page; on page 5 its whole directory does.
    if (pages % 3 === 0) {
      remove(anchor);
      anchorsRemoved += 1;
    }
    if (pages === 5) {
      const dirAbs = join(root, ...anchorDir.split('/'));
      for (const rel of [...present]) if (rel.startsWith(`${anchorDir}/`)) remove(rel);
      rmSync(dirAbs, { recursive: true, force: true });
      dirsRemoved += 1;
    }
  } while (pages < 1_000);

  // Whatever is on disk now must be what `present` says, or the expectations below are wrong.
  expect(countFiles(root)).toBe(present.size);
  return { seen, initial, removed, added, pages, anchorsRemoved, dirsRemoved };
}

function countFiles(dir: string): number {
  let n = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true }))
    n += entry.isDirectory() ? countFiles(join(dir, entry.name)) : 1;
  return n;
}

describe.each(TARGETS)('over $transport in the $era era', (target) => {
  it('lists every file that existed throughout exactly once, and no file twice, while files come and go between pages', async () => {
    const seed = TARGETS.indexOf(target) + 1;
    const { seen, initial, removed, added, pages, anchorsRemoved, dirsRemoved } =
      await pageWhileChanging(target, seed);

    // The churn really happened.
    expect(pages).toBeGreaterThanOrEqual(FILES / PAGE_SIZE - 5);
    expect(anchorsRemoved).toBeGreaterThan(3);
    expect(dirsRemoved).toBe(1);
    expect(removed.size).toBeGreaterThan(100);

    const duplicates = [...seen].filter(([, n]) => n > 1).map(([uri]) => uri);
    expect(duplicates).toEqual([]);
    const stable = [...initial].filter((uri) => !removed.has(uri));
    const missing = stable.filter((uri) => !seen.has(uri));
    expect(missing).toEqual([]);
    const invented = [...seen.keys()].filter((uri) => !initial.has(uri) && !added.has(uri));
    expect(invented).toEqual([]);
  });
});
