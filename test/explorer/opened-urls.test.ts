// Nothing a preview exposes runs script when opened on its own. Each active type — SVG (a <script>
// and onload), HTML, XHTML, XML carrying an XSLT stylesheet that writes a <script>, a PDF with a
// JavaScript OpenAction, a "PNG" holding SVG, an "SVG" holding HTML; as text and, for bytes that are
// not UTF-8, as a blob — is previewed in Chromium; every URL the preview holds (img src, links,
// download links, any src/href/data) is opened in a new tab of the same browser context, as "open
// image in new tab" or a middle-click would, and must either download or open as a raster picture,
// with no payload run. A control gives each payload a blob: document of its own type in the
// explorer's origin (what the explorer used to make for SVG) and the same detector must catch it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import {
  HAS_CHROMIUM,
  launchBrowser,
  newTab,
  openExplorer,
  pwned,
  startExplorer,
  type BrowserHandle,
  type Explorer,
  type WatchedPage,
} from './harness.js';

/** What every payload does when it runs: a console line, a dialog, and a mark in the origin's storage. */
const run = (kind: string): string =>
  `console.log('PWNED ${kind}');localStorage.setItem('pwned:${kind}','ran');alert('PWNED ${kind}')`;

const LATIN1 = Buffer.from([0xe9]);
const latin1 = (text: string): Buffer => {
  const [head, tail] = text.split('@@');
  return Buffer.concat([Buffer.from(head!, 'latin1'), LATIN1, Buffer.from(tail!, 'latin1')]);
};
const svg = (kind: string, prolog = ''): string =>
  `${prolog}<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10" onload="${run(`${kind}-onload`)}"><!-- @@ --><script>${run(`${kind}-script`)}</script><rect width="10" height="10" fill="red"/></svg>`;
const html = (kind: string): string =>
  `<!doctype html><meta charset="windows-1252"><!-- @@ --><p>page<script>${run(kind)}</script><img src=x onerror="${run(`${kind}-onerror`)}">`;
const xhtml = (kind: string, prolog: string): string =>
  `${prolog}<html xmlns="http://www.w3.org/1999/xhtml"><head><title>x</title></head><body><!-- @@ --><script>${run(kind)}</script></body></html>`;
const styledXml = (kind: string, prolog: string): string =>
  `${prolog}<?xml-stylesheet type="text/xsl" href="#style"?><!DOCTYPE root [<!ATTLIST xsl:stylesheet id ID #REQUIRED>]><root><!-- @@ -->` +
  `<xsl:stylesheet id="style" version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform"><xsl:template match="/">` +
  `<html><body><script>${run(kind)}</script></body></html></xsl:template></xsl:stylesheet></root>`;
const PDF = Buffer.from(
  [
    '%PDF-1.4',
    `1 0 obj <</Type/Catalog/Pages 2 0 R/OpenAction 3 0 R>> endobj`,
    '2 0 obj <</Type/Pages/Kids[]/Count 0>> endobj',
    `3 0 obj <</S/JavaScript/JS(app.alert('PWNED pdf'))>> endobj`,
    'trailer <</Root 1 0 R>>',
    '%%EOF',
    '',
  ].join('\n'),
  'latin1',
);
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);
const LATIN1_XML = '<?xml version="1.0" encoding="ISO-8859-1"?>';

interface Case {
  file: string;
  bytes: Buffer;
  /**
   * How the preview shows it: highlighted source, a picture, binary with a download, or a document's
   * rendition (which holds no URL until "Download original" saves the original).
   */
  view: 'source' | 'picture' | 'binary' | 'document';
  /** The type that would run the payload, for the control (none: a harmless picture). */
  active?: string;
}

