// The explorer in Debian's Chromium against a real server: the tree pages lazily past 1,000
// resources with the server's cursors while only the rows in view exist, filters by name as you
// type, moves by keyboard, copies URIs; without search_resources, search matches file names through
// find_resources (the full-text search is in search.test.ts); the open
// resource and the tree follow changes on disk through subscriptions/listen.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import {
  HAS_CHROMIUM,
  launchBrowser,
  openExplorer,
  startExplorer,
  type BrowserHandle,
  type Explorer,
} from './harness.js';

const MANY = 1500;
let dir: string;
let root: string;
let explorer: Explorer;
let browser: BrowserHandle;

const name = (n: number): string => `f${String(n).padStart(4, '0')}.txt`;

beforeAll(async () => {
  if (!HAS_CHROMIUM) return;
  dir = makeTempDir('reservoir-explorer-');
  root = join(dir, 'served');
  const files: Record<string, string> = {
    'guides/quarterly-report.md': '# Quarterly report\n\nNumbers went up.\n',
    'guides/onboarding.md': '# Onboarding\n',
    'live.md': 'first version\n',
  };
  for (let n = 0; n < MANY; n += 1) files[`many/${name(n)}`] = `file ${n}\n`;
  writeTree(root, files);
  // Pages of 200: walking past 1,000 resources takes several cursors.
  explorer = await startExplorer({ root, pageSize: 200 });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await explorer?.close();
  removeTree(dir);
});

const uriOf = (relative: string): string => `file://${root}/${relative}`;

describe.skipIf(!HAS_CHROMIUM)('browsing', () => {
  it('pages lazily past 1,000 resources as the tree is scrolled, keeping only the rows in view in the page', async () => {
    const { page, close, foreign } = await openExplorer(browser, explorer.origin);
    await page.waitForSelector('.tree-row');
    // The first page is 200 resources: the last file is not loaded until the tree is scrolled.
    expect(await page.locator(`[data-uri="${uriOf(`many/${name(MANY - 1)}`)}"]`).count()).toBe(0);
    const last = page.locator(`[data-uri="${uriOf(`many/${name(MANY - 1)}`)}"]`);
    for (let round = 0; round < 40 && (await last.count()) === 0; round += 1) {
      await page.locator('.tree').evaluate((tree) => (tree.scrollTop = tree.scrollHeight));
      await page.waitForTimeout(50);
    }
    await last.waitFor();
    await page.waitForFunction(
      () => document.querySelector('.count')?.textContent?.startsWith('1503 loaded') === true,
    );
    expect(await page.locator('.count').textContent()).toBe('1503 loaded');
    // Virtualised: a few dozen rows exist, not 1,500.
    expect(await page.locator('.tree-row').count()).toBeLessThan(120);
    expect(foreign).toEqual([]);
    await close();
  });

  it('filters the tree by name as you type', async () => {
    const { page, close } = await openExplorer(browser, explorer.origin);
    await page.waitForSelector('.tree-row');
    await page.fill('input.filter', 'report');
    await page.locator(`[data-uri="${uriOf('guides/quarterly-report.md')}"]`).waitFor();
    const labels = await page.locator('.tree-row .label').allTextContents();
    expect(labels).toEqual([root, 'guides', 'quarterly-report.md']);
    await page.fill('input.filter', 'no-such-name');
    await page.waitForFunction(() => document.querySelectorAll('.tree-row').length === 0);
    await close();
  });

  it('moves through the tree with the keyboard, opens with Enter and copies the URI with c', async () => {
    const { page, close } = await openExplorer(browser, explorer.origin);
    await page.waitForSelector('.tree-row');
    await page.focus('.tree');
    // source, guides, guides/onboarding.md
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    expect(await page.locator('.tree-row.selected .label').textContent()).toBe('onboarding.md');
    await page.keyboard.press('Enter');
    await page.locator('.preview h2', { hasText: 'onboarding.md' }).waitFor();
    await page.locator('.markdown h1', { hasText: 'Onboarding' }).waitFor();
    await page.focus('.tree');
    await page.keyboard.press('c');
    await page.waitForFunction(
      (uri) => document.querySelector('.status')?.textContent?.includes(uri) === true,
      uriOf('guides/onboarding.md'),
    );
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(
      uriOf('guides/onboarding.md'),
    );
    // ArrowLeft on a file goes to its directory; again collapses it.
    await page.keyboard.press('ArrowLeft');
    expect(await page.locator('.tree-row.selected .label').textContent()).toBe('guides');
    await page.keyboard.press('ArrowLeft');
    await page.waitForFunction(
      () => document.querySelector('.tree-row.selected')?.getAttribute('aria-expanded') === 'false',
    );
    expect(await page.locator('.tree-row .label', { hasText: 'onboarding.md' }).count()).toBe(0);
    await close();
  });
});

