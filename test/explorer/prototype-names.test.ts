// A file's name is data: in Chromium against a real server, a text file named after an
// Object.prototype member (`notes.constructor`) previews as its text. The explorer's language table
// was an object looked up by the extension, so `constructor` found a function: the file was taken
// for code and its preview failed in highlight.js.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import {
  HAS_CHROMIUM,
  launchBrowser,
  openExplorer,
  startExplorer,
  type BrowserHandle,
  type Explorer,
} from './harness.js';

const NAMES = ['notes.constructor', 'notes.Constructor', 'notes.valueOf'];

let dir: string;
let explorer: Explorer;
let browser: BrowserHandle;

beforeAll(async () => {
  if (!HAS_CHROMIUM) return;
  dir = makeTempDir('reservoir-explorer-');
  const root = join(dir, 'served');
  writeTree(root, Object.fromEntries(NAMES.map((name) => [name, `the text of ${name}\n`])));
  explorer = await startExplorer({ root });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await explorer?.close();
  if (dir !== undefined) removeTree(dir);
});

describe.skipIf(!HAS_CHROMIUM)('files named after Object.prototype members', () => {
  it.each(NAMES)('%s previews as its text', async (name) => {
    const { page, close } = await openExplorer(browser, explorer.origin);
    await page
      .locator('.tree-row', { has: page.locator('.label', { hasText: name }) })
      .first()
      .click();
    await page.locator('.preview[aria-busy="false"]').waitFor();
    await page.locator('.preview pre', { hasText: `the text of ${name}` }).waitFor();
    await close();
  });
});
