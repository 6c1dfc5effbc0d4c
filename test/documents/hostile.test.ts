// Hostile documents cannot hurt: zip bombs (honest and lying headers), entity declarations, PDF
// page-tree loops, password-protected PDFs, garbage, conversions past the time or memory limit —
// each is a clear error, and the same renderer goes on converting good documents afterwards.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DocumentRenderer } from '../../src/documents/index.js';
import { ensureBuilt } from '../helpers/build.js';
import { makeEntityBombDocx, makePdf, makeZipBomb } from '../helpers/documents.js';

let renderer: DocumentRenderer;
const good = makePdf([{ lines: ['still serving after the attack'] }]);

beforeAll(async () => {
  await ensureBuilt();
  renderer = new DocumentRenderer({ limits: { ocr: false, maxInflatedBytes: 32 * 1024 * 1024 } });
}, 180_000);
afterAll(() => renderer.close());

async function stillServes(): Promise<void> {
  const r = await renderer.render(good, 'application/pdf', 'file:///d/good.pdf');
  expect(r.markdown).toContain('still serving after the attack');
}

describe('hostile documents', () => {
  it('refuses a zip bomb whose headers declare its size, before inflating it', async () => {
    const bomb = makeZipBomb('word/document.xml', 40 * 1024 * 1024);
    await expect(renderer.render(bomb, undefined, 'file:///d/bomb.docx')).rejects.toMatchObject({
      code: 'too_large',
      message: expect.stringContaining('zip bomb'),
    });
    await stillServes();
  });

  it('stops a zip bomb whose headers lie about its size once it inflates past the cap', async () => {
    const bomb = makeZipBomb('xl/workbook.xml', 40 * 1024 * 1024, { lie: true });
    await expect(renderer.render(bomb, undefined, 'file:///d/bomb.xlsx')).rejects.toMatchObject({
      code: 'too_large',
      message: expect.stringContaining('inflates past the limit'),
    });
    await stillServes();
  });

  it('never expands XML entities: a document declaring them is an invalid document', async () => {
    await expect(
      renderer.render(makeEntityBombDocx(), undefined, 'file:///d/lol.docx'),
    ).rejects.toMatchObject({
      code: 'invalid_document',
      message: expect.stringContaining('entities'),
    });
  });

  it('answers a password-protected PDF as unsupported', async () => {
    const locked = makePdf([{ lines: ['secret'] }], { encrypt: true });
    await expect(
      renderer.render(locked, 'application/pdf', 'file:///d/locked.pdf'),
    ).rejects.toMatchObject({
      code: 'unsupported',
      message: expect.stringContaining('password'),
    });
  });

  it('answers a PDF whose page tree loops on itself with an error, not a hang', async () => {
    const loop = makePdf([{ lines: ['x'] }], { loop: true });
    await expect(
      renderer.render(loop, 'application/pdf', 'file:///d/loop.pdf'),
    ).rejects.toMatchObject({
      code: expect.stringMatching(/^(invalid_document|too_large)$/),
    });
    await stillServes();
  });

  it('answers bytes that are not the document they claim to be as an invalid document', async () => {
    for (const [mime, uri] of [
      ['application/pdf', 'file:///d/x.pdf'],
      [undefined, 'file:///d/x.docx'],
      [undefined, 'file:///d/x.pptx'],
      ['application/epub+zip', 'file:///d/x.epub'],
    ] as const)
      await expect(
        renderer.render(Buffer.from('not a document at all'), mime, uri),
      ).rejects.toMatchObject({
        code: 'invalid_document',
      });
    await stillServes();
  });

  it('kills a conversion past its time limit and serves the next one with a fresh worker', async () => {
    const slow = new DocumentRenderer({ limits: { ocr: false, timeoutMs: 1 } });
    try {
      await expect(
        slow.render(good, 'application/pdf', 'file:///d/slow.pdf'),
      ).rejects.toMatchObject({
        code: 'too_large',
        data: { measure: 'conversion time (ms)' },
      });
      expect(slow.workersStarted).toBe(1);
    } finally {
      await slow.close();
    }
  });

  it('kills a conversion past its memory limit and the renderer keeps serving', async () => {
    const small = new DocumentRenderer({
      limits: { ocr: false, maxHeapMb: 16, maxOutputChars: 1 << 30, timeoutMs: 120_000 },
    });
    try {
      // 400k rows of CSV: the table string outgrows a 16 MiB heap.
      const rows = Array.from(
        { length: 400_000 },
        (_, i) => `${i},some text in a cell,${i * 2}`,
      ).join('\n');
      await expect(
        small.render(Buffer.from(rows), 'text/csv', 'file:///d/big.csv'),
      ).rejects.toMatchObject({
        code: 'too_large',
        data: { measure: 'conversion memory' },
      });
      const after = await small.render(
        Buffer.from('a,b\n1,2\n'),
        'text/csv',
        'file:///d/small.csv',
      );
      expect(after.markdown).toContain('| 1 | 2 |');
      expect(small.workersStarted).toBe(2);
    } finally {
      await small.close();
    }
  });

  it('refuses a rendition over the output limit, saying how to read a part instead', async () => {
    const tight = new DocumentRenderer({ limits: { ocr: false, maxOutputChars: 200 } });
    try {
      const pdf = makePdf(
        Array.from({ length: 5 }, (_, i) => ({
          lines: [`page ${i} has a good deal of text on it, more than fits`],
        })),
      );
      await expect(
        tight.render(pdf, 'application/pdf', 'file:///d/long.pdf'),
      ).rejects.toMatchObject({
        code: 'too_large',
        message: expect.stringContaining('?pages='),
      });
    } finally {
      await tight.close();
    }
  });
});
