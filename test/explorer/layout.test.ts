// The explorer's page furniture in Debian's Chromium: the "Loading…" placeholder is gone once the
// app is up, a SQL source (whose templates reveal `db://NAME/tables/` besides the resources at
// `db://NAME/`) is one root of the tree, and the flat list view beside the tree pages through
// resources/list with the keyboard and is remembered across visits.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqlProvider } from '../../src/providers/sql/index.js';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { HAS_CHROMIUM, launchBrowser, openExplorer, startExplorer, type BrowserHandle, type Explorer } from './harness.js';

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
  for (let n = 0; n < MANY; n += 1) files[`many/m${String(n).padStart(3, '0')}.txt`] = `file ${n}\n`;
  writeTree(root, files);
  const path = join(dir, 'shop.db');
  const db = new Database(path);
  db.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY, total REAL); CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)');
  db.close();
  explorer = await startExplorer({ root, pageSize: 50 });
  const small = join(dir, 'small');
  writeTree(small, { 'readme.md': '# Small\n' });
  withSql = await startExplorer({ root: small, providers: [sqlProvider({ path, queries: { recent: { sql: 'SELECT id FROM orders ORDER BY id DESC' } } })] });
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
    const roots = await page.locator('.tree-row[aria-level="1"]').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-uri')));
    expect(roots.filter((uri) => uri?.startsWith('db:'))).toEqual(['db://shop/']);
    expect(roots).toHaveLength(2);
    expect(await page.locator('.tree-row[data-uri="db://shop/tables/"]').getAttribute('aria-level')).toBe('2');
    expect(await page.locator('.tree-row[data-uri="db://shop/queries/recent"]').getAttribute('aria-level')).toBe('3');
    await close();
  });
});
