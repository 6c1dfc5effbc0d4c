// A reconcile's memory does not grow with the mount: it asks the index what it holds a page at a
// time (never the signatures of every document at once), and removes what went in batches of at
// most a thousand — counted here in entries, not measured in time or bytes.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/log.js';
import type { Provider, ResourceInfo } from '../../src/core/types.js';
import type { IndexWriter } from '../../src/search/backend.js';
import { Feeder } from '../../src/search/feeder.js';
import { Segmenter } from '../../src/search/segment.js';
import { WorkerWriter } from '../../src/search/store-client.js';
import { Store } from '../../src/search/store.js';
import { ensureBuilt } from '../helpers/build.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';

const ROOT = 'mem://bounded/';
const FILES = 5000;

let dir: string;
let file: string;

beforeEach(async () => {
  await ensureBuilt();
  dir = makeTempDir('reservoir-bounded-');
  file = join(dir, 'index.sqlite');
});

afterEach(() => removeTree(dir));

const info = (i: number): ResourceInfo => ({
  uri: `${ROOT}d${Math.floor(i / 100)}/f${String(i).padStart(5, '0')}.txt`,
  name: `f${i}.txt`,
  mimeType: 'text/plain',
  size: 5,
  annotations: { lastModified: '2026-11-28T00:00:00.000Z' },
});

/** A source listing `files` (in URI order, pages as asked). */
function source(files: ResourceInfo[]): Provider {
  return {
    root: ROOT,
    list: async (after: string | undefined, limit: number) => {
      const from = after === undefined ? 0 : files.findIndex((f) => f.uri > after);
      const items = from < 0 ? [] : files.slice(from, from + limit);
      return from >= 0 && from + limit < files.length
        ? { items, last: items.at(-1)!.uri }
        : { items };
    },
    read: async (uri: string) => ({ contents: [{ uri, mimeType: 'text/plain', text: 'words' }] }),
  } as unknown as Provider;
}

/**
 * The real writer, recording the most entries any one answer held (a list, a map, a page of stored
 * documents) and the most removals any one write carried.
 */
function counting(real: WorkerWriter) {
  const most = { answer: 0, removals: 0 };
  const size = (value: unknown): number =>
    value instanceof Map || value instanceof Set
      ? value.size
      : Array.isArray(value)
        ? value.length
        : typeof value === 'object' && value !== null && 'docs' in value
          ? size((value as { docs: unknown }).docs)
          : 0;
  const writer = new Proxy(real, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown;
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        if (key === 'write') most.removals = Math.max(most.removals, (args[1] as unknown[]).length);
        const result = (await (value as (...a: unknown[]) => unknown).apply(
          target,
          args,
        )) as unknown;
        most.answer = Math.max(most.answer, size(result));
        return result;
      };
    },
  }) as IndexWriter;
  return { writer, most };
}

async function build(files: ResourceInfo[], writer: IndexWriter): Promise<void> {
  const feeder = new Feeder(() => writer, [source(files)], {
    maxFileBytes: 1024,
    segmenter: new Segmenter(),
    logger: silentLogger,
  });
  try {
    await feeder.start();
    await feeder.idle();
  } finally {
    feeder.close();
  }
}

describe('a reconcile of a large mount', () => {
  it('asks the index a page at a time and removes what went in bounded batches', async () => {
    const all = Array.from({ length: FILES }, (_, i) => info(i)).sort((a, b) =>
      a.uri < b.uri ? -1 : 1,
    );
    const first = new WorkerWriter(file, silentLogger);
    await build(all, first);
    await first.close();

    // Again, with 3,000 of the files gone and one changed: the index is reconciled with it.
    const kept = all.filter((_, i) => i % 5 === 0 || i % 5 === 3);
    kept[0] = { ...kept[0]!, size: 6 };
    const real = new WorkerWriter(file, silentLogger);
    const { writer, most } = counting(real);
    await build(kept, writer);
    await real.close();

    expect(most.answer).toBeLessThanOrEqual(2000);
    expect(most.removals).toBeLessThanOrEqual(1000);
    const store = Store.open(file, silentLogger);
    try {
      const stored = store.storedPage({ mount: ROOT }, Infinity, undefined, FILES + 1).docs;
      expect(stored.map((d) => d.uri)).toEqual(kept.map((f) => f.uri));
      expect(store.stored([kept[0]!.uri])[0]?.sig).toBe(`m:6:2026-11-28T00:00:00.000Z`);
    } finally {
      store.close();
    }
  });
});
