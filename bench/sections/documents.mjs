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
import { documentCorpus, textPdf } from '../lib/document-corpus.mjs';
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
    const corpus = Array.from({ length: DOCS }, (_, i) => textPdf(i + 1, PAGES));
    corpus.forEach((bytes, i) => writeFileSync(join(dir, `${i}.pdf`), bytes));
    progress(`documents: ${DOCS} PDFs of ${PAGES} pages`);
    // Warm the worker (pdf.js loads once) on a document outside the corpus.
    await renderer.render(textPdf(9999, PAGES), 'application/pdf', 'warm.pdf');
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
