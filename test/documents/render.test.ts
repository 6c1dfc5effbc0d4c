// The document renderer: each format becomes Markdown with its headings, lists, tables, links and
// part markers; parts by page, sheet (and cell range) and slide; out-of-range parts name the valid
// range. Conversions run in the worker built into dist/ (ensureBuilt).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DocumentRenderer } from '../../src/documents/index.js';
import { ensureBuilt } from '../helpers/build.js';
import { makeDocx, makeEpub, makePdf, makePptx, makeXlsx } from '../helpers/documents.js';

let renderer: DocumentRenderer;

beforeAll(async () => {
  await ensureBuilt();
  renderer = new DocumentRenderer({ limits: { ocr: false } });
}, 180_000);
afterAll(() => renderer.close());

const pdf = makePdf([
  {
    heading: 'Handbook',
    lines: ['The onboarding guide explains vacation policy.'],
    link: 'https://example.com/policy',
  },
  { lines: ['Second page mentions quarterly budgets.'] },
  { lines: ['Third page lists the zebra protocol.'] },
]);

describe('PDF', () => {
  it('renders every page under a page marker, with headings and link targets', async () => {
    const r = await renderer.render(pdf, 'application/pdf', 'file:///d/a.pdf');
    expect(r.outline).toEqual({ pages: 3 });
    expect(r.markdown).toContain('<!-- page 1 -->');
    expect(r.markdown).toContain('### Handbook');
    expect(r.markdown).toContain('vacation policy');
    expect(r.markdown).toContain('https://example.com/policy');
    expect(r.markdown.indexOf('zebra')).toBeGreaterThan(r.markdown.indexOf('<!-- page 3 -->'));
    expect(r.markers.map((m) => m.label)).toEqual(['1', '2', '3']);
    expect(r.markdown.slice(r.markers[1]!.offset)).toMatch(/^<!-- page 2 -->/);
  });

  it('renders only the pages asked for', async () => {
    const r = await renderer.render(pdf, 'application/pdf', 'file:///d/a.pdf', {
      pages: { start: 2, end: 3 },
    });
    expect(r.markdown).not.toContain('vacation');
    expect(r.markdown).toContain('quarterly budgets');
    expect(r.markdown).toContain('zebra');
  });

  it('refuses a page range past the end, naming the valid range', async () => {
    await expect(
      renderer.render(pdf, 'application/pdf', 'file:///d/a.pdf', { pages: { start: 2, end: 9 } }),
    ).rejects.toMatchObject({
      code: 'invalid_argument',
      data: { argument: 'pages', valid: '1-3' },
    });
  });
});

describe('Word', () => {
  it('renders headings, paragraphs, bullets, tables and links', async () => {
    const docx = makeDocx([
      { heading: 'Specification' },
      { paragraph: 'The widget must be blue.' },
      { bullet: 'first point' },
      {
        table: [
          ['Name', 'Cost'],
          ['Widget', '12'],
        ],
      },
      { link: 'https://example.com/spec', text: 'the spec site' },
    ]);
    const r = await renderer.render(docx, undefined, 'file:///d/spec.docx');
    expect(r.kind).toBe('docx');
    expect(r.markdown).toContain('# Specification');
    expect(r.markdown).toContain('The widget must be blue.');
    expect(r.markdown).toMatch(/\* first point|- first point/);
    expect(r.markdown).toMatch(/\| Name\s*\| Cost\s*\|/);
    expect(r.markdown).toContain('[the spec site](https://example.com/spec)');
  });
});

