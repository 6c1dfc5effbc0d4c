// The rest of the server in the explorer, in Chromium: a template's variables are completed as you
// type and the URI it makes opens; a prompt's argument is completed and its rendered messages
// shown; a tool's form is generated from its input schema and its structured result shown.
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { definePrompt } from '../../src/core/prompts.js';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import {
  HAS_CHROMIUM,
  launchBrowser,
  openExplorer,
  startExplorer,
  type BrowserHandle,
  type Explorer,
} from './harness.js';

let dir: string;
let root: string;
let explorer: Explorer;
let browser: BrowserHandle;

const review = definePrompt({
  name: 'review',
  title: 'Review',
  description: 'Ask for a review with a focus',
  arguments: [
    {
      name: 'focus',
      required: true,
      complete: (value) => ({
        values: ['security', 'speed', 'style'].filter((v) => v.startsWith(value)),
      }),
    },
  ],
  messages: (args) => [
    { role: 'user', content: { type: 'text', text: `Please review for ${args['focus']}.` } },
  ],
});

beforeAll(async () => {
  if (!HAS_CHROMIUM) return;
  dir = makeTempDir('reservoir-explorer-');
  root = join(dir, 'served');
  writeTree(root, {
    'guides/setup.md': '# Setup guide\n',
    'guides/usage.md': '# Usage\n',
    'notes.txt': 'plain notes\n',
  });
  explorer = await startExplorer({ root, prompts: [review] });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await explorer?.close();
  removeTree(dir);
});

const options = (page: Page, name: string): Promise<string[]> =>
  page
    .locator(`datalist#complete-${name} option`)
    .evaluateAll((nodes) => nodes.map((n) => (n as HTMLOptionElement).value));

/** Runs the review prompt with `focus` = speed and waits for its rendered message. */
async function reviewForSpeed(page: Page): Promise<void> {
  await page.fill('.form input[name="focus"]', 'speed');
  await page.click('.form button[type="submit"]');
  await page.locator('.messages .message.user', { hasText: 'Please review for speed.' }).waitFor();
}

describe.skipIf(!HAS_CHROMIUM)('templates, prompts and tools', () => {
  it('completes a template variable as you type and opens the URI it makes', async () => {
    const { page, close } = await openExplorer(browser, explorer.origin);
    await page.waitForSelector('.tree-row');
    await page.click('button[role="tab"]:has-text("Templates")');
    await page
      .locator('.panel .choices li', { has: page.locator('code', { hasText: /\{\+path\}$/ }) })
      .locator('button')
      .click();
    await page.fill('.form input[name="path"]', 'guides/s');
    await page.waitForFunction(() =>
      Array.from(document.querySelectorAll('datalist#complete-path option')).some((o) =>
        (o as HTMLOptionElement).value.endsWith('setup.md'),
      ),
    );
    expect(await options(page, 'path')).toEqual(['guides/setup.md']);
    await page.fill('.form input[name="path"]', 'guides/setup.md');
    await page.click('.form button[type="submit"]');
    await page.locator('.markdown h1', { hasText: 'Setup guide' }).waitFor();
    await close();
  });

  it('completes a prompt argument and shows the rendered messages', async () => {
    const { page, close } = await openExplorer(browser, explorer.origin);
    await page.waitForSelector('.tree-row');
    await page.click('button[role="tab"]:has-text("Prompts")');
    await page.fill('.form input[name="focus"]', 's');
    await page.waitForFunction(
      () => document.querySelectorAll('datalist#complete-focus option').length === 3,
    );
    await page.fill('.form input[name="focus"]', 'sp');
    await page.waitForFunction(
      () => document.querySelectorAll('datalist#complete-focus option').length === 1,
    );
    expect(await options(page, 'focus')).toEqual(['speed']);
    await reviewForSpeed(page);
    await close();
  });

  it("offers the first prompt's form when the prompts are listed after the Prompts tab opened", async () => {
    let release!: () => void;
    const listed = new Promise<void>((resolve) => (release = resolve));
    const { page, close } = await openExplorer(browser, explorer.origin, {
      // The prompt list is held back until the tab shows that it has none yet.
      beforeLoad: (p) =>
        p.route('**/*', async (route) => {
          if ((route.request().postData() ?? '').includes('"prompts/list"')) await listed;
          await route.continue();
        }),
    });
    await page.waitForSelector('.tree-row');
    await page.click('button[role="tab"]:has-text("Prompts")');
    await page.locator('p.muted', { hasText: 'This server offers no prompts.' }).waitFor();
    release();
    await reviewForSpeed(page);
    await close();
  });

  it('builds a tool form from its input schema, runs it and shows the structured result', async () => {
    const { page, close } = await openExplorer(browser, explorer.origin);
    await page.waitForSelector('.tree-row');
    await page.click('button[role="tab"]:has-text("Tools")');
    await page.locator('.panel .choices button', { hasText: 'Find resources' }).click();
    expect(await page.locator('.form input[name="limit"]').getAttribute('type')).toBe('number');
    await page.fill('.form input[name="name"]', '*.md');
    await page.click('.form button[type="submit"]');
    await page.locator('.result .json-key', { hasText: 'resources' }).waitFor();
    const text = (await page.locator('.result').textContent()) ?? '';
    expect(text).toContain(`file://${root}/guides/setup.md`);
    expect(text).not.toContain('notes.txt');
    // A bad value is the server's answer (an isError result naming the argument), shown as failed.
    await page.fill('.form input[name="limit"]', '100000');
    await page.click('.form button[type="submit"]');
    await page.locator('.result.failed').waitFor();
    expect(await page.locator('.result.failed').textContent()).toMatch(/limit/);
    await close();
  });
});
