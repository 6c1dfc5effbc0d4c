// The explorer's search box against a server offering `search_resources` (the full-text index), in
// Debian's Chromium: ranked hits for words inside files, the snippet's highlight ranges shown as
// <mark> elements (a file's own Markdown `**bold**` shown as text) and never parsed as HTML, the MIME type and source filters, and "More results"
// following the tool's nextCursor. (The fallback without the tool is in browse.test.ts, the scoped
// token in access.test.ts.)
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import type { Provider } from '../../src/core/types.js';
import {
  HAS_CHROMIUM,
  launchBrowser,
  openExplorer,
  pwned,
  startExplorer,
  type BrowserHandle,
  type Explorer,
} from './harness.js';

const PAGED = 64;
let dir: string;
let root: string;
let explorer: Explorer;
let browser: BrowserHandle;

beforeAll(async () => {
  if (!HAS_CHROMIUM) return;
  dir = makeTempDir('reservoir-explorer-search-');
  root = join(dir, 'served');
  const files: Record<string, string> = {
    // Ranked: the word in the name and three times in the text beats one mention in passing.
    'guides/budget.md':
      '# Budget\n\nThe retry budget caps retries. A budget per client; the budget resets hourly.\n',
    'notes/meeting.md':
      '# Meeting\n\nWe talked about lunch, the weather and, briefly, the budget.\n',
    'data/limits.json': '{ "budget": 12, "note": "retry budget for the json api" }\n',
    'hostile.md':
      'The marmalade <img src=x onerror="window.pwned=1"> <script>window.pwned=2</script> is **not** markup.\n',
  };
  for (let n = 0; n < PAGED; n += 1)
    files[`paged/p${String(n).padStart(3, '0')}.txt`] = `pagination fixture ${n}: zanzibar\n`;
  writeTree(root, files);
  explorer = await startExplorer({ root, search: true });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await explorer?.close();
  removeTree(dir);
});

const uriOf = (relative: string): string => `file://${root}/${relative}`;

async function searchFor(words: string): Promise<Awaited<ReturnType<typeof openExplorer>>> {
  const watched = await openExplorer(browser, explorer.origin);
  await watched.page.waitForSelector('.tree-row');
  await watched.page.click('button[role="tab"]:has-text("Search")');
  await watched.page.fill('.search input[type="search"]', words);
  return watched;
}