describe('Excel', () => {
  it('renders each sheet as a table under a sheet marker, and one sheet or a block of it on request', async () => {
    const xlsx = await makeXlsx({
      Budget: [
        ['Item', 'Amount'],
        ['Rent', 1200],
        ['Food', 300],
      ],
      Notes: [['Remember the milk']],
    });
    const whole = await renderer.render(xlsx, undefined, 'file:///d/b.xlsx');
    expect(whole.outline.sheets).toEqual(['Budget', 'Notes']);
    expect(whole.markdown).toContain('<!-- sheet Budget -->');
    expect(whole.markdown).toMatch(/\| Item \| Amount \|/);
    expect(whole.markdown).toContain('| Rent | 1200 |');
    const one = await renderer.render(xlsx, undefined, 'file:///d/b.xlsx', { sheet: 'Notes' });
    expect(one.markdown).toContain('Remember the milk');
    expect(one.markdown).not.toContain('Rent');
    const block = await renderer.render(xlsx, undefined, 'file:///d/b.xlsx', {
      sheet: 'Budget',
      range: 'B2:B3',
    });
    expect(block.markdown).toContain('|  | B |');
    expect(block.markdown).toContain('| 2 | 1200 |');
    expect(block.markdown).not.toContain('Rent');
  });

  it('refuses an unknown sheet, naming the sheets there are', async () => {
    const xlsx = await makeXlsx({ Budget: [['a']] });
    await expect(
      renderer.render(xlsx, undefined, 'file:///d/b.xlsx', { sheet: 'Nope' }),
    ).rejects.toMatchObject({
      code: 'invalid_argument',
      data: { argument: 'sheet', valid: ['Budget'] },
    });
  });

  it('renders CSV as a table', async () => {
    const r = await renderer.render(
      Buffer.from('a,b\n"x, y","say ""hi"""\n'),
      'text/csv',
      'file:///d/c.csv',
    );
    expect(r.markdown).toContain('| x, y | say "hi" |');
  });
});

describe('PowerPoint', () => {
  const pptx = makePptx([
    { title: 'Quarterly review', bullets: ['Revenue up', 'Costs down'], notes: 'Speak slowly' },
    {
      title: 'Numbers',
      table: [
        ['Region', 'Sales'],
        ['North', '10'],
      ],
      link: { text: 'dashboard', url: 'https://example.com/d' },
    },
    { title: 'Thanks' },
  ]);

  it('renders slides in order with titles, bullets, tables, links and notes', async () => {
    const r = await renderer.render(pptx, undefined, 'file:///d/deck.pptx');
    expect(r.outline).toEqual({ slides: 3 });
    expect(r.markdown).toContain('## Slide 1: Quarterly review');
    expect(r.markdown).toContain('- Revenue up');
    expect(r.markdown).toContain('Speak slowly');
    expect(r.markdown).toContain('| North | 10 |');
    expect(r.markdown).toContain('[dashboard](https://example.com/d)');
  });

  it('renders a slide range and refuses one out of range', async () => {
    const r = await renderer.render(pptx, undefined, 'file:///d/deck.pptx', {
      slides: { start: 2, end: 2 },
    });
    expect(r.markdown).toContain('Numbers');
    expect(r.markdown).not.toContain('Quarterly');
    await expect(
      renderer.render(pptx, undefined, 'file:///d/deck.pptx', { slides: { start: 4 } }),
    ).rejects.toMatchObject({ code: 'invalid_argument', data: { valid: '1-3' } });
  });
});

describe('HTML and EPUB', () => {
  it('renders HTML without its scripts or styles, keeping links as written', async () => {
    const html =
      '<html><head><title>Page</title><style>p{}</style><script>alert(1)</script></head><body><h2>Intro</h2><ul><li>one</li></ul><a href="https://example.com/x">x link</a><img src="https://tracker.example/p.png" alt="pic"></body></html>';
    const r = await renderer.render(Buffer.from(html), 'text/html', 'file:///d/p.html');
    expect(r.markdown).toContain('## Intro');
    expect(r.markdown).toMatch(/\* one|- one/);
    expect(r.markdown).toContain('[x link](https://example.com/x)');
    expect(r.markdown).not.toContain('alert');
  });

  it('renders EPUB chapters in spine order under chapter markers', async () => {
    const epub = makeEpub('A Book', [
      { title: 'One', html: '<h1>Chapter one</h1><p>It was a dark night.</p>' },
      { title: 'Two', html: '<h1>Chapter two</h1><p>Morning came.</p>' },
    ]);
    const r = await renderer.render(epub, 'application/epub+zip', 'file:///d/b.epub');
    expect(r.outline).toEqual({ chapters: 2 });
    expect(r.markdown).toContain('# A Book');
    expect(r.markdown.indexOf('Morning came')).toBeGreaterThan(
      r.markdown.indexOf('<!-- chapter 2 -->'),
    );
  });
});