const utf8 = (text: string): Buffer => Buffer.from(text.replace('@@', ''), 'utf8');
const CASES: Case[] = [
  { file: 'hostile.svg', bytes: utf8(svg('svg')), view: 'picture', active: 'image/svg+xml' },
  // Chromium decodes an SVG picture as UTF-8 only: this one is not shown as a picture, but as binary.
  {
    file: 'hostile-latin1.svg',
    bytes: latin1(svg('svg-latin1', LATIN1_XML)),
    view: 'binary',
    active: 'image/svg+xml',
  },
  {
    // Text under an image's name is served as the text it is (content sniffing), shown as source.
    file: 'disguised.png',
    bytes: utf8(svg('svg-as-png')),
    view: 'source',
    active: 'image/svg+xml',
  },
  { file: 'page-as.svg', bytes: utf8(html('html-as-svg')), view: 'binary', active: 'text/html' },
  { file: 'page.html', bytes: utf8(html('html')), view: 'document', active: 'text/html' },
  {
    file: 'page-latin1.html',
    bytes: latin1(html('html-latin1')),
    view: 'document',
    active: 'text/html',
  },
  {
    file: 'page.xhtml',
    bytes: utf8(xhtml('xhtml', '')),
    view: 'document',
    active: 'application/xhtml+xml',
  },
  {
    file: 'page-latin1.xhtml',
    bytes: latin1(xhtml('xhtml-latin1', LATIN1_XML)),
    view: 'document',
    active: 'application/xhtml+xml',
  },
  {
    file: 'styled.xml',
    bytes: utf8(styledXml('xslt', '<?xml version="1.0"?>')),
    view: 'source',
    active: 'text/xml',
  },
  {
    file: 'styled-latin1.xml',
    bytes: latin1(styledXml('xslt-latin1', LATIN1_XML)),
    view: 'binary',
    active: 'application/xml',
  },
  { file: 'scripted.pdf', bytes: PDF, view: 'document', active: 'application/pdf' },
  { file: 'pixel.png', bytes: PNG, view: 'picture' },
];

/** The document types a tab may show: pictures, which run nothing. */
const RASTER = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
  'image/bmp',
  'image/x-icon',
]);

let dir: string;
let explorer: Explorer;
let browser: BrowserHandle;

beforeAll(async () => {
  if (!HAS_CHROMIUM) return;
  dir = makeTempDir('reservoir-explorer-opened-');
  writeTree(
    join(dir, 'served'),
    Object.fromEntries(CASES.map(({ file, bytes }) => [`active/${file}`, bytes])),
  );
  explorer = await startExplorer({ root: join(dir, 'served') });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await explorer?.close();
  if (dir !== undefined) removeTree(dir);
});

interface Opened {
  /** Evidence of a script run: console lines, dialogs, marks in the origin's storage. */
  ran: string[];
  /** The type of the document the tab shows, when it shows one. */
  documentType?: string;
  /** The bytes saved, when opening the URL downloaded it. */
  downloaded?: Buffer;
}

/** Opens `url` in a new tab of the explorer's browser context and reports what happened there. */
async function openInTab(url: string): Promise<Opened> {
  const tab = await newTab(browser);
  const ran: string[] = [];
  tab.on('console', (message) => {
    if (message.text().includes('PWNED')) ran.push(`console: ${message.text()}`);
  });
  tab.on('dialog', (dialog) => {
    ran.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  const download = tab.waitForEvent('download', { timeout: 10_000 });
  download.catch(() => undefined);
  const opened: Opened = { ran };
  try {
    await tab.goto(url, { waitUntil: 'load' });
    opened.documentType = await tab.evaluate(() => document.contentType);
    // Same document, same renderer: a mark written by a payload is visible here at once.
    const marks = await tab.evaluate(() => {
      try {
        return Object.keys(localStorage).filter((key) => key.startsWith('pwned:'));
      } catch {
        return [];
      }
    });
    ran.push(...marks.map((key) => `storage: ${key}`));
  } catch (failure) {
    if (!String(failure).includes('Download is starting')) throw failure;
    opened.downloaded = readFileSync(await (await download).path());
  }
  await tab.close();
  return opened;
}

/** Whether an opened URL was dangerous: a payload ran, or it opened as a document that can run script. */
const dangerous = (opened: Opened): boolean =>
  opened.ran.length > 0 || (opened.documentType !== undefined && !RASTER.has(opened.documentType));

async function preview(file: string): Promise<WatchedPage> {
  const watched = await openExplorer(browser, explorer.origin);
  await watched.page
    .locator('.tree-row', { has: watched.page.locator('.label', { hasText: file }) })
    .first()
    .click();
  await watched.page.locator('.preview[aria-busy="false"]').waitFor();
  return watched;
}

/** Every URL anything in the preview names, resolved. */
function exposedUrls(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const urls: string[] = [];
    document.querySelectorAll('.preview, .preview *').forEach((element) => {
      for (const attribute of Array.from(element.attributes)) {
        if (
          /^(?:src|href|data|poster|srcset|action|formaction|xlink:href|background|ping)$/i.test(
            attribute.name,
          )
        )
          urls.push(new URL(attribute.value, document.baseURI).href);
      }
    });
    return urls;
  });
}

