// Documents in Chromium against a real server: a PDF, a workbook and a deck preview as their
// Markdown rendition with a navigator of their pages, sheets or slides (going to one reads that part
// alone), "Download original" saves the original byte for byte, a document that cannot be rendered
// shows the server's message, and an HTML document full of script and handlers runs nothing.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePdf, makePptx, makeXlsx } from '../helpers/documents.js';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import {
  HAS_CHROMIUM,
  launchBrowser,
  openExplorer,
  pwned,
  startExplorer,
  type BrowserHandle,
  type Explorer,
  type WatchedPage,
} from './harness.js';

let dir: string;
let root: string;
let explorer: Explorer;
let browser: BrowserHandle;
let pdf: Buffer;

/**
 * A PDF writer's customary binary comment line. Without a non-UTF-8 byte the served file is sniffed
 * as text/plain (a PDF made only of ASCII is valid text) and not rendered; real PDFs carry one.
 */
const BINARY_COMMENT = Buffer.from([0x25, 0xe2, 0xe3, 0xcf, 0xd3, 0x0a]);

beforeAll(async () => {
  if (!HAS_CHROMIUM) return;
  dir = makeTempDir('reservoir-explorer-documents-');
  root = join(dir, 'served');
  pdf = Buffer.concat([
    makePdf([
      { heading: 'Opening', lines: ['alpha words on the first page'] },
      { heading: 'Middle', lines: ['bravo words on the second page'] },
      { heading: 'Closing', lines: ['charlie words on the third page'] },
    ]),
    BINARY_COMMENT,
  ]);
  writeTree(root, {
    'docs/report.pdf': pdf,
    'docs/budget.xlsx': await makeXlsx({
      Budget: [
        ['Item', 'Cost'],
        ['Paper', 12],
      ],
      Staff: [
        ['Name', 'Role'],
        ['Ann', 'Editor'],
      ],
    }),
    'docs/deck.pptx': makePptx([
      { title: 'Welcome', bullets: ['first slide point'] },
      { title: 'Plan', bullets: ['second slide point'] },
    ]),
    'docs/broken.pdf': Buffer.concat([
      Buffer.from('%PDF-1.4\n'),
      BINARY_COMMENT,
      Buffer.from('this is no PDF at all\n'),
    ]),
    'docs/attack.html': [
      '<!doctype html><html><head><title>Attack</title>',
      '<script>window.pwned = "script"; alert("script")</script></head><body>',
      '<h1>Attack heading</h1>',
      '<p>Visible paragraph text.</p>',
      "<img src=x onerror=\"window.pwned = 'onerror'; alert('onerror')\">",
      '<a href="javascript:window.pwned=\'link\'">a link</a>',
      "<svg onload=\"window.pwned='svg'\"><script>window.pwned='svg-script'</script></svg>",
      '<p onclick="window.pwned=\'click\'">click me</p>',
      '</body></html>',
    ].join('\n'),
  });
  explorer = await startExplorer({ root });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await explorer?.close();
  if (dir !== undefined) removeTree(dir);
});

async function open(relative: string): Promise<WatchedPage> {
  const watched = await openExplorer(browser, explorer.origin);
  const label = relative.split('/').pop()!;
  await watched.page
    .locator('.tree-row', { has: watched.page.locator('.label', { hasText: label }) })
    .first()
    .click();
  await watched.page.locator('.preview[aria-busy="false"]').waitFor();
  return watched;
}

