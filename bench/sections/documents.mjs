/**
 * Section — documents: PDF text recovered by Reservoir's renderer (pdf.js in the document worker,
 * src/documents/) beside Debian's `pdftotext` (poppler-utils), the ceiling, on a corpus generated
 * here (PDFs of 10 pages of varied words, headings and links; no LibreOffice needed):
 *   - word recall: of the words pdftotext finds (as a multiset, per document), the share Reservoir's
 *     Markdown also holds (target ≥ 0.9);
 *   - pages/s converting each document once (content differs, so the cache never answers), beside
 *     pdftotext's pages/s run one process per document (target ≥ 0.5×), and the CPU each spends a
 *     page (pdftotext's counted from its exited children, ours from this process and its worker):
 *     wall time on a loaded machine moves with the load, CPU much less;
 *   - 1,000 mixed documents (bench/lib/document-corpus.mjs, built once under the system temp
 *     folder): `reservoir index` over them, documents/s (target ≥ 20), CPU and peak RSS;
 *   - a cached rendition read end to end (Registry.read of `?as=markdown` from a files source,
 *     100 of those documents): p50/p99 from memory and, after a restart, from the state
 *     directory (target p99 ≤ 10 ms).
 * Printed, never asserted. Skipped with its reason when pdftotext is not installed.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { documentCorpus } from '../lib/document-corpus.mjs';
import { sampleRss, spawnTracked } from '../lib/proc.mjs';
import { percentile, printTable } from '../lib/stats.mjs';

const DOCS = Number(process.env.RESERVOIR_BENCH_PDF_DOCS ?? 20);
const MIXED = Number(process.env.RESERVOIR_BENCH_MIXED_DOCS ?? 1000);
const HIT_DOCS = 100;

/** CPU seconds of this process (all threads) and of its exited, waited-for children. */
function cpuSeconds() {
  const own = process.cpuUsage();
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  // Fields 16 and 17 of stat (cutime, cstime), in clock ticks (100 a second on Linux).
  const children = (Number(fields[13]) + Number(fields[14])) / 100;
  return { own: (own.user + own.system) / 1e6, children };
}
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
export function makeBenchPdf(seed) {
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
    const corpus = Array.from({ length: DOCS }, (_, i) => makeBenchPdf(i + 1));
    corpus.forEach((bytes, i) => writeFileSync(join(dir, `${i}.pdf`), bytes));
    progress(`documents: ${DOCS} PDFs of ${PAGES} pages`);
    // Warm the worker (pdf.js loads once) on a document outside the corpus.
    await renderer.render(makeBenchPdf(9999), 'application/pdf', 'warm.pdf');
    const references = [];
    let cpu = cpuSeconds();
    let started = process.hrtime.bigint();
    for (let i = 0; i < DOCS; i += 1)
      references.push(
        execFileSync('pdftotext', ['-q', join(dir, `${i}.pdf`), '-'], { encoding: 'utf8' }),
      );
    const popplerSeconds = Number(process.hrtime.bigint() - started) / 1e9;
    const popplerCpu = cpuSeconds().children - cpu.children;
    const ours = [];
    cpu = cpuSeconds();
    started = process.hrtime.bigint();
    for (let i = 0; i < DOCS; i += 1)
      ours.push((await renderer.render(corpus[i], 'application/pdf', `${i}.pdf`)).markdown);
    const oursSeconds = Number(process.hrtime.bigint() - started) / 1e9;
    const oursCpu = cpuSeconds().own - cpu.own;
    const recalls = references.map((reference, i) => recall(reference, ours[i]));
    const meanRecall = recalls.reduce((a, b) => a + b, 0) / recalls.length;
    const pages = DOCS * PAGES;
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
        'CPU ms/page',
        'CPU vs pdftotext',
      ],
      [
        [
          'pdftotext (ceiling)',
          '1.000',
          '1.000',
          (pages / popplerSeconds).toFixed(1),
          '1.00×',
          ((popplerCpu * 1000) / pages).toFixed(2),
          '1.00×',
        ],
        [
          'Reservoir (pdf.js, worker)',
          meanRecall.toFixed(3),
          Math.min(...recalls).toFixed(3),
          (pages / oursSeconds).toFixed(1),
          `${(popplerSeconds / oursSeconds).toFixed(2)}×`,
          ((oursCpu * 1000) / pages).toFixed(2),
          `${(popplerCpu / oursCpu).toFixed(2)}×`,
        ],
      ],
    );
    await mixedDocuments(ctx, paths);
  } finally {
    await renderer.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The 1,000 mixed documents: index build, then cached renditions read end to end. */
async function mixedDocuments(ctx, paths) {
  const { progress } = ctx;
  const corpus = await documentCorpus(
    join(tmpdir(), `reservoir-bench-documents-${MIXED}`),
    MIXED,
    progress,
  );
  const state = mkdtempSync(join(tmpdir(), 'reservoir-bench-docs-state-'));
  try {
    progress(`documents: reservoir index over ${corpus.files} mixed documents`);
    const cli = paths.cli ?? join(paths.repo, 'dist/cli/index.js');
    const cpu = cpuSeconds();
    const started = performance.now();
    const child = spawnTracked(process.execPath, [cli, 'index', corpus.dir, '--state-dir', state], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const rss = sampleRss(child.pid, 100);
    const { code } = await child.exited;
    const seconds = (performance.now() - started) / 1000;
    const { peak } = rss.stop();
    const cpuUsed = cpuSeconds().children - cpu.children;
    if (code !== 0) throw new Error(`reservoir index failed (${code}): ${child.stderrTail}`);
    const perSecond = corpus.files / seconds;
    ctx.target?.(
      'documents: 1,000 mixed documents indexed ≥ 20/s',
      `${perSecond.toFixed(1)}/s (${(corpus.files / cpuUsed).toFixed(1)}/CPU-s)`,
      perSecond >= 20,
    );

    const hits = await cachedReads(paths, corpus.dir, state);
    ctx.target?.(
      'documents: cached rendition read p99 ≤ 10 ms',
      `${hits.memory.p99.toFixed(2)} ms`,
      hits.memory.p99 <= 10,
    );
    printTable(
      `documents — ${corpus.files} mixed documents (PDF, DOCX, XLSX, HTML, CSV; ${(corpus.bytes / 1e6).toFixed(0)} MB) (targets: index ≥ 20 documents/s, cached read p99 ≤ 10 ms)`,
      ['measure', 'value'],
      [
        ['reservoir index: wall', `${seconds.toFixed(1)} s`],
        ['documents/s (wall)', perSecond.toFixed(1)],
        ['documents per CPU-second', (corpus.files / cpuUsed).toFixed(1)],
        ['peak RSS', `${(peak / 1e6).toFixed(0)} MB`],
        [
          `cached read (memory), ${hits.memory.n} reads: p50 / p99`,
          `${hits.memory.p50.toFixed(2)} / ${hits.memory.p99.toFixed(2)} ms`,
        ],
        [
          `cached read (state dir, after a restart), ${hits.disk.n} reads: p50 / p99`,
          `${hits.disk.p50.toFixed(2)} / ${hits.disk.p99.toFixed(2)} ms`,
        ],
        ['load average at the end', (await import('node:os')).loadavg()[0].toFixed(1)],
      ],
    );
  } finally {
    rmSync(state, { recursive: true, force: true });
  }
}

/**
 * `?as=markdown` reads of the first HIT_DOCS documents through a Registry (files source, document
 * layer with the state directory): converted once, then read 5 times each from memory; then a new
 * layer (a restart) reads each once from the state directory.
 */
async function cachedReads(paths, dir, state) {
  const load = (path) => import(pathToFileURL(join(paths.repo, 'dist', path)).href);
  const { Registry } = await load('core/registry.js');
  const { filesProvider } = await load('providers/files/index.js');
  const { DocumentRenderer } = await load('documents/index.js');
  const { DocumentReads } = await load('documents/reads.js');
  const names = readdirSync(dir)
    .filter((n) => !n.startsWith('.'))
    .sort()
    .slice(0, HIT_DOCS);
  const ctx = { signal: new AbortController().signal };
  const open = () => {
    const registry = new Registry({
      reads: new DocumentReads(new DocumentRenderer({ stateDir: state, limits: { ocr: false } })),
    });
    registry.mount(filesProvider({ root: dir }));
    return registry;
  };
  const timed = async (registry, rounds) => {
    const times = [];
    for (let r = 0; r < rounds; r += 1)
      for (const name of names) {
        const started = performance.now();
        await registry.read(`${pathToFileURL(join(dir, name)).href}?as=markdown`, ctx);
        times.push(performance.now() - started);
      }
    return {
      n: times.length,
      p50: percentile(times, 50),
      p99: percentile(times, 99),
    };
  };
  let registry = open();
  await timed(registry, 1);
  const memory = await timed(registry, 5);
  await registry.close();
  registry = open();
  const disk = await timed(registry, 1);
  await registry.close();
  return { memory, disk };
}
