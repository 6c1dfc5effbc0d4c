// The explorer's page furniture in Debian's Chromium: the "Loading…" placeholder is gone once the
// app is up, a SQL source (whose templates reveal `db://NAME/tables/` besides the resources at
// `db://NAME/`) is one root of the tree, and the flat list view beside the tree pages through
// resources/list with the keyboard and is remembered across visits.
import { join } from 'node:path';
import { loadSqliteDriver } from '../../src/core/sqlite-driver.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqlProvider } from '../../src/providers/sql/index.js';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import {
  HAS_CHROMIUM,
  launchBrowser,
  openExplorer,
  startExplorer,
  type BrowserHandle,
  type Explorer,
} from './harness.js';

const Database = loadSqliteDriver();

const MANY = 130;
let dir: string;
let root: string;
let explorer: Explorer;
/** A files root and a SQL database, all in one page of resources/list. */
let withSql: Explorer;
let browser: BrowserHandle;

beforeAll(async () => {
  if (!HAS_CHROMIUM) return;
  dir = makeTempDir('reservoir-explorer-layout-');
  root = join(dir, 'served');
  const files: Record<string, string> = { 'guides/intro.md': '# Intro\n' };
  for (let n = 0; n < MANY; n += 1)
    files[`many/m${String(n).padStart(3, '0')}.txt`] = `file ${n}\n`;
  writeTree(root, files);
  const path = join(dir, 'shop.db');
  const db = new Database(path);
  db.exec(
    'CREATE TABLE orders (id INTEGER PRIMARY KEY, total REAL); CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)',
  );
  db.close();
  explorer = await startExplorer({ root, pageSize: 50 });
  const small = join(dir, 'small');
  writeTree(small, { 'readme.md': '# Small\n' });
  withSql = await startExplorer({
    root: small,
    providers: [
      sqlProvider({ path, queries: { recent: { sql: 'SELECT id FROM orders ORDER BY id DESC' } } }),
    ],
  });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await explorer?.close();
  await withSql?.close();
  removeTree(dir);
});

describe.skipIf(!HAS_CHROMIUM)('page furniture', () => {
  it('shows no "Loading…" placeholder once the app has loaded', async () => {
    const { page, close } = await openExplorer(browser, explorer.origin);
    await page.waitForSelector('.tree-row');
    await page.locator('header.top').waitFor();
    expect(await page.getByText('Loading…', { exact: true }).count()).toBe(0);
    expect(await page.locator('#root > :not(.app)').count()).toBe(0);
    await close();
  });

  it('shows each SQL source as one root, its tables, queries and schema under it', async () => {
    const { page, close } = await openExplorer(browser, withSql.origin);
    await page.locator('.tree-row[data-uri="db://shop/queries/recent"]').waitFor();
    const roots = await page
      .locator('.tree-row[aria-level="1"]')
      .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-uri')));
    expect(roots.filter((uri) => uri?.startsWith('db:'))).toEqual(['db://shop/']);
    expect(roots).toHaveLength(2);
    expect(
      await page.locator('.tree-row[data-uri="db://shop/tables/"]').getAttribute('aria-level'),
    ).toBe('2');
    expect(
      await page
        .locator('.tree-row[data-uri="db://shop/queries/recent"]')
        .getAttribute('aria-level'),
    ).toBe('3');
    await close();
  });

  it("shows a flat list beside the tree, paged with the server's cursors, used by keyboard and remembered", async () => {
    const { page, close } = await openExplorer(browser, explorer.origin);
    await page.waitForSelector('.tree-row');
    const listButton = page.locator('.view-toggle button', { hasText: 'List' });
    await listButton.focus();
    await page.keyboard.press('Enter');
    expect(await listButton.getAttribute('aria-pressed')).toBe('true');
    expect(await page.locator('.tree').count()).toBe(0);
    const rows = page.locator('.list-view tbody tr');
    await rows.first().waitFor();
    // The first server page only (50 of 131): the list asks for more when told to.
    expect(await rows.count()).toBe(50);
    const intro = page.locator(`.list-view tr[data-uri="file://${root}/guides/intro.md"] td`);
    const cells = await intro.allTextContents();
    expect(cells[0]).toContain('intro.md');
    expect(cells[0]).toContain(`file://${root}/guides/intro.md`);
    expect(cells.slice(1, 3)).toEqual(['text/markdown', '8 B']);
    expect(cells[3]).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/);
    for (let shown = 50; shown < MANY + 1;) {
      await page.locator('.list-more:not([disabled])').click();
      await page.waitForFunction(
        (before) => document.querySelectorAll('.list-view tbody tr').length > before,
        shown,
      );
      shown = await rows.count();
    }
    expect(await rows.count()).toBe(MANY + 1);
    expect(await page.locator('.list-more').count()).toBe(0);
    expect(await page.locator('.list-view .count').textContent()).toBe(
      `${MANY + 1} of ${MANY + 1} loaded`,
    );
    // Tab reaches a name's button; Enter opens it.
    await page.locator(`.list-view tr[data-uri="file://${root}/many/m004.txt"] button`).focus();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.locator('.preview-head h2', { hasText: 'm005.txt' }).waitFor();
    expect(
      await page
        .locator(`.list-view tr[data-uri="file://${root}/many/m005.txt"]`)
        .getAttribute('class'),
    ).toBe('selected');
    // The choice outlives a reload, and going back to the tree is remembered too.
    await page.reload();
    await rows.first().waitFor();
    expect(await page.locator('.tree').count()).toBe(0);
    await page.locator('.view-toggle button', { hasText: 'Tree' }).click();
    await page.reload();
    await page.waitForSelector('.tree-row');
    expect(await page.locator('.list-view').count()).toBe(0);
    await close();
  });
});
