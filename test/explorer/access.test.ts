// The explorer with bearer tokens and access rules, in Chromium: without a token the page asks for
// one; a refused token is said so; the token lives in sessionStorage only (not in a URL or cookie);
// a scoped token's tree, search and direct reads never show a denied resource; "who am I" shows the
// principal and the rules that apply to it.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { makeToken } from '../security/harness.js';
import {
  HAS_CHROMIUM,
  launchBrowser,
  openExplorer,
  startExplorer,
  type BrowserHandle,
  type Explorer,
} from './harness.js';

const alice = makeToken('alice', ['team']);
let dir: string;
let root: string;
let explorer: Explorer;
let browser: BrowserHandle;

beforeAll(async () => {
  if (!HAS_CHROMIUM) return;
  dir = makeTempDir('reservoir-explorer-');
  root = join(dir, 'served');
  writeTree(root, {
    'public/open.md': '# open\n',
    'public/also.md': '# also\n',
    'secret/plans.md': '# secret plans\n\nthe walrus protocol\n',
    'public/walrus.md': '# walrus\n',
  });
  explorer = await startExplorer({
    root,
    tokens: [alice],
    search: true,
    access: {
      rules: [
        {
          principals: ['token:alice'],
          allow: [`file://${root}/**`, 'tool:*'],
          deny: [`file://${root}/secret/**`],
        },
      ],
    },
  });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await explorer?.close();
  removeTree(dir);
});

describe.skipIf(!HAS_CHROMIUM)('tokens', () => {
  it('asks for a token, says when one is refused, and keeps an accepted one in sessionStorage only', async () => {
    const { page, close } = await openExplorer(browser, explorer.origin);
    await page.locator('form.login', { hasText: 'This server needs a token.' }).waitFor();
    await page.fill('form.login input[name="token"]', 'not-a-valid-token-0123456789-0123456789');
    await page.click('form.login button[type="submit"]');
    await page.locator('form.login', { hasText: 'That token was refused.' }).waitFor();
    await page.fill('form.login input[name="token"]', alice.token);
    await page.click('form.login button[type="submit"]');
    await page.waitForSelector('.tree-row');
    expect(await page.evaluate(() => sessionStorage.getItem('reservoir.token'))).toBe(alice.token);
    expect(page.url()).not.toContain(alice.token);
    expect(await page.context().cookies()).toEqual([]);
    await close();
  });
});

describe.skipIf(!HAS_CHROMIUM)('a scoped token', () => {
  it('never sees a denied resource: not in the tree, not in search, not by its URI', async () => {
    const { page, close } = await openExplorer(browser, explorer.origin, { token: alice.token });
    await page.locator(`[data-uri="file://${root}/public/open.md"]`).waitFor();
    expect(await page.locator('.tree-row .label').allTextContents()).toEqual([
      root,
      'public',
      'also.md',
      'open.md',
      'walrus.md',
    ]);
    await page.click('button[role="tab"]:has-text("Search")');
    // Full-text search (search_resources): a word only the denied file holds finds nothing …
    // (the tab offers it once the tool list, asked for after the tree's first page, has come)
    await page.locator('.search input[placeholder="Search contents and names"]').waitFor();
    expect(await page.locator('.search .note').count()).toBe(0);
    await page.fill('.search input[type="search"]', 'protocol');
    await page.locator('.search .muted', { hasText: 'No matches.' }).waitFor();
    await page.fill('.search input[type="search"]', 'plans');
    await page.locator('.search .muted', { hasText: 'No matches.' }).waitFor();
    // … while a word both hold finds the permitted file alone.
    await page.fill('.search input[type="search"]', 'walrus');
    await page.locator(`.hit[data-uri="file://${root}/public/walrus.md"]`).waitFor();
    expect(await page.locator('.hit').count()).toBe(1);
    expect(await page.locator('.search').textContent()).not.toContain('secret');
    // A template opens any URI: the denied one is answered as missing.
    await page.click('button[role="tab"]:has-text("Templates")');
    await page.locator('.panel .choices button', { hasText: /./ }).first().waitFor();
    const plain = page
      .locator('.panel .choices li', { has: page.locator('code', { hasText: /\{\+path\}$/ }) })
      .locator('button');
    await plain.click();
    await page.fill('.form input[name="path"]', 'secret/plans.md');
    await page.click('.form button[type="submit"]');
    await page.locator('.preview .error').waitFor();
    expect(await page.locator('.preview .error').textContent()).toMatch(/not found/i);
    expect(await page.locator('.preview').textContent()).not.toContain('secret plans');
    await close();
  });

  it('shows who it is and the rules in force for it', async () => {
    const { page, close } = await openExplorer(browser, explorer.origin, { token: alice.token });
    await page.waitForSelector('.tree-row');
    await page.click('button[role="tab"]:has-text("Who am I")');
    await page.locator('.whoami .principal', { hasText: 'alice' }).waitFor();
    const text = (await page.locator('.whoami').textContent()) ?? '';
    expect(text).toContain('token');
    expect(text).toContain('team');
    expect(text).toContain('1; otherwise deny');
    expect(text).toContain(`file://${root}/secret/**`);
    expect(text).not.toContain(alice.token);
    await close();
  });
});
