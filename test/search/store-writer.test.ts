// The SQLite index is written on a thread of its own (src/search/store-client.ts): a call sees every
// write sent before it, however many are in flight, and a writer whose thread is gone makes the
// build partial — said, with its reason — rather than a build that silently indexed nothing.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/log.js';
import type { Provider } from '../../src/core/types.js';
import { buildDoc } from '../../src/search/document.js';
import { Feeder } from '../../src/search/feeder.js';
import { Segmenter } from '../../src/search/segment.js';
import { WorkerWriter } from '../../src/search/store-client.js';
import { Store } from '../../src/search/store.js';
import { ensureBuilt } from '../helpers/build.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';

const ROOT = 'mem://writer/';
const segmenter = new Segmenter();
let dir: string;
let file: string;

beforeEach(async () => {
  await ensureBuilt();
  dir = makeTempDir('reservoir-writer-');
  file = join(dir, 'index.sqlite');
  Store.open(file, silentLogger).close();
});

afterEach(() => removeTree(dir));

function doc(name: string, text: string) {
  const uri = `${ROOT}${name}`;
  return buildDoc({ uri, name }, ROOT, `s:${text}`, segmenter, { key: `id:${name}`, text });
}

describe('the index writer thread', () => {
  it('answers each call after every write sent before it', async () => {
    const writer = new WorkerWriter(file, silentLogger);
    const writes = Array.from({ length: 20 }, (_, i) =>
      writer.write([doc(`f${i}.txt`, `w${i}`)], []),
    );
    const seen = writer.hasText('id:f19.txt');
    await Promise.all(writes);
    expect(await seen).toBe(true);
    expect(writer.stats.docsWritten).toBe(20);
    expect((await writer.storedPage({ mount: ROOT }, Infinity, undefined, 100)).docs).toHaveLength(
      20,
    );
    await writer.close();
  });

  it('makes the build partial, naming why, once its thread is gone', async () => {
    const writer = new WorkerWriter(file, silentLogger);
    await writer.close();
    const mount = {
      root: ROOT,
      list: async () => ({ items: [{ uri: `${ROOT}a.txt`, name: 'a.txt', size: 5 }] }),
      read: async (uri: string) => ({ contents: [{ uri, mimeType: 'text/plain', text: 'words' }] }),
    } as unknown as Provider;
    const feeder = new Feeder(() => writer, [mount], {
      maxFileBytes: 1024,
      segmenter,
      logger: silentLogger,
    });
    await feeder.start();
    expect(feeder.progress.partial).toMatchObject({
      code: 'RESERVOIR_INDEX_WRITER_STOPPED',
      message: expect.stringMatching(/the search index writer stopped/),
    });
    feeder.close();
  });
});
