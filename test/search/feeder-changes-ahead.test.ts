// A file in a new directory is indexed as soon as the index can take it, whatever the feeder is
// doing: while a build writes its batches, the new subtree's document is written right after the
// batch in flight — not behind the rest of the build — and a new subtree's files are listed while
// the index is still being asked what it holds under it, not after.
import { describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../src/core/log.js';
import type { Provider, ResourceChange, ResourceInfo } from '../../src/core/types.js';
import type { IndexWriter } from '../../src/search/backend.js';
import { Feeder } from '../../src/search/feeder.js';
import { Segmenter } from '../../src/search/segment.js';
import { heldWriter } from './held-writer.js';

const ROOT = 'mem://ahead/';
const NEW_FILE = `${ROOT}new/a/b/note.txt`;

function info(path: string): ResourceInfo {
  return {
    uri: `${ROOT}${path}`,
    name: path.slice(path.lastIndexOf('/') + 1),
    mimeType: 'text/plain',
    size: 5,
    annotations: { lastModified: '2026-11-27T00:00:00.000Z' },
  };
}

/**
 * A source of `count` text files under bulk/, and of the files the test adds later (listed under
 * their directories by `listUnder`), whose changes the test announces.
 */
function source(count: number) {
  const files: ResourceInfo[] = [];
  for (let i = 0; i < count; i += 1) files.push(info(`bulk/f${String(i).padStart(5, '0')}.txt`));
  let listener: ((changes: ResourceChange[]) => void) | undefined;
  const listedUnder: string[] = [];
  const page = (items: ResourceInfo[], after: string | undefined, limit: number) => {
    const from = after === undefined ? 0 : items.findIndex((i) => i.uri > after);
    const slice = from < 0 ? [] : items.slice(from, from + limit);
    const last = from >= 0 && from + limit < items.length ? slice.at(-1)!.uri : undefined;
    return last === undefined ? { items: slice } : { items: slice, last };
  };
  const mount = {
    root: ROOT,
    list: async (after: string | undefined, limit: number) => page(files, after, limit),
    listUnder: async (uri: string, after: string | undefined, limit: number) => {
      listedUnder.push(uri);
      return page(
        files.filter((f) => f.uri.startsWith(uri)),
        after,
        limit,
      );
    },
    read: async (uri: string) => ({
      contents: [{ uri, mimeType: 'text/plain', text: uri === NEW_FILE ? 'a quokka' : 'words' }],
    }),
    onChanges: async (heard: (changes: ResourceChange[]) => void) => {
      listener = heard;
      return () => (listener = undefined);
    },
  } as unknown as Provider;
  return {
    mount,
    listedUnder,
    /** Creates `path` (in directories new to the index) and announces the directories `dirs`. */
    create(path: string, ...dirs: string[]) {
      files.push(info(path));
      files.sort((a, b) => (a.uri < b.uri ? -1 : 1));
      listener?.(dirs.map((dir) => ({ uri: `${ROOT}${dir}`, container: true })));
    },
  };
}

const feederOf = (mount: Provider, writer: IndexWriter) =>
  new Feeder(() => writer, [mount], {
    maxFileBytes: 1024,
    segmenter: new Segmenter(),
    logger: silentLogger,
  });

describe('the search feeder, for a new directory', () => {
  it('writes a new subtree’s file right after the build’s batch in flight, not behind the rest of the build', async () => {
    const bulk = 3000; // three batches of the build
    const src = source(bulk);
    const store = heldWriter();
    const feeder = feederOf(src.mount, store.writer);
    const built = feeder.start();
    // The build's first batch is being written (held).
    await vi.waitFor(() => expect(store.holding()).toBe(true), { timeout: 10_000 });
    src.create('new/a/b/note.txt', 'new/');
    store.release();
    // The next write is the new file's, on its own.
    await vi.waitFor(() => expect(store.holding()).toBe(true), { timeout: 10_000 });
    store.release();
    await vi.waitFor(() => expect(store.writes.length).toBe(2), { timeout: 10_000 });
    expect(store.writes[0]).toHaveLength(1000);
    expect(store.writes[1]).toEqual([NEW_FILE]);
    // The build goes on; everything is written, the new file again after the build.
    const releasing = setInterval(() => store.release(), 1);
    await built;
    await feeder.idle();
    clearInterval(releasing);
    const written = store.writes.flat();
    expect(new Set(written).size).toBe(bulk + 1);
    expect(written.at(-1)).toBe(NEW_FILE);
    feeder.close();
  });

  it('lists a new subtree while the index is still asked what it holds under it', async () => {
    const src = source(10);
    // The index is asked what it holds (the last id it gave) at the start of each reconcile: the
    // build's is answered, the new subtree's held.
    let asked = 0;
    let answer: ((lastId: number) => void) | undefined;
    const store = heldWriter(() =>
      (asked += 1) === 1 ? Promise.resolve(0) : new Promise((resolve) => (answer = resolve)),
    );
    const feeder = feederOf(src.mount, store.writer);
    const built = feeder.start();
    await vi.waitFor(() => expect(store.holding()).toBe(true), { timeout: 10_000 });
    store.release();
    await built;
    await feeder.idle();
    src.create('new/a/b/note.txt', 'new/');
    // Asked, not answered: the subtree is listed meanwhile.
    await vi.waitFor(() => expect(answer).toBeDefined(), { timeout: 10_000 });
    await vi.waitFor(() => expect(src.listedUnder).toEqual([`${ROOT}new/`]), { timeout: 10_000 });
    answer!(0);
    await vi.waitFor(() => expect(store.holding()).toBe(true), { timeout: 10_000 });
    store.release();
    await feeder.idle();
    expect(store.writes.at(-1)).toEqual([NEW_FILE]);
    feeder.close();
  });

  it('lists a new directory announced with the directories inside it once, not once for each', async () => {
    const src = source(10);
    const store = heldWriter();
    const feeder = feederOf(src.mount, store.writer);
    const releasing = setInterval(() => store.release(), 1);
    await feeder.start();
    await feeder.idle();
    src.create('new/a/b/note.txt', 'new/', 'new/a/', 'new/a/b/');
    await vi.waitFor(() => expect(store.writes.flat()).toContain(NEW_FILE), { timeout: 10_000 });
    await feeder.idle();
    clearInterval(releasing);
    expect(src.listedUnder).toEqual([`${ROOT}new/`]);
    feeder.close();
  });
});
