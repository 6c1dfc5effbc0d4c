/**
 * The mixed document corpus of the documents bench: PDFs (2–40 pages of text), Word files,
 * spreadsheets, HTML pages and CSV tables of pseudo-random words, each different (so no two share a
 * rendition), sizes from a few KB to ~1 MB (a few large PDFs and CSVs), all under 10 MB. Built once
 * under the folder given (kept between runs: `.complete` marks a finished corpus). PPTX and EPUB
 * are not in it (their generators live in the test helpers, in TypeScript).
 */
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { zipSync } from 'fflate';

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

const esc = (t) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const pdfString = (t) =>
  `(${t.replace(/\\/g, '\\\\').replace(/\(/g, '\\(').replace(/\)/g, '\\)')})`;

/** A PDF of `pages` pages: a heading and `lines` lines of ten words each, per page. */
export function textPdf(seed, pages, lines = 40) {
  const next = random(seed);
  const word = () => VOCABULARY[Math.floor(next() * VOCABULARY.length)];
  const objects = ['', '', '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>'];
  const kids = [];
  for (let p = 0; p < pages; p += 1) {
    let stream = `BT /F1 20 Tf 72 750 Td ${pdfString(`Section ${seed}.${p + 1} ${word()} ${word()}`)} Tj ET\nBT /F1 10 Tf 72 720 Td 13 TL\n`;
    for (let l = 0; l < lines; l += 1) {
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

function sentences(next, count) {
  const word = () => VOCABULARY[Math.floor(next() * VOCABULARY.length)];
  return Array.from({ length: count }, () => `${Array.from({ length: 12 }, word).join(' ')}.`);
}

const XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';

function docx(seed, paragraphs) {
  const next = random(seed);
  const body = sentences(next, paragraphs)
    .map((s, i) =>
      i % 15 === 0
        ? `<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>${esc(s)}</w:t></w:r></w:p>`
        : `<w:p><w:r><w:t xml:space="preserve">${esc(s)}</w:t></w:r></w:p>`,
    )
    .join('');
  const enc = (t) => new TextEncoder().encode(t);
  return Buffer.from(
    zipSync({
      '[Content_Types].xml': enc(
        `${XML}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`,
      ),
      '_rels/.rels': enc(
        `${XML}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`,
      ),
      'word/document.xml': enc(
        `${XML}<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${body}</w:body></w:document>`,
      ),
    }),
  );
}

async function xlsx(ExcelJS, seed, rows) {
  const next = random(seed);
  const workbook = new ExcelJS.Workbook();
  for (const name of ['Budget', 'Staff']) {
    const sheet = workbook.addWorksheet(name);
    sheet.addRow(['Item', 'Owner', 'Cost', 'Note']);
    for (let r = 0; r < rows; r += 1) {
      const [a, b] = sentences(next, 2);
      sheet.addRow([a.slice(0, 30), b.slice(0, 20), Math.floor(next() * 100000) / 100, a]);
    }
  }
  return Buffer.from(await workbook.xlsx.writeBuffer());
}

function html(seed, paragraphs) {
  const next = random(seed);
  const body = sentences(next, paragraphs)
    .map((s, i) =>
      i % 10 === 0
        ? `<h2>${esc(s)}</h2>`
        : `<p>${esc(s)} <a href="https://example.com/${seed}/${i}">more</a></p>`,
    )
    .join('\n');
  return Buffer.from(
    `<!doctype html><html><head><title>Page ${seed}</title><script>alert(1)</script></head><body>${body}</body></html>`,
  );
}

function csv(seed, rows) {
  const next = random(seed);
  const lines = ['id,item,owner,amount'];
  for (let r = 0; r < rows; r += 1) {
    const [a] = sentences(next, 1);
    lines.push(`${r},"${a}",${VOCABULARY[r % VOCABULARY.length]},${(next() * 1000).toFixed(2)}`);
  }
  return Buffer.from(`${lines.join('\n')}\n`);
}

/**
 * The corpus of `count` documents under `dir` (reused when complete): 40 % PDF, 20 % DOCX, 10 %
 * XLSX, 15 % HTML, 15 % CSV. Every 50th PDF has 150 pages and every 50th CSV 8,000 rows (~1 MB).
 * Returns the folder, the count and the bytes.
 */
export async function documentCorpus(dir, count, progress = () => undefined) {
  const done = join(dir, '.complete');
  if (!existsSync(done)) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const ExcelJS = (await import('exceljs')).default;
    for (let i = 0; i < count; i += 1) {
      const seed = 1000 + i;
      const slot = i % 20;
      const big = i % 50 === 0;
      let name;
      let bytes;
      if (slot < 8) {
        name = `${i}.pdf`;
        bytes = textPdf(seed, big ? 150 : 2 + (i % 39));
      } else if (slot < 12) {
        name = `${i}.docx`;
        bytes = docx(seed, 40 + (i % 200));
      } else if (slot < 14) {
        name = `${i}.xlsx`;
        bytes = await xlsx(ExcelJS, seed, 20 + (i % 300));
      } else if (slot < 17) {
        name = `${i}.html`;
        bytes = html(seed, 30 + (i % 300));
      } else {
        name = `${i}.csv`;
        bytes = csv(seed, big ? 8000 : 50 + (i % 500));
      }
      writeFileSync(join(dir, `${String(Math.floor(i / 100)).padStart(2, '0')}-${name}`), bytes);
      if (i % 200 === 199) progress(`documents: corpus ${i + 1}/${count}`);
    }
    writeFileSync(done, String(count));
  }
  let bytes = 0;
  let files = 0;
  for (const name of (await import('node:fs')).readdirSync(dir)) {
    if (name.startsWith('.')) continue;
    files += 1;
    bytes += statSync(join(dir, name)).size;
  }
  return { dir, files, bytes };
}
