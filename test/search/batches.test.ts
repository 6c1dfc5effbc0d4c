// The feeder's batches (src/search/batches.ts): a second batch is handed to the writer while the
// first is still being written, so the writer's thread never waits for the feeder to send the next;
// a third waits for the oldest, so no more than two are ever in flight; and every document reaches
// the index, in order.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/log.js';
import type { IndexWriter } from '../../src/search/backend.js';
import { Batches } from '../../src/search/batches.js';
import { buildDoc } from '../../src/search/document.js';
import { Segmenter } from '../../src/search/segment.js';
import { WorkerWriter } from '../../src/search/store-client.js';
import { Store, type NewDoc } from '../../src/search/store.js';
import { ensureBuilt } from '../helpers/build.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';

const ROOT = 'mem://batches/';
const segmenter = new Segmenter();
let dir: string;
let file: string;

beforeEach(async () => {
  await ensureBuilt();
  dir = makeTempDir('reservoir-batches-');
  file = join(dir, 'index.sqlite');
  Store.open(file, silentLogger).close();
});

afterEach(() => removeTree(dir));

const doc = (name: string): NewDoc =>
  buildDoc({ uri: `${ROOT}${name}`, name }, ROOT, `s:${name}`, segmenter, {
    key: `uri:${ROOT}${name}`,
    text: `words of ${name}`,
  });

/**
 * The real writer, with the first write held back until `release()`: what the feeder's batches do
 * while the writer's thread is busy with a batch. `log` records each write sent and the release.
 */
function heldWriter(real: WorkerWriter) {
  const log: string[] = [];
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const sent: (() => void)[] = [];
  const wrote = (n: number) =>
    new Promise<void>((resolve) => {
      if (log.filter((e) => e.startsWith('write')).length >= n) resolve();
      else sent[n] = resolve;
    });
  const writer: IndexWriter = Object.create(real) as IndexWriter;
  let writes = 0;
  writer.write = async (docs, removals) => {
    writes += 1;
    const n = writes;
    log.push(`write${n}`);
    sent[n]?.();
    if (n === 1) await released;
    return real.write(docs, removals);
  };
  return {
    writer,
    log,
    wrote,
    release: () => {
      log.push('release1');
      release();
    },
  };
}

describe('the feeder batches', () => {
  it('sends a second batch while the first is written, and a third only once the first is', async () => {
    const real = new WorkerWriter(file, silentLogger);
    const held = heldWriter(real);
    const batches = new Batches(() => held.writer);
    batches.add(doc('a.txt'));
    await batches.flush(false);
    batches.add(doc('b.txt'));
    const second = batches.flush(false);
    await held.wrote(2);
    await second;
    batches.add(doc('c.txt'));
    const third = batches.flush(false);
    held.release();
    await third;
    await batches.settle();
    expect(held.log).toEqual(['write1', 'write2', 'release1', 'write3']);
    expect(
      (await real.storedPage({ mount: ROOT }, Infinity, undefined, 10)).docs.map((d) => d.uri),
    ).toEqual([`${ROOT}a.txt`, `${ROOT}b.txt`, `${ROOT}c.txt`]);
    await real.close();
  });

  it('throws a failed batch to the feeder, and leaves none behind to fail a later flush', async () => {
    const real = new WorkerWriter(file, silentLogger);
    const batches = new Batches(() => real);
    batches.add(doc('a.txt'));
    await batches.flush(false);
    await real.close();
    batches.add(doc('b.txt'));
    await batches.flush(false).catch(() => undefined);
    await expect(batches.settle()).rejects.toMatchObject({
      code: 'RESERVOIR_INDEX_WRITER_STOPPED',
    });
    await expect(batches.settle()).resolves.toBeUndefined();
  });
});
