// The index file's own bookkeeping (src/search/store.ts): a resource's own text is found through its
// document (it keeps no key of its own), a shared text is stored once, and a source no longer served
// leaves the index whole, found through the range of its URIs.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/log.js';
import { buildDoc } from '../../src/search/document.js';
import { Segmenter } from '../../src/search/segment.js';
import { Store, type NewDoc } from '../../src/search/store.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';

const A = 'file:///a/';
const B = 'file:///b/';
const segmenter = new Segmenter();
let dir: string;
let store: Store;

function doc(root: string, path: string, text: string, contentId?: string): NewDoc {
  const uri = `${root}${path}`;
  return buildDoc({ uri, name: path }, root, `s:${text}`, segmenter, {
    key: contentId === undefined ? `uri:${uri}` : `id:${contentId}`,
    text,
  });
}

/** The URIs of the documents whose text matches `word`. */
function holding(word: string): string[] {
  return store.db
    .prepare(
      'SELECT d.uri FROM texts t JOIN docs d ON d.blob = t.rowid WHERE texts MATCH ? ORDER BY d.uri',
    )
    .pluck()
    .all(word) as string[];
}

beforeEach(() => {
  dir = makeTempDir('reservoir-store-');
  store = Store.open(join(dir, 'index.sqlite'), silentLogger);
});

afterEach(() => {
  store.close();
  removeTree(dir);
});

describe('the search index file', () => {
  it("rewrites a resource's own text when it changes: its old words are gone, its new ones found", () => {
    store.write([doc(A, 'x.txt', 'platypus'), doc(A, 'y.txt', 'platypus')], []);
    store.write([doc(A, 'x.txt', 'wombat')], []);
    expect(holding('platypus')).toEqual([`${A}y.txt`]);
    expect(holding('wombat')).toEqual([`${A}x.txt`]);
    expect(store.totals()).toMatchObject({ docs: 2, blobs: 2 });
    expect(store.hasText(`uri:${A}x.txt`)).toBe(true);
    expect(store.hasText(`uri:${A}z.txt`)).toBe(false);
  });

  it("counts each text's references exactly as a resource moves between a shared text and its own", () => {
    const refs = () => store.db.prepare('SELECT refs FROM blobs ORDER BY id').pluck().all();
    store.write([doc(A, 'x.txt', 'koala', 'c1'), doc(A, 'y.txt', 'koala', 'c1')], []);
    expect(refs()).toEqual([2]);
    store.write([doc(A, 'x.txt', 'quokka')], []);
    expect(holding('koala')).toEqual([`${A}y.txt`]);
    expect(holding('quokka')).toEqual([`${A}x.txt`]);
    expect(refs()).toEqual([1, 1]);
    // Its own text, named by its key alone (unchanged): kept, not written again.
    const unchanged = buildDoc({ uri: `${A}x.txt`, name: 'x.txt' }, A, 's:2', segmenter, {
      key: `uri:${A}x.txt`,
    });
    const written = store.stats.blobsWritten;
    store.write([unchanged], []);
    expect(store.stats.blobsWritten).toBe(written);
    expect(holding('quokka')).toEqual([`${A}x.txt`]);
    expect(refs()).toEqual([1, 1]);
    store.write([doc(A, 'x.txt', 'dingo', 'c2'), doc(A, 'y.txt', 'numbat')], []);
    expect(holding('quokka')).toEqual([]);
    expect(holding('koala')).toEqual([]);
    expect(holding('dingo')).toEqual([`${A}x.txt`]);
    expect(holding('numbat')).toEqual([`${A}y.txt`]);
    expect(refs()).toEqual([1, 1]);
    expect(store.totals()).toMatchObject({ docs: 2, blobs: 2 });
  });

  it('stores a text shared by several resources once, and drops it with its last resource', () => {
    store.write([doc(A, 'x.txt', 'echidna', 'c1'), doc(A, 'y.txt', 'echidna', 'c1')], []);
    expect(store.totals()).toMatchObject({ docs: 2, blobs: 1 });
    expect(holding('echidna')).toEqual([`${A}x.txt`, `${A}y.txt`]);
    store.write([], [`${A}x.txt`]);
    expect(store.hasText('id:c1')).toBe(true);
    store.write([], [`${A}y.txt`]);
    expect(store.hasText('id:c1')).toBe(false);
    expect(store.totals()).toMatchObject({ docs: 0, blobs: 0 });
  });

  it('drops every document of a source no longer served, and keeps the others', () => {
    store.write([doc(A, 'x.txt', 'quokka'), doc(B, 'x.txt', 'quokka')], []);
    store.close();
    store = Store.open(join(dir, 'index.sqlite'), silentLogger);
    store.keepMounts([B]);
    expect(holding('quokka')).toEqual([`${B}x.txt`]);
    const uris = (mount: string) =>
      store.storedPage({ mount }, Infinity, undefined, 10).docs.map((d) => d.uri);
    expect(uris(A)).toEqual([]);
    expect(uris(B)).toEqual([`${B}x.txt`]);
  });
});
