// OCR where Debian's tesseract is installed: an image read as Markdown carries the text it shows,
// and a scanned PDF page (an image, no text layer) gets its text through pdftoppm + tesseract.
// Without them the rendition says that no text layer was found. The fixtures are rendered here:
// a text PDF turned into a grayscale image by pdftoppm, then embedded in an image-only PDF.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DocumentRenderer } from '../../src/documents/index.js';
import { onPath } from '../../src/documents/ocr.js';
import { ensureBuilt } from '../helpers/build.js';
import { makePdf } from '../helpers/documents.js';

const tools = onPath('tesseract') && onPath('pdftoppm');
const why =
  'tesseract (tesseract-ocr) and pdftoppm (poppler-utils) are needed for OCR; .ci/run installs them';

/** A grayscale PGM of a text PDF's first page, and its pixels' size. */
function renderPage(dir: string): { png: Buffer; gray: Buffer; width: number; height: number } {
  const pdf = join(dir, 'text.pdf');
  writeFileSync(
    pdf,
    makePdf([{ heading: 'Invoice Number 4711', lines: ['Payment due within thirty days'] }]),
  );
  execFileSync('pdftoppm', ['-r', '100', '-gray', '-png', '-singlefile', pdf, join(dir, 'page')]);
  execFileSync('pdftoppm', ['-r', '100', '-gray', '-singlefile', pdf, join(dir, 'page')]);
  const pgm = readFileSync(join(dir, 'page.pgm'));
  const header = /^P5\s+(\d+)\s+(\d+)\s+255\s/.exec(pgm.subarray(0, 64).toString('latin1'))!;
  return {
    png: readFileSync(join(dir, 'page.png')),
    gray: pgm.subarray(header[0].length),
    width: Number(header[1]),
    height: Number(header[2]),
  };
}

/** A one-page PDF that is nothing but an image (a scan): no text layer. */
function scannedPdf(gray: Buffer, width: number, height: number): Buffer {
  const data = deflateSync(gray);
  const content = `q 612 0 0 792 0 0 cm /Im0 Do Q`;
  const parts: (string | Buffer)[] = [];
  const offsets: number[] = [];
  let length = 0;
  const push = (chunk: string | Buffer): void => {
    parts.push(chunk);
    length += typeof chunk === 'string' ? Buffer.byteLength(chunk, 'latin1') : chunk.length;
  };
  push('%PDF-1.4\n');
  const object = (n: number, body: string, stream?: Buffer): void => {
    offsets[n] = length;
    if (stream === undefined) push(`${n} 0 obj\n${body}\nendobj\n`);
    else {
      push(`${n} 0 obj\n${body}\nstream\n`);
      push(stream);
      push('\nendstream\nendobj\n');
    }
  };
  object(1, '<< /Type /Catalog /Pages 2 0 R >>');
  object(2, '<< /Type /Pages /Kids [3 0 R] /Count 1 >>');
  object(
    3,
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /Im0 4 0 R >> >> /Contents 5 0 R >>',
  );
  object(
    4,
    `<< /Type /XObject /Subtype /Image /Width ${width} /Height ${height} /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode /Length ${data.length} >>`,
    data,
  );
  object(5, `<< /Length ${content.length} >>`, Buffer.from(content, 'latin1'));
  const xref = length;
  push(`xref\n0 6\n0000000000 65535 f \n`);
  for (let n = 1; n <= 5; n += 1) push(`${String(offsets[n]).padStart(10, '0')} 00000 n \n`);
  push(`trailer\n<< /Size 6 /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`);
  return Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : p)));
}

describe('OCR', () => {
  let dir: string;
  let renderer: DocumentRenderer;

  beforeAll(async () => {
    await ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'reservoir-ocr-test-'));
    renderer = new DocumentRenderer({ limits: { timeoutMs: 120_000 } });
  }, 180_000);
  afterAll(async () => {
    await renderer?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.skipIf(!tools)(
    `reads the text an image shows (${tools ? 'tesseract found' : why})`,
    async () => {
      const { png } = renderPage(dir);
      const r = await renderer.render(png, 'image/png', 'file:///d/scan.png');
      expect(r.markdown).toContain('text recognised by OCR');
      expect(r.markdown).toMatch(/Invoice\s+Number\s+4711/);
    },
  );

  it.skipIf(!tools)(
    `reads a scanned PDF page through pdftoppm and tesseract (${tools ? 'found' : why})`,
    async () => {
      const { gray, width, height } = renderPage(dir);
      const r = await renderer.render(
        scannedPdf(gray, width, height),
        'application/pdf',
        'file:///d/scan.pdf',
      );
      expect(r.markdown).toContain('<!-- page 1 -->');
      expect(r.markdown).toMatch(/Payment\s+due\s+within\s+thirty\s+days/);
    },
  );

  it('says no text layer was found when OCR is off', async () => {
    const off = new DocumentRenderer({ limits: { ocr: false } });
    try {
      const empty = makePdf([{}]);
      const r = await off.render(empty, 'application/pdf', 'file:///d/blank.pdf');
      expect(r.markdown).toContain('no text layer was found on this page');
      const image = await off.render(
        Buffer.from([0x89, 0x50, 0x4e, 0x47]),
        'image/png',
        'file:///d/i.png',
      );
      expect(image.markdown).toContain('no text layer was found');
    } finally {
      await off.close();
    }
  });
});
