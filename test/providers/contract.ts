/**
 * The provider contract, as a reusable suite (in the spirit of unstorage's test/drivers/utils.ts).
 * Every provider runs it: keyset pages respect their limit and resume without repeats or gaps, a
 * full walk is complete and stable, every listed URI lies under the provider's root and reads back
 * with the same URI and is its own canonical URI, a missing URI is a NotFoundError (never an empty result), junk resume keys are
 * refused when the provider validates keys, and close() may be called twice.
 *
 * The optional capabilities are cases too, each skipped with its reason when the provider lacks the
 * capability or the fixture does not describe how to exercise it: templates (under the root, stable),
 * completion (a value completes to an expected one, bounded), watch (a change is reported, a missing
 * URI is refused), directory reads (`readDirectory` walked in pages, or one JSON listing by `read`;
 * entries lie under the root and read back) and feeding the search index (`onChanges` reports a
 * change, `searchDocuments` gives documents under the root). A skip always says why.
 *
 *   testProvider({ name, setup: async () => ({ provider, knownUris, missingUri, cleanup }) });
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Provider, ResourceChange, ResourceInfo } from '../../src/core/types.js';
import { ctx, expectNotFound, uris, walkProvider } from './helpers.js';

export interface ProviderFixture {
  provider: Provider;
  /** URIs the provider must list, each exactly once (it may list others too). */
  knownUris: string[];
  /** A URI under the provider's root that names nothing. */
  missingUri: string;
  cleanup: () => void | Promise<void>;
  /** A listed URI the test may change, and how: exercises `watch`. */
  change?: { uri: string; apply: () => void | Promise<void> };
  /**
   * A directory URI: walked with `readDirectory` when the provider has it, and otherwise read as one
   * listing (`inode/directory`, JSON entries) by `read`.
   */
  directoryUri?: string;
  /** A template variable, a typed value, and one completion it must offer. */
  completion?: { uriTemplate: string; variable: string; value: string; expected: string };
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
      for (const uri of knownUris)
        expect(
          listed.filter((u) => u === uri),
          uri,
        ).toHaveLength(1);
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
      if (provider.canonical === undefined)
        return t.skip('the provider resolves no other spellings of its URIs (no canonical)');
      for (const item of reference)
        expect([await provider.canonical!(item.uri, ctx())].flat(), item.uri).toEqual([item.uri]);
    });

    it('throws NotFoundError for a missing URI rather than answering with nothing', async () => {
      const { provider, missingUri } = get();
      expect(missingUri.startsWith(provider.root)).toBe(true);
      await expectNotFound(provider.read(missingUri, ctx()), missingUri);
    });

    it('accepts every resume key it returned and rejects junk keys, when it validates keys', async (t) => {
      const { provider } = get();
      if (provider.isValidKey === undefined)
        return t.skip('the provider does not validate resume keys (no isValidKey)');
      const isValidKey = provider.isValidKey!.bind(provider);
      const lastKeys = (await walkProvider(provider, 1)).pages.flatMap((p) =>
        p.last === undefined ? [] : [p.last],
      );
      for (const key of lastKeys)
        expect(isValidKey(key), `own key ${JSON.stringify(key)}`).toBe(true);
      for (const key of JUNK_KEYS)
        expect(isValidKey(key), `junk key ${JSON.stringify(key.slice(0, 20))}`).toBe(false);
    });

    it('can be closed twice without an error, when it can be closed at all', async (t) => {
      const fresh = await options.setup();
      try {
        if (fresh.provider.close === undefined)
          return t.skip('the provider holds nothing to close (no close)');
        await fresh.provider.close!();
        await fresh.provider.close!();
      } finally {
        await fresh.cleanup();
      }
    });

    it('offers templates under its root, each named, the same on every call, when it has templates', async (t) => {
      const { provider } = get();
      if (provider.templates === undefined) return t.skip('the provider has no templates');
      const first = provider.templates();
      if (first.length === 0) return t.skip('the provider offers no templates in this fixture');
      for (const template of first) {
        expect(template.uriTemplate.startsWith(provider.root), template.uriTemplate).toBe(true);
        expect(template.name.length).toBeGreaterThan(0);
      }
      expect(provider.templates().map((template) => template.uriTemplate)).toEqual(
        first.map((template) => template.uriTemplate),
      );
    });

    it('completes a template variable to a bounded list holding the expected value, when it completes', async (t) => {
      const { provider, completion } = get();
      if (provider.templates === undefined)
        return t.skip('the provider has no templates, so nothing to complete');
      if (completion === undefined)
        return t.skip(
          'the fixture names no completion to check (the provider completes nothing here)',
        );
      const template = provider
        .templates()
        .find((candidate) => candidate.uriTemplate === completion.uriTemplate);
      const complete = template?.complete?.[completion.variable];
      expect(complete, `${completion.uriTemplate} completes ${completion.variable}`).toBeDefined();
      const answer = await complete!(completion.value, {}, ctx());
      expect(answer.values).toContain(completion.expected);
      expect(answer.values.length).toBeLessThanOrEqual(100);
      if (answer.total !== undefined)
        expect(answer.total).toBeGreaterThanOrEqual(answer.values.length);
    });

    it('reports a change of a watched resource and refuses to watch a missing one, when it watches', async (t) => {
      const { provider, change, missingUri } = get();
      if (provider.watch === undefined) return t.skip('the provider has no watch capability');
      if (change === undefined) return t.skip('the fixture gives no way to change a resource');
      let changes = 0;
      const stop = await provider.watch(change.uri, () => void (changes += 1));
      try {
        await change.apply();
        await expect
          .poll(() => changes, { timeout: 10_000, interval: 20 })
          .toBeGreaterThanOrEqual(1);
      } finally {
        stop();
      }
      await expectNotFound(
        Promise.resolve().then(() => provider.watch!(missingUri, () => undefined)),
      );
    });

    it('walks a directory in pages whose entries lie under the root and read back, when it has directory reads', async (t) => {
      const { provider, directoryUri } = get();
      if (provider.readDirectory === undefined)
        return t.skip(
          'the provider has no readDirectory (see the JSON listing case for read-based directories)',
        );
      if (directoryUri === undefined) return t.skip('the fixture names no directory to walk');
      const whole = await provider.readDirectory(directoryUri, undefined, 1000, ctx());
      expect(whole.items.length).toBeGreaterThan(0);
      const paged: string[] = [];
      let after: string | undefined;
      do {
        const page = await provider.readDirectory(directoryUri, after, 1, ctx());
        expect(page.items.length).toBeLessThanOrEqual(1);
        paged.push(...page.items.map((entry) => entry.name));
        after = page.last;
      } while (after !== undefined);
      expect(paged).toEqual(whole.items.map((entry) => entry.name));
      for (const entry of whole.items) {
        expect(entry.uri.startsWith(provider.root), entry.uri).toBe(true);
        expect(['file', 'directory', 'special']).toContain(entry.kind);
        if (entry.kind === 'file')
          expect((await provider.read(entry.uri, ctx())).contents[0]!.uri).toBe(entry.uri);
      }
      await expectNotFound(
        provider.readDirectory(get().missingUri.replace(/\/?$/, '/'), undefined, 10, ctx()),
      );
    });

    it('reads a directory URI as one JSON listing whose entries lie under the root and read back, when it reads directories that way', async (t) => {
      const { provider, directoryUri } = get();
      if (provider.readDirectory !== undefined)
        return t.skip(
          'the provider serves directories by readDirectory (walked in the case above)',
        );
      if (directoryUri === undefined)
        return t.skip('the fixture names no directory (the provider has no directory reads)');
      const result = await provider.read(directoryUri, ctx());
      const listing = result.contents[0]!;
      expect(listing).toMatchObject({ uri: directoryUri, mimeType: 'inode/directory' });
      const entries = JSON.parse((listing as { text: string }).text) as {
        name: string;
        uri: string;
        kind: string;
      }[];
      expect(entries.length).toBeGreaterThan(0);
      for (const entry of entries) {
        expect(entry.uri.startsWith(provider.root), entry.uri).toBe(true);
        expect(['file', 'directory']).toContain(entry.kind);
        if (entry.kind === 'file')
          expect((await provider.read(entry.uri, ctx())).contents[0]!.uri).toBe(entry.uri);
      }
    });

    it('feeds the search index with the changes it sees (onChanges), when it reports changes', async (t) => {
      const { provider, change } = get();
      if (provider.onChanges === undefined)
        return t.skip(
          'the provider reports no per-resource changes (no onChanges): the index re-reads it on list changes',
        );
      if (change === undefined) return t.skip('the fixture gives no way to change a resource');
      const seen: ResourceChange[] = [];
      const stop = await provider.onChanges((changes) => void seen.push(...changes));
      try {
        await change.apply();
        await expect
          .poll(
            () =>
              seen.some(
                (c) =>
                  c.uri === change.uri || (c.container === true && change.uri.startsWith(c.uri)),
              ),
            { timeout: 10_000, interval: 20 },
          )
          .toBe(true);
      } finally {
        stop();
      }
      for (const c of seen) expect(c.uri.startsWith(provider.root), c.uri).toBe(true);
    });

    it('feeds the search index documents under its root, each with text, when it has extra documents (searchDocuments)', async (t) => {
      const { provider } = get();
      if (provider.searchDocuments === undefined)
        return t.skip(
          'the provider adds no text beyond what list and read give (no searchDocuments)',
        );
      const documents = await provider.searchDocuments(ctx());
      expect(documents.length).toBeGreaterThan(0);
      for (const document of documents) {
        expect(document.info.uri.startsWith(provider.root), document.info.uri).toBe(true);
        expect(document.text.length).toBeGreaterThan(0);
      }
    });

    options.additionalTests?.(get);
  });
}
