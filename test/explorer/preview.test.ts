// Each preview kind in Chromium against a real server — Markdown rendered, code highlighted, JSON
// collapsible, CSV as a table (its rendition's), an image, binary as hex with a download, a directory as its listing,
// a 1 MB text file in parts with "load more" — and resource content that tries to run script (a
// <script>, an onerror image, javascript: links, a hostile SVG, HTML, markup in CSV cells, a hostile
// file name) never runs. Documents' own previews are in documents.test.ts.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);
const HOSTILE_NAME = '<img src=x onerror=window.pwned=1>.md';
const BIG_LINES = 100_000;

let dir: string;
let root: string;
let explorer: Explorer;
let browser: BrowserHandle;

beforeAll(async () => {
  if (!HAS_CHROMIUM) return;
  dir = makeTempDir('reservoir-explorer-');
  root = join(dir, 'served');
  let big = '';
  for (let n = 1; n <= BIG_LINES; n += 1) big += `line ${String(n).padStart(6, '0')}\n`;
  writeTree(root, {
    'kinds/guide.md': '# Guide title\n\nSome *emphasis* and a [link](https://example.org/).\n',
    'kinds/code.ts':
      'export const answer: number = 42;\nfunction twice(x: number) { return x * 2; }\n',
    'kinds/data.json': JSON.stringify({ name: 'reservoir', nested: { list: [1, 2, 3] } }),
    'kinds/people.csv': 'name,age\n"Ann, Jr.",31\nBob,42\n',
    'kinds/pixel.png': PNG,
    'kinds/blob.bin': Buffer.from([
      0xde, 0xad, 0xbe, 0xef, 0x00, 0x01, 0x02, 0xff, 0x10, 0x80, 0x90, 0xa0, 0xb0,
    ]),
    'kinds/big.log': big,
    'xss/attack.md': [
      '# Attack',
      '<script>window.pwned = "script"</script>',
      '<img src=x onerror="window.pwned = \'onerror\'">',
      "[markdown link](javascript:window.pwned='md-link')",
      '<a href="javascript:window.pwned=\'html-link\'" id="raw">raw link</a>',
      "<svg onload=\"window.pwned='inline-svg'\"><script>window.pwned='svg-script'</script></svg>",
      '<iframe src="javascript:window.pwned=\'iframe\'"></iframe>',
      '<p style="background:url(javascript:window.pwned=1)" onclick="window.pwned=\'click\'">click me</p>',
      '',
    ].join('\n'),
    'xss/hostile.svg':
      '<svg xmlns="http://www.w3.org/2000/svg" onload="window.pwned=\'svg-onload\'" width="10" height="10"><script>window.pwned=\'svg-script\';alert(1)</script><rect width="10" height="10" fill="red"/></svg>',
    'xss/page.html':
      '<!doctype html><script>window.pwned="html"; alert("html")</script><img src=x onerror=alert(2)>',
    'xss/values.json': JSON.stringify({
      html: '<img src=x onerror=alert(3)>',
      script: '<script>alert(4)</script>',
    }),
    'xss/cells.csv': 'a,b\n<script>alert(5)</script>,<img src=x onerror=alert(6)>\n',
    [`xss/${HOSTILE_NAME}`]: '# named\n',
  });
  explorer = await startExplorer({ root });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await explorer?.close();
  removeTree(dir);
});

const uriOf = (relative: string): string =>
  `file://${root}/${relative.split('/').map(encodeURIComponent).join('/')}`;

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