describe.skipIf(!HAS_CHROMIUM)('search over search_resources', () => {
  it('ranks hits for a word inside the files, best first, with the snippet match shown as a highlight element', async () => {
    const { page, close, foreign } = await searchFor('budget');
    await page.locator(`.hit[data-uri="${uriOf('notes/meeting.md')}"]`).waitFor();
    expect(await page.locator('.search .note').count()).toBe(0);
    const order = await page
      .locator('.hit')
      .evaluateAll((hits) => hits.map((hit) => hit.getAttribute('data-uri')));
    expect(order).toHaveLength(3);
    expect(order[0]).toBe(uriOf('guides/budget.md'));
    expect(order.indexOf(uriOf('notes/meeting.md'))).toBeGreaterThan(0);
    // The meeting note matches only in its text: its snippet carries the mark, and no ** is left.
    const snippet = page.locator(`.hit[data-uri="${uriOf('notes/meeting.md')}"] .snippet`);
    expect(await snippet.locator('mark').allTextContents()).toEqual(['budget']);
    expect(await snippet.textContent()).toContain('briefly, the budget');
    expect(await snippet.textContent()).not.toContain('**');
    // A hit opens its resource.
    await page.locator(`.hit[data-uri="${uriOf('guides/budget.md')}"] button.link`).click();
    await page.locator('.markdown h1', { hasText: 'Budget' }).waitFor();
    expect(foreign).toEqual([]);
    await close();
  });

  it('shows markup inside a snippet as text: no element is made from it and no script runs', async () => {
    const { page, close, dialogs } = await searchFor('marmalade');
    const snippet = page.locator(`.hit[data-uri="${uriOf('hostile.md')}"] .snippet`);
    await snippet.waitFor();
    expect(await snippet.textContent()).toContain('<img src=x onerror="window.pwned=1">');
    expect(await snippet.locator('mark').allTextContents()).toContain('marmalade');
    expect(await page.locator('.hits img, .hits script').count()).toBe(0);
    expect(await pwned(page)).toBeUndefined();
    expect(dialogs).toEqual([]);
    await close();
  });

  it("shows a file's own Markdown **bold** in a snippet as text, marking only the match", async () => {
    const { page, close } = await searchFor('marmalade');
    const snippet = page.locator(`.hit[data-uri="${uriOf('hostile.md')}"] .snippet`);
    await snippet.waitFor();
    expect(await snippet.locator('mark').allTextContents()).toEqual(['marmalade']);
    expect(await snippet.textContent()).toContain('is **not** markup.');
    await close();
  });

  it('narrows hits by MIME type and by source', async () => {
    const { page, close } = await searchFor('retry budget');
    await page.locator(`.hit[data-uri="${uriOf('data/limits.json')}"]`).waitFor();
    await page.locator(`.hit[data-uri="${uriOf('guides/budget.md')}"]`).waitFor();
    await page.selectOption('.search select[aria-label="MIME type"]', 'application/json');
    await page.waitForFunction(() => document.querySelectorAll('.hit').length === 1);
    expect(await page.locator('.hit').getAttribute('data-uri')).toBe(uriOf('data/limits.json'));
    await page.selectOption('.search select[aria-label="MIME type"]', 'text/markdown');
    await page.waitForFunction(
      () =>
        document.querySelectorAll('.hit').length === 1 &&
        document.querySelector('.hit')?.getAttribute('data-uri')?.endsWith('.md') === true,
    );
    expect(await page.locator('.hit').getAttribute('data-uri')).toBe(uriOf('guides/budget.md'));
    // The one served source: choosing it keeps its hits (sent as `under`, a URI prefix).
    const sources = await page
      .locator('.search select[aria-label="Source"] option')
      .evaluateAll((options) =>
        options.map((o) => (o as HTMLOptionElement).value).filter((v) => v !== ''),
      );
    expect(sources).toHaveLength(1);
    await page.selectOption('.search select[aria-label="Source"]', sources[0]!);
    await page.selectOption('.search select[aria-label="MIME type"]', '');
    await page.waitForFunction(() => document.querySelectorAll('.hit').length === 2);
    await close();
  });

  it('pages past the first 50 hits with "More results", following the tool\'s nextCursor', async () => {
    const { page, close } = await searchFor('zanzibar');
    await page.waitForFunction(() => document.querySelectorAll('.hit').length === 50);
    const more = page.locator('button.more-hits');
    await more.waitFor();
    await more.click();
    await page.waitForFunction(
      (expected) => document.querySelectorAll('.hit').length === expected,
      PAGED,
    );
    const uris = await page
      .locator('.hit')
      .evaluateAll((hits) => hits.map((hit) => hit.getAttribute('data-uri')));
    expect(new Set(uris).size).toBe(PAGED);
    expect(await more.count()).toBe(0);
    await close();
  });

  it("says so when nothing matches, and shows the parser's message for a query it refuses", async () => {
    const { page, close } = await searchFor('quuxwordnowhere');
    await page.locator('.search .muted', { hasText: 'No matches.' }).waitFor();
    await page.fill('.search input[type="search"]', 'retry "budget');
    await page.locator('.search .error', { hasText: 'this quote is never closed' }).waitFor();
    await close();
  });
});

describe.skipIf(!HAS_CHROMIUM)('search while the index is first built', () => {
  let held: Explorer;
  let release: () => void;
  let reached: Promise<void>;

  beforeAll(async () => {
    const gated = join(dir, 'gated');
    writeTree(gated, {
      'a-ready.md': 'the walrus is indexed early\n',
      'b-held.md': 'held back\n',
      'c-late.md': 'the walrus came late\n',
    });
    const released = new Promise<void>((resolve) => (release = resolve));
    let arrived!: () => void;
    reached = new Promise<void>((resolve) => (arrived = resolve));
    // The indexer's read of b-held.md waits for the test: the first build stays running until then.
    const hold = (provider: Provider): Provider =>
      new Proxy(provider, {
        get(target, key) {
          if (key === 'read') {
            return async (uri: string, ctx: Parameters<Provider['read']>[1]) => {
              if (uri.endsWith('/b-held.md')) {
                arrived();
                await released;
              }
              return target.read(uri, ctx);
            };
          }
          const value = Reflect.get(target, key, target) as unknown;
          return typeof value === 'function'
            ? (value as (...args: unknown[]) => unknown).bind(target)
            : value;
        },
      });
    held = await startExplorer({ root: gated, search: true, firstBuildWaitMs: 50, wrap: hold });
  });

  afterAll(async () => {
    release?.();
    await held?.close();
  });

  it('starts the build when the page loads, says the index is being built, then shows the full hits once it is done, without a new keystroke', async () => {
    expect(held.reservoir.search?.isOpen).toBe(false);
    const { page, close } = await openExplorer(browser, held.origin);
    // Loading the page opened the index: its first build reaches the held file before any search.
    await reached;
    await page.waitForSelector('.tree-row');
    await page.click('button[role="tab"]:has-text("Search")');
    await page.fill('.search input[type="search"]', 'walrus');
    const note = page.locator('.search .indexing');
    await note.waitFor();
    expect(await note.textContent()).toMatch(/^Indexing: \d+ of \d+ resources so far/);
    release();
    await page.locator(`.hit[data-uri="file://${join(dir, 'gated')}/c-late.md"]`).waitFor();
    await note.waitFor({ state: 'detached' });
    expect(await page.locator('.hit').count()).toBe(2);
    await close();
  });
});