/** A blob: URL made in the explorer's page, as it made them for SVG before. */
function blobInOrigin(page: Page, bytes: Buffer, type: string): Promise<string> {
  return page.evaluate(
    ([base64, blobType]) =>
      URL.createObjectURL(
        new Blob([Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))], { type: blobType }),
      ),
    [bytes.toString('base64'), type] as const,
  );
}

describe.skipIf(!HAS_CHROMIUM)('URLs a preview exposes, opened in a new tab', () => {
  it('control: each payload as a document of its own type in the explorer origin is caught by the detector', async () => {
    const { page, close } = await openExplorer(browser, explorer.origin);
    for (const { file, bytes, active } of CASES) {
      if (active === undefined) continue;
      const opened = await openInTab(await blobInOrigin(page, bytes, active));
      expect(dangerous(opened), `${file} as ${active}: ${JSON.stringify(opened)}`).toBe(true);
      if (active === 'application/pdf') expect(opened.documentType).toBe('application/pdf');
      else
        expect(
          opened.ran.filter((line) => line.startsWith('console:')).length,
          file,
        ).toBeGreaterThan(0);
    }
    await page.evaluate(() => localStorage.clear());
    await close();
  }, 180_000);

  for (const { file, bytes, view } of CASES) {
    it(`${file}: shown as ${view}, and every URL it exposes downloads or opens as a picture, running nothing`, async () => {
      const { page, dialogs, close } = await preview(file);
      if (view === 'source')
        // Highlighted source, or plain text for text under another type's name.
        await page
          .locator('.preview pre.code, .preview pre.text', { hasText: 'PWNED' })
          .first()
          .waitFor();
      if (view === 'binary') await page.locator('.binary a[download]').waitFor();
      if (view === 'picture') {
        await page.locator('.image a[download]').waitFor();
        await page.waitForFunction(() => {
          const image = document.querySelector<HTMLImageElement>('.image img');
          return image !== null && image.complete && image.naturalWidth > 0;
        });
      }
      if (view === 'document') {
        const button = page.locator('.document button.download-original');
        await button.waitFor();
        const [download] = await Promise.all([page.waitForEvent('download'), button.click()]);
        const saved = readFileSync(await download.path());
        expect(saved.equals(bytes), 'the original is saved byte for byte').toBe(true);
      }
      const urls = await exposedUrls(page);
      expect(urls.length, urls.join(' ')).toBe(
        { source: 0, binary: 1, picture: 2, document: 0 }[view],
      );
      for (const url of urls) {
        const opened = await openInTab(url);
        expect(
          dangerous(opened),
          `${url}: ${JSON.stringify({ ...opened, downloaded: opened.downloaded?.length })}`,
        ).toBe(false);
        if (opened.downloaded !== undefined)
          expect(
            opened.downloaded.equals(bytes),
            'a download saves the resource byte for byte',
          ).toBe(true);
        else expect(await page.locator('.image img').getAttribute('src')).toBe(url);
      }
      expect(await pwned(page)).toBeUndefined();
      expect(dialogs).toEqual([]);
      await close();
    }, 60_000);
  }
});