describe.skipIf(!HAS_CHROMIUM)('previews', () => {
  it('renders Markdown, with the metadata beside it', async () => {
    const { page, close } = await open('kinds/guide.md');
    await page.locator('.markdown h1', { hasText: 'Guide title' }).waitFor();
    expect(await page.locator('.markdown em').textContent()).toBe('emphasis');
    expect(await page.locator('.markdown a').getAttribute('rel')).toBe(
      'noopener noreferrer nofollow',
    );
    expect(await page.locator('.meta .uri').textContent()).toBe(uriOf('kinds/guide.md'));
    expect(await page.locator('.meta').textContent()).toContain('text/markdown');
    await close();
  });

  it('highlights code', async () => {
    const { page, close } = await open('kinds/code.ts');
    await page.locator('pre.code .hljs-keyword', { hasText: 'export' }).waitFor();
    expect(await page.locator('pre.code').textContent()).toContain('return x * 2;');
    await close();
  });

  it('pretty-prints JSON as a collapsible tree', async () => {
    const { page, close } = await open('kinds/data.json');
    const nested = page.locator('details.json details.json', { hasText: 'nested' }).first();
    await nested.waitFor();
    expect(await nested.getAttribute('open')).toBeNull();
    await nested.locator('> summary').click();
    expect(await nested.getAttribute('open')).not.toBeNull();
    expect(await page.locator('.json-string').first().textContent()).toBe('"reservoir"');
    await close();
  });

  it('shows CSV as a table, quoted fields kept whole', async () => {
    const { page, close } = await open('kinds/people.csv');
    await page.locator('table th', { hasText: 'name' }).waitFor();
    expect(await page.locator('table tbody tr').first().locator('td').allTextContents()).toEqual([
      'Ann, Jr.',
      '31',
    ]);
    await close();
  });

  it('shows an image', async () => {
    const { page, close } = await open('kinds/pixel.png');
    const image = page.locator('.image img');
    await image.waitFor();
    expect(await image.getAttribute('src')).toMatch(/^blob:/);
    await page.waitForFunction(
      () => (document.querySelector('.image img') as HTMLImageElement | null)?.naturalWidth === 1,
    );
    await close();
  });

  it('shows binary as its size, a hex dump of its head and a download', async () => {
    const { page, close } = await open('kinds/blob.bin');
    await page.locator('pre.hex').waitFor();
    expect(await page.locator('pre.hex').textContent()).toContain(
      '00000000  de ad be ef 00 01 02 ff 10 80 90 a0 b0',
    );
    expect(await page.locator('.binary').textContent()).toContain('13 B');
    expect(await page.locator('.binary a[download]').getAttribute('download')).toBe('blob.bin');
    await close();
  });

  it('shows a directory as its listing, each child opening its preview', async () => {
    const { page, close } = await openExplorer(browser, explorer.origin);
    await page.locator(`[data-uri="${uriOf('kinds')}/"]`).click();
    await page.focus('.tree');
    await page.keyboard.press('Enter');
    const child = page.locator('.listing button', { hasText: 'people.csv' });
    await child.waitFor();
    await child.click();
    await page.locator('table th', { hasText: 'age' }).waitFor();
    await close();
  });

  it('previews a 1 MB text file in parts, with "load more"', async () => {
    const { page, close } = await open('kinds/big.log');
    const text = page.locator('.preview pre.text');
    await text.waitFor();
    const first = (await text.textContent()) ?? '';
    expect(first.startsWith('line 000001\n')).toBe(true);
    expect(first.trimEnd().endsWith('line 002000')).toBe(true);
    await page.click('button.more');
    await page.waitForFunction(
      () =>
        document
          .querySelector('.preview pre.text')
          ?.textContent?.trimEnd()
          .endsWith('line 004000') === true,
    );
    expect(await page.locator('button.more').textContent()).toContain('from line 4001');
    await close();
  });
});

describe.skipIf(!HAS_CHROMIUM)('hostile content never runs', () => {
  it('renders Markdown holding <script>, an onerror image, javascript: links, inline SVG and an iframe without running any of it', async () => {
    const { page, dialogs, foreign, close } = await open('xss/attack.md');
    await page.locator('.markdown h1', { hasText: 'Attack' }).waitFor();
    const markdown = page.locator('.markdown');
    expect(await markdown.locator('script, svg, iframe, object, embed, form').count()).toBe(0);
    expect(await markdown.locator('[onerror], [onload], [onclick], [style]').count()).toBe(0);
    expect(await markdown.locator('a[href^="javascript"]').count()).toBe(0);
    // Clicking what is left of the links and the paragraph does nothing either.
    const links = await markdown.locator('a').count();
    for (let n = 0; n < links; n += 1) await markdown.locator('a').nth(n).click();
    await markdown.locator('p', { hasText: 'click me' }).click();
    expect(await pwned(page)).toBeUndefined();
    expect(dialogs).toEqual([]);
    expect(foreign).toEqual([]);
    await close();
  });

  it('shows a hostile SVG as an image, whose script and onload never run', async () => {
    const { page, dialogs, close } = await open('xss/hostile.svg');
    await page.locator('.image img').waitFor();
    await page.waitForFunction(
      () => (document.querySelector('.image img') as HTMLImageElement | null)?.complete === true,
    );
    expect(await page.locator('.preview svg script').count()).toBe(0);
    expect(await pwned(page)).toBeUndefined();
    expect(dialogs).toEqual([]);
    await close();
  });

  it('shows an HTML resource as its Markdown rendition, never as a page', async () => {
    const { page, dialogs, close } = await open('xss/page.html');
    await page.locator('.document button.download-original').waitFor();
    expect(await page.locator('.preview script, .preview iframe, .preview [onerror]').count()).toBe(
      0,
    );
    // The rendition's `![](x)` keeps its image element, with nothing to load.
    for (const image of await page.locator('.preview img').all())
      expect(await image.getAttribute('src')).toBeNull();
    expect(await pwned(page)).toBeUndefined();
    expect(dialogs).toEqual([]);
    await close();
  });

  it('shows markup inside JSON values, CSV cells and file names as text', async () => {
    for (const relative of ['xss/values.json', 'xss/cells.csv', `xss/${HOSTILE_NAME}`]) {
      const { page, dialogs, close } = await open(relative);
      expect(await page.locator('.preview img, .preview script, .tree img').count(), relative).toBe(
        0,
      );
      expect(await pwned(page)).toBeUndefined();
      expect(dialogs).toEqual([]);
      if (relative.endsWith('.csv'))
        expect(await page.locator('table td').first().textContent()).toBe(
          '<script>alert(5)</script>',
        );
      if (relative.endsWith('.json'))
        expect(await page.locator('.preview').textContent()).toContain(
          '<img src=x onerror=alert(3)>',
        );
      else if (relative.endsWith('.md'))
        expect(await page.locator('.tree-row .label', { hasText: HOSTILE_NAME }).count()).toBe(1);
      await close();
    }
  });
});
