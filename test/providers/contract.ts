/**
 * The provider contract, as a reusable suite (in the spirit of unstorage's test/drivers/utils.ts).
 * Every provider runs it: keyset pages respect their limit and resume without repeats or gaps, a
 * full walk is complete and stable, every listed URI lies under the provider's root and reads back
 * with the same URI and is its own canonical URI, a missing URI is a NotFoundError (never an empty result), junk resume keys are
 * refused when the provider validates keys, and close() may be called twice.
 *
 *   testProvider({ name, setup: async () => ({ provider, knownUris, missingUri, cleanup }) });
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Provider, ResourceInfo } from '../../src/core/types.js';
import { ctx, expectNotFound, uris, walkProvider } from './helpers.js';

export interface ProviderFixture {
  provider: Provider;
  /** URIs the provider must list, each exactly once (it may list others too). */
  knownUris: string[];
  /** A URI under the provider's root that names nothing. */
  missingUri: string;
  cleanup: () => void | Promise<void>;
}

export interface ProviderContractOptions {
  name: string;
  setup: () => Promise<ProviderFixture>;
  /** Extra cases run inside the same describe block, sharing the fixture. */
  additionalTests?: (fixture: () => ProviderFixture) => void;
}

/** Page sizes every resume test walks with; 1 and 2 force a page boundary at every item. */
const PAGE_SIZES = [1, 2, 3, 7];
const FULL_PAGE = 10_000;
/** Resume keys no provider may accept. */
const JUNK_KEYS = ['', '\0', 'a\0b', 'x'.repeat(1 << 20)];

export function testProvider(options: ProviderContractOptions): void {
  describe(`provider contract: ${options.name}`, () => {
    let fixture: ProviderFixture | undefined;
    let reference: ResourceInfo[] = [];
    const get = (): ProviderFixture => {
      if (fixture === undefined) throw new Error('the provider fixture was not set up');
      return fixture;
    };

    beforeAll(async () => {
      fixture = await options.setup();
      reference = (await walkProvider(fixture.provider, FULL_PAGE)).items;
    });

    afterAll(async () => {
      await fixture?.cleanup();
    });

    it('returns list pages no longer than the limit it was given', async () => {
      const { provider } = get();
      for (const limit of PAGE_SIZES) {
        const walk = await walkProvider(provider, limit);
        for (const page of walk.pages) expect(page.size).toBeLessThanOrEqual(limit);
      }
    });

    it('resumes after each page’s last key without repeating or skipping an item', async () => {
      const { provider } = get();
      for (const limit of PAGE_SIZES) {
        const walk = await walkProvider(provider, limit);
        expect(uris(walk.items), `page size ${limit}`).toEqual(uris(reference));
      }
    });

    it('sees every known URI exactly once in a full walk, and nothing twice', async () => {
      const { knownUris } = get();
      const listed = uris(reference);
      expect(new Set(listed).size).toBe(listed.length);
      for (const uri of knownUris) expect(listed.filter((u) => u === uri), uri).toHaveLength(1);
    });

    it('lists in the same order on two separate walks', async () => {
      const { provider } = get();
      const first = uris((await walkProvider(provider, FULL_PAGE)).items);
      const second = uris((await walkProvider(provider, 2)).items);
      expect(second).toEqual(first);
      expect(first).toEqual(uris(reference));
    });

    it('lists only URIs that start with the provider’s root, each with a name', async () => {
      const { provider } = get();
      for (const item of reference) {
        expect(item.uri.startsWith(provider.root), `${item.uri} under ${provider.root}`).toBe(true);
        expect(typeof item.name).toBe('string');
        expect(item.name.length).toBeGreaterThan(0);
      }
    });

    it('reads every listed URI and answers with contents carrying that same URI', async () => {
      const { provider } = get();
      for (const item of reference) {
        const result = await provider.read(item.uri, ctx());
        expect(result.contents.length, item.uri).toBeGreaterThan(0);
        const first = result.contents[0]!;
        expect(first.uri).toBe(item.uri);
        const text = 'text' in first ? first.text : undefined;
        const blob = 'blob' in first ? first.blob : undefined;
        expect(typeof (text ?? blob), `${item.uri} has text or blob`).toBe('string');
      }
    });

    it('names every listed URI as its own canonical URI, when it resolves spellings', async (t) => {
      const { provider } = get();
      if (provider.canonical === undefined) t.skip();
      for (const item of reference) expect([await provider.canonical!(item.uri, ctx())].flat(), item.uri).toEqual([item.uri]);
    });

    it('throws NotFoundError for a missing URI rather than answering with nothing', async () => {
      const { provider, missingUri } = get();
      expect(missingUri.startsWith(provider.root)).toBe(true);
      await expectNotFound(provider.read(missingUri, ctx()), missingUri);
    });

    it('accepts every resume key it returned and rejects junk keys, when it validates keys', async (t) => {
      const { provider } = get();
      if (provider.isValidKey === undefined) t.skip();
      const isValidKey = provider.isValidKey!.bind(provider);
      const lastKeys = (await walkProvider(provider, 1)).pages.flatMap((p) => (p.last === undefined ? [] : [p.last]));
      for (const key of lastKeys) expect(isValidKey(key), `own key ${JSON.stringify(key)}`).toBe(true);
      for (const key of JUNK_KEYS) expect(isValidKey(key), `junk key ${JSON.stringify(key.slice(0, 20))}`).toBe(false);
    });

    it('can be closed twice without an error, when it can be closed at all', async (t) => {
      const fresh = await options.setup();
      try {
        if (fresh.provider.close === undefined) t.skip();
        await fresh.provider.close!();
        await fresh.provider.close!();
      } finally {
        await fresh.cleanup();
      }
    });

    options.additionalTests?.(get);
  });
}
