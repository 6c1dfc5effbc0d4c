/**
 * Section — documents: PDF text recovered by Reservoir's renderer (pdf.js in the document worker,
 * src/documents/) beside Debian's `pdftotext` (poppler-utils), the ceiling, on a corpus generated
 * here (PDFs of 10 pages of varied words, headings and links; no LibreOffice needed):
 *   - word recall: of the words pdftotext finds (as a multiset, per document), the share Reservoir's
 *     Markdown also holds (target ≥ 0.9);
 *   - pages/s converting each document once (content differs, so the cache never answers), beside
 *     pdftotext's pages/s run one process per document (target ≥ 0.5×);
 *   - a cached rendition's p50/p99 (the same bytes again: hash + cache lookup).
 * Printed, never asserted. Skipped with its reason when pdftotext is not installed.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { printTable } from '../lib/stats.mjs';

const DOCS = Number(process.env.RESERVOIR_BENCH_PDF_DOCS ?? 20);
const PAGES = 10;
const VOCABULARY =
  'budget policy travel expense onboarding handbook quarterly review revenue forecast customer contract renewal vendor invoice payroll benefit security incident response backup recovery server network storage compliance audit training schedule meeting agenda minutes decision action owner deadline milestone release feature defect priority estimate velocity roadmap strategy market segment pricing discount margin growth retention churn survey feedback'.split(
    ' ',
  );

function random(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function pdfString(text) {
  return `(${text.replace(/\\/g, '\\\\').replace(/\(/g, '\\(').replace(/\)/g, '\\)')})`;
}

/** A PDF of `PAGES` pages: a heading, 40 lines of words (some numbers, some punctuation), a link. */
function makePdf(seed) {
  const next = random(seed);
  const word = () => VOCABULARY[Math.floor(next() * VOCABULARY.length)];
  const objects = ['', '', '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>'];
  const kids = [];
  for (let p = 0; p < PAGES; p += 1) {
    let stream = `BT /F1 20 Tf 72 750 Td ${pdfString(`Section ${seed}.${p + 1} ${word()} ${word()}`)} Tj ET\nBT /F1 10 Tf 72 720 Td 13 TL\n`;
    for (let l = 0; l < 40; l += 1) {
      const words = Array.from({ length: 10 }, () =>
        next() < 0.1 ? String(Math.floor(next() * 10000)) : word(),
      );
      stream += `${pdfString(`${words.join(' ')}.`)} Tj T*\n`;
    }
    stream += 'ET\n';
    objects.push(
      `<< /Length ${Buffer.byteLength(stream, 'latin1')} >>\nstream\n${stream}endstream`,
    );
    const content = objects.length;
    objects.push(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${content} 0 R >>`,
    );
    kids.push(objects.length);
  }
  objects[0] = '<< /Type /Catalog /Pages 2 0 R >>';
  objects[1] = `<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(' ')}] /Count ${kids.length} >>`;
  let out = '%PDF-1.4\n';
  const offsets = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out, 'latin1'));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const o of offsets) out += `${String(o).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

const words = (text) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

function recall(reference, candidate) {
  const have = new Map();
  for (const w of words(candidate)) have.set(w, (have.get(w) ?? 0) + 1);
  let found = 0;
  const wanted = words(reference);
  for (const w of wanted) {
    const n = have.get(w) ?? 0;
    if (n > 0) {
      found += 1;
      have.set(w, n - 1);
    }
  }
  return wanted.length === 0 ? 1 : found / wanted.length;
}

export async function documentsSection(ctx) {
  const { paths, progress } = ctx;
  try {
    execFileSync('pdftotext', ['-v'], { stdio: 'ignore' });
  } catch {
    console.log('\ndocuments: skipped — pdftotext (poppler-utils) is not installed');
    return;
  }
  const { DocumentRenderer } = await import(
    pathToFileURL(join(paths.repo, 'dist/documents/index.js')).href
  );
  const dir = mkdtempSync(join(tmpdir(), 'reservoir-bench-docs-'));
  const renderer = new DocumentRenderer({ limits: { ocr: false } });
  try {
    const corpus = Array.from({ length: DOCS }, (_, i) => makePdf(i + 1));
    corpus.forEach((bytes, i) => writeFileSync(join(dir, `${i}.pdf`), bytes));
    progress(`documents: ${DOCS} PDFs of ${PAGES} pages`);
    // Warm the worker (pdf.js loads once) on a document outside the corpus.
    await renderer.render(makePdf(9999), 'application/pdf', 'warm.pdf');
    const references = [];
    let started = process.hrtime.bigint();
    for (let i = 0; i < DOCS; i += 1)
      references.push(
        execFileSync('pdftotext', ['-q', join(dir, `${i}.pdf`), '-'], { encoding: 'utf8' }),
      );
    const popplerSeconds = Number(process.hrtime.bigint() - started) / 1e9;
    const ours = [];
    started = process.hrtime.bigint();
    for (let i = 0; i < DOCS; i += 1)
      ours.push((await renderer.render(corpus[i], 'application/pdf', `${i}.pdf`)).markdown);
    const oursSeconds = Number(process.hrtime.bigint() - started) / 1e9;
    const recalls = references.map((reference, i) => recall(reference, ours[i]));
    const meanRecall = recalls.reduce((a, b) => a + b, 0) / recalls.length;
    const pages = DOCS * PAGES;
    const hits = [];
    for (let r = 0; r < 200; r += 1) {
      const t = process.hrtime.bigint();
      await renderer.render(corpus[r % DOCS], 'application/pdf', 'again.pdf');
      hits.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    hits.sort((a, b) => a - b);
    const speed = popplerSeconds / oursSeconds;
    ctx.target?.(
      'documents: PDF word recall vs pdftotext ≥ 0.9',
      meanRecall.toFixed(3),
      meanRecall >= 0.9,
    );
    ctx.target?.('documents: PDF pages/s ≥ 0.5× pdftotext', `${speed.toFixed(2)}×`, speed >= 0.5);
    printTable(
      `documents — PDF text, ${DOCS} generated PDFs × ${PAGES} pages (targets: recall ≥ 0.9, pages/s ≥ 0.5× pdftotext)`,
      [
        'converter',
        'word recall',
        'min recall',
        'pages/s',
        'vs pdftotext',
        'cache hit p50',
        'cache hit p99',
      ],
      [
        [
          'pdftotext (ceiling)',
          '1.000',
          '1.000',
          (pages / popplerSeconds).toFixed(1),
          '1.00×',
          '—',
          '—',
        ],
        [
          'Reservoir (pdf.js, worker)',
          meanRecall.toFixed(3),
          Math.min(...recalls).toFixed(3),
          (pages / oursSeconds).toFixed(1),
          `${(popplerSeconds / oursSeconds).toFixed(2)}×`,
          `${hits[Math.floor(hits.length / 2)].toFixed(2)} ms`,
          `${hits[Math.floor(hits.length * 0.99)].toFixed(2)} ms`,
        ],
      ],
    );
  } finally {
    await renderer.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