describe.skipIf(!HAS_CHROMIUM)('document previews', () => {
  it('shows a PDF as its rendition, and going to page 2 shows page 2 alone', async () => {
    const { page, close } = await open('docs/report.pdf');
    const document = page.locator('.document');
    await document.locator('.markdown', { hasText: 'alpha words on the first page' }).waitFor();
    expect(await document.textContent()).toContain('charlie words on the third page');
    const parts = page.locator('nav.document-parts button');
    expect(await parts.allTextContents()).toEqual(['All', 'Page 1', 'Page 2', 'Page 3']);
    await parts.filter({ hasText: 'Page 2' }).click();
    // The whole rendition shows every part (Page 2 among them): the chosen part alone is shown
    // once the others are gone.
    await page.locator('.document-part[aria-label="Page 1"]').waitFor({ state: 'detached' });
    await page.locator('.document-part[aria-label="Page 2"]').waitFor();
    await page.locator('.document[aria-busy="false"]').waitFor();
    const shown = await page.locator('.document-part').allTextContents();
    expect(shown).toHaveLength(1);
    expect(shown[0]).toContain('bravo words on the second page');
    expect(shown[0]).not.toContain('alpha');
    expect(await parts.filter({ hasText: 'Page 2' }).getAttribute('aria-pressed')).toBe('true');
    await parts.filter({ hasText: 'All' }).click();
    await page.locator('.document-part[aria-label="Page 3"]').waitFor();
    await close();
  });

  it('saves the original PDF byte for byte from "Download original"', async () => {
    const { page, close } = await open('docs/report.pdf');
    const button = page.locator('button.download-original');
    await button.waitFor();
    const [download] = await Promise.all([
      page.waitForEvent('download', { timeout: 30_000 }),
      button.click(),
    ]);
    expect(download.suggestedFilename()).toBe('report.pdf');
    const saved = readFileSync(await download.path());
    expect(saved.equals(pdf)).toBe(true);
    await close();
  });

  it('lists a workbook by its sheets and shows one sheet alone', async () => {
    const { page, close } = await open('docs/budget.xlsx');
    await page.locator('.document table th', { hasText: 'Item' }).first().waitFor();
    const parts = page.locator('nav.document-parts button');
    expect(await parts.allTextContents()).toEqual(['All', 'Sheet Budget', 'Sheet Staff']);
    await parts.filter({ hasText: 'Sheet Staff' }).click();
    await page.locator('.document-part[aria-label="Sheet Budget"]').waitFor({ state: 'detached' });
    await page.locator('.document-part[aria-label="Sheet Staff"]', { hasText: 'Editor' }).waitFor();
    await page.locator('.document[aria-busy="false"]').waitFor();
    const shown = await page.locator('.document-part').allTextContents();
    expect(shown).toHaveLength(1);
    expect(shown[0]).toContain('Editor');
    expect(shown[0]).not.toContain('Paper');
    await close();
  });

  it('lists a deck by its slides and shows one slide alone', async () => {
    const { page, close } = await open('docs/deck.pptx');
    await page.locator('.document', { hasText: 'first slide point' }).waitFor();
    const parts = page.locator('nav.document-parts button');
    expect(await parts.allTextContents()).toEqual(['All', 'Slide 1', 'Slide 2']);
    await parts.filter({ hasText: 'Slide 2' }).click();
    // The whole deck shows every slide (Slide 2 among them, with its text), and aria-busy may still
    // read "false" from before the click: wait for the other slide to go, then for this one's text.
    await page.locator('.document-part[aria-label="Slide 1"]').waitFor({ state: 'detached' });
    await page
      .locator('.document-part[aria-label="Slide 2"]', { hasText: 'second slide point' })
      .waitFor();
    await page.locator('.document[aria-busy="false"]').waitFor();
    const shown = await page.locator('.document-part').allTextContents();
    expect(shown).toHaveLength(1);
    expect(shown[0]).toContain('second slide point');
    await close();
  });

  it("shows the server's message for a document that cannot be rendered", async () => {
    const { page, close } = await open('docs/broken.pdf');
    const alert = page.locator('.preview .error[role="alert"]');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/pdf/i);
    await close();
  });

  it('shows an HTML document as its rendition and runs none of its script or handlers', async () => {
    const { page, dialogs, foreign, close } = await open('docs/attack.html');
    await page.locator('.document', { hasText: 'Visible paragraph text.' }).waitFor();
    expect(await page.locator('.document script').count()).toBe(0);
    expect(
      await page.locator('.document [onerror], .document [onclick], .document svg').count(),
    ).toBe(0);
    for (const link of await page.locator('.document a').all())
      expect((await link.getAttribute('href')) ?? '').not.toMatch(/javascript:/i);
    const click = page.locator('.document p', { hasText: 'click me' });
    if ((await click.count()) > 0) await click.first().click();
    expect(await pwned(page)).toBeUndefined();
    expect(dialogs).toEqual([]);
    expect(foreign).toEqual([]);
    await close();
  });
});