describe.skipIf(!HAS_CHROMIUM)('search', () => {
  it('finds a resource by a word of its file name and opens it from the hit', async () => {
    const { page, close } = await openExplorer(browser, explorer.origin);
    await page.waitForSelector('.tree-row');
    await page.click('button[role="tab"]:has-text("Search")');
    await page.fill('.search input[type="search"]', 'quarterly');
    const hit = page.locator('.hit', { hasText: uriOf('guides/quarterly-report.md') });
    await hit.waitFor();
    // The query's word is highlighted in the hit, as text.
    expect((await hit.locator('mark').first().textContent())?.toLowerCase()).toBe('quarterly');
    await hit.locator('button.link').click();
    await page.locator('.markdown h1', { hasText: 'Quarterly report' }).waitFor();
    await close();
  });

  it('says when the server has no full-text search (as with --no-search) and matches names instead', async () => {
    const tools = (await explorer.reservoir.tools.all()).map((t) => t.name);
    expect(tools).toContain('find_resources');
    expect(tools).not.toContain('search_resources');
    const { page, close } = await openExplorer(browser, explorer.origin);
    await page.waitForSelector('.tree-row');
    await page.click('button[role="tab"]:has-text("Search")');
    expect(await page.locator('.search .note').textContent()).toContain('no full-text search');
    // Names only: a word inside a file is not found, a word of a name is.
    await page.fill('.search input[type="search"]', 'numbers');
    await page.locator('.search .muted', { hasText: 'No matches.' }).waitFor();
    await page.fill('.search input[type="search"]', 'onboarding');
    await page.locator('.hit', { hasText: uriOf('guides/onboarding.md') }).waitFor();
    await close();
  });
});

describe.skipIf(!HAS_CHROMIUM)('live', () => {
  it('re-reads the open resource when its file is written and marks it "changed just now"', async () => {
    const { page, close } = await openExplorer(browser, explorer.origin);
    await page.locator(`[data-uri="${uriOf('live.md')}"]`).click();
    await page.locator('.markdown', { hasText: 'first version' }).waitFor();
    expect(await page.locator('.preview .changed').count()).toBe(0);
    // The server has acknowledged the listen stream for the open resource: a write now reaches the page.
    await page.locator(`.app[data-watching="${uriOf('live.md')}"]`).waitFor();
    writeFileSync(join(root, 'live.md'), 'second version\n');
    await page.locator('.markdown', { hasText: 'second version' }).waitFor({ timeout: 15_000 });
    expect(await page.locator('.preview .changed').textContent()).toBe('changed just now');
    await close();
  });

  it('shows a file created on disk in the open tree, keeping collapsed directories collapsed', async () => {
    const { page, close } = await openExplorer(browser, explorer.origin);
    await page.waitForSelector('.tree-row');
    await page.locator(`[data-uri="${uriOf('guides/')}"]`).click();
    await page.locator(`[data-uri="${uriOf('guides/')}"][aria-expanded="false"]`).waitFor();
    await page.locator('.app[data-watching=""]').waitFor();
    writeFileSync(join(root, 'brand-new.md'), '# new\n');
    await page.locator(`[data-uri="${uriOf('brand-new.md')}"]`).waitFor({ timeout: 15_000 });
    await page.locator('.top .changed', { hasText: 'tree changed just now' }).waitFor();
    expect(
      await page.locator(`[data-uri="${uriOf('guides/')}"]`).getAttribute('aria-expanded'),
    ).toBe('false');
    expect(await page.locator(`[data-uri="${uriOf('guides/onboarding.md')}"]`).count()).toBe(0);
    await close();
  });
});
