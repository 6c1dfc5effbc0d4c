/**
 * Full-text search (issue 13) on a generated 100,000-file tree of ~1 KiB text files (pseudo-words
 * with a Zipf-like spread, a few planted words and phrases, Chinese in 1% of the files; built under
 * .bench/ or reused):
 *
 *   - index build with `reservoir index` (the server's own feeder): files/s, MB/s of text, peak RSS,
 *     and the index size on disk against the indexed text;
 *   - restart with the unchanged tree: `reservoir serve` over stdio, spawn → first search answered,
 *     and spawn → catch-up done (no `indexing` in the answer);
 *   - query latency (search_resources over stdio, 20 hits with snippets) p50/p99 for one word, two
 *     words, a phrase, a prefix and a CJK word;
 *   - change → searchable: a new file with a new word, written, then searched for until it is found;
 *   - side by side in the same run: `rg -l WORD` (Debian's ripgrep) over the tree for the same word,
 *     and server-filesystem's `search_files` for the same name pattern as a name search;
 *   - the ceiling: SQLite FTS5 used directly on the same files (better-sqlite3, read + insert in one
 *     transaction, the same index shape and tokenizer; search-engines.mjs `rawFts5Build`), its build
 *     time and its query p50/p99 beside ours, and our ratio to it;
 *   - many small files: 100,000 files of a few bytes (1,000,000 with --million) built by
 *     `reservoir index` and by raw FTS5: files/s, peak RSS, index bytes per file and against the text.
 *
 * Usage: npm run bench -- --only search [--million]
 *        RESERVOIR_BENCH_SEARCH=build npm run bench -- --only search   (the build rows alone: ours
 *        beside raw FTS5 on the 1 KiB and the tiny files; no restart, queries or peers)
 *        RESERVOIR_BENCH_SEARCH=tiny npm run bench -- --only search [--million]   (the tiny-file
 *        rows alone)
 */
import { execFile } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { sampleRss, spawnTracked, stopChild } from '../lib/proc.mjs';
import { fmtInt, fmtMB, fmtMs, median, percentile, printTable } from '../lib/stats.mjs';
import { StdioRpc } from '../lib/stdio-client.mjs';
import { seeded, words } from '../lib/pseudo-words.mjs';
import { rawFts5Build, timed } from './search-engines.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '../..');
const run = promisify(execFile);
const DIRS = 1000;
const PER_DIR = 100;
const QUERY_REPS = 200;
const CHANGE_REPS = 20;

const QUERIES = [
  { kind: 'one word', query: 'budget' },
  { kind: 'two words', query: 'retry budget' },
  { kind: 'phrase', query: '"retry budget"' },
  { kind: 'prefix', query: 'configur*' },
  { kind: 'CJK word', query: '订阅' },
];

export async function searchSection(ctx = {}) {
  const buildOnly = process.env.RESERVOIR_BENCH_SEARCH === 'build';
  const progress = ctx.progress ?? ((text) => process.stderr.write(`${text}\n`));
  const target = ctx.target ?? (() => undefined);
  const benchDir = ctx.paths?.benchDir ?? join(repoRoot, '.bench');
  const cli = ctx.paths?.cli ?? join(repoRoot, 'dist/cli/index.js');
  if (process.env.RESERVOIR_BENCH_SEARCH !== 'tiny')
    await kibBuild({ ctx, benchDir, cli, buildOnly, progress, target });
  await tinyRows(ctx, benchDir, cli, progress, target);
}

/** 1. The 1 KiB tree's build beside raw FTS5, then (unless `buildOnly`) 2.–5. */
async function kibBuild({ ctx, benchDir, cli, buildOnly, progress, target }) {
  const serverFilesystem =
    ctx.paths?.serverFilesystem ??
    join(repoRoot, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');

  const tree = searchTree(benchDir, progress);
  progress(
    `search: tree ${tree.reused ? 'reused' : 'built'} (${fmtInt(tree.files)} files, ${fmtMB(tree.bytes)} of text)`,
  );
  const state = join(benchDir, 'search-state');
  rmSync(state, { recursive: true, force: true });

  // 1. Build.
  const built = await timedChild(process.execPath, [cli, 'index', tree.root, '--state-dir', state]);
  if (built.code !== 0)
    throw new Error(`reservoir index failed (${built.code}): ${built.stderr.slice(-800)}`);
  const indexBytes = dirBytes(join(state, 'search'));
  const filesPerSecond = tree.files / (built.ms / 1000);
  const mbPerSecond = tree.bytes / 1e6 / (built.ms / 1000);
  progress(
    `search: built in ${(built.ms / 1000).toFixed(1)} s, ${fmtInt(filesPerSecond)} files/s, CPU ${fmtCpu(built.cpu)}, main thread ${fmtCpu(built.mainCpu)}, peak RSS ${fmtMB(built.peakRss)}, index ${fmtMB(indexBytes)}`,
  );
  printTable(
    'Search — index build (reservoir index, 100,000 files)',
    ['measure', 'value'],
    [
      ['files', fmtInt(tree.files)],
      ['text', fmtMB(tree.bytes)],
      ['time', fmtMs(built.ms, 0)],
      ['files/s', fmtInt(filesPerSecond)],
      ['MB/s of text', mbPerSecond.toFixed(1)],
      ['peak RSS', fmtMB(built.peakRss)],
      ['index on disk', fmtMB(indexBytes)],
      ['index / text', `${(indexBytes / tree.bytes).toFixed(2)}×`],
    ],
  );
  // The ceiling: FTS5 used directly on the same files (read + insert in one transaction).
  const raw = await withCpu(() =>
    rawFts5Build(tree.root, join(benchDir, 'search-raw-fts5.sqlite')),
  );
  const rawFilesPerSecond = raw.files / (raw.ms / 1000);
  progress(
    `search: raw FTS5 built in ${(raw.ms / 1000).toFixed(1)} s, ${fmtInt(rawFilesPerSecond)} files/s, CPU ${fmtCpu(raw.cpu)}`,
  );
  printTable(
    'Search — index build: reservoir index against raw FTS5 (better-sqlite3, same files, one transaction)',
    ['', 'time', 'files/s', 'CPU (main thread)', 'index on disk', 'index / text'],
    [
      [
        'reservoir index',
        fmtMs(built.ms, 0),
        fmtInt(filesPerSecond),
        `${fmtCpu(built.cpu)} (${fmtCpu(built.mainCpu)})`,
        fmtMB(indexBytes),
        `${(indexBytes / tree.bytes).toFixed(2)}×`,
      ],
      [
        'raw FTS5',
        fmtMs(raw.ms, 0),
        fmtInt(rawFilesPerSecond),
        fmtCpu(raw.cpu),
        fmtMB(raw.indexBytes),
        `${(raw.indexBytes / raw.textBytes).toFixed(2)}×`,
      ],
      [
        'ours / raw',
        '',
        `${(filesPerSecond / rawFilesPerSecond).toFixed(2)}×`,
        built.mainCpu === undefined
          ? ''
          : `raw / main thread ${(raw.cpu / built.mainCpu).toFixed(2)}×`,
        '',
        '',
      ],
    ],
  );
  target(
    'search: index build ≥ 0.6 × raw FTS5 on the same files',
    `${(filesPerSecond / rawFilesPerSecond).toFixed(2)}×`,
    filesPerSecond >= 0.6 * rawFilesPerSecond,
  );
  const rawQueries = new Map();
  if (!buildOnly)
    for (const { kind, query } of QUERIES)
      rawQueries.set(kind, await timed(() => raw.query(query), QUERY_REPS));
  raw.close();
  target(
    'search: index build ≥ 2,000 files/s',
    `${fmtInt(filesPerSecond)} files/s`,
    filesPerSecond >= 2000,
  );
  target(
    'search: build peak RSS ≤ 300 MB',
    fmtMB(built.peakRss),
    built.peakRss <= 300 * 1024 * 1024,
  );
  target(
    'search: index on disk ≤ 1.2 × indexed text',
    `${(indexBytes / tree.bytes).toFixed(2)}×`,
    indexBytes <= 1.2 * tree.bytes,
  );

  if (buildOnly)
    progress('search: RESERVOIR_BENCH_SEARCH=build — restart, queries and peers skipped');
  else await servedRows({ cli, tree, state, rawQueries, serverFilesystem, progress, target });
}

/** 6. Many small files: 100,000 (and 1,000,000 with --million) beside raw FTS5. */
async function tinyRows(ctx, benchDir, cli, progress, target) {
  // 6. Many small files: what the index costs per file when the text is only a few bytes.
  const tinyRows = [];
  for (const files of [100_000, ...(ctx.opts?.million === true ? [1_000_000] : [])])
    tinyRows.push(await tinyBuild(benchDir, cli, files, progress, target));
  if (ctx.opts?.million !== true) progress('search: the 1M tiny-file row needs --million');
  printTable(
    'Search — many small files (a few bytes each): reservoir index beside raw FTS5',
    [
      'files',
      'text',
      'files/s',
      'raw files/s',
      'ours / raw',
      'peak RSS',
      'index',
      'bytes/file',
      'index / text',
      'raw index',
    ],
    tinyRows,
  );
}

/** 2. Restart with the unchanged tree, 3. queries, 4. change → searchable, 5. peers. */
async function servedRows({ cli, tree, state, rawQueries, serverFilesystem, progress, target }) {
  // 2. Restart with the unchanged tree, 3. queries, 4. change → searchable.
  const t0 = performance.now();
  const rpc = new StdioRpc(process.execPath, [
    cli,
    'serve',
    tree.root,
    '--state-dir',
    state,
    '--log-level',
    'warn',
  ]);
  const rss = sampleRss(rpc.pid);
  const rows = [];
  let ready;
  let caughtUp;
  const latencies = new Map();
  const changes = [];
  let word1Hits = 0;
  try {
    await rpc.initialize();
    const search = async (query, limit = 20) => {
      const result = await rpc.request(
        'tools/call',
        { name: 'search_resources', arguments: { query, limit } },
        120_000,
      );
      if (result.isError === true)
        throw new Error(`search_resources ${query}: ${JSON.stringify(result.content)}`);
      return result.structuredContent;
    };
    let answer = await search('budget');
    ready = performance.now() - t0;
    if (answer.hits.length === 0) throw new Error('restart: the reused index found nothing');
    while (answer.indexing !== undefined) answer = await search('budget');
    caughtUp = performance.now() - t0;
    progress(
      `search: restart searchable after ${fmtMs(ready, 0)}, caught up after ${fmtMs(caughtUp, 0)}`,
    );

    for (const { kind, query } of QUERIES) {
      const times = [];
      let hits = 0;
      for (let i = 0; i < QUERY_REPS; i += 1) {
        const started = performance.now();
        const found = await search(query);
        times.push(performance.now() - started);
        hits = found.hits.length;
      }
      if (hits === 0) throw new Error(`query ${query} found nothing`);
      if (kind === 'one word') word1Hits = hits;
      latencies.set(kind, times);
      const ceiling = rawQueries.get(kind);
      rows.push([
        kind,
        query,
        fmtMs(percentile(times, 50)),
        fmtMs(percentile(times, 99)),
        fmtMs(ceiling.p50),
        fmtMs(ceiling.p99),
        `${(percentile(times, 50) / ceiling.p50).toFixed(1)}×`,
      ]);
    }

    for (let i = 0; i < CHANGE_REPS; i += 1) {
      const word = `quokka${Date.now().toString(36)}x${i}`;
      const started = performance.now();
      writeFileSync(join(tree.root, 'd0000', `change-${i}.txt`), `a ${word} appeared\n`);
      for (;;) {
        const found = await search(word, 1);
        if (found.hits.length > 0) break;
        if (performance.now() - started > 30_000)
          throw new Error(`change ${i} not searchable within 30 s`);
      }
      changes.push(performance.now() - started);
    }
  } finally {
    const { peak } = rss.stop();
    rows.push(['server peak RSS (restart, queries, changes)', '', fmtMB(peak), '', '', '', '']);
    await rpc.close();
    for (let i = 0; i < CHANGE_REPS; i += 1)
      rmSync(join(tree.root, 'd0000', `change-${i}.txt`), { force: true });
  }
  printTable(
    'Search — queries over stdio (search_resources, 20 hits with snippets) beside raw FTS5 (the same MATCH in-process, 21 ranked paths)',
    ['query', 'text', 'p50', 'p99', 'raw p50', 'raw p99', 'p50 / raw'],
    rows,
  );
  const worstP99 = Math.max(...[...latencies.values()].map((t) => percentile(t, 99)));
  target('search: query p99 ≤ 20 ms (worst kind)', fmtMs(worstP99), worstP99 <= 20);
  printTable(
    'Search — restart and change → searchable',
    ['measure', 'value'],
    [
      ['restart, unchanged tree: spawn → first search answered', fmtMs(ready, 0)],
      ['restart, unchanged tree: spawn → catch-up done', fmtMs(caughtUp, 0)],
      ['change → searchable p50', fmtMs(percentile(changes, 50))],
      ['change → searchable p99', fmtMs(percentile(changes, 99))],
    ],
  );
  target('search: restart with an unchanged tree searchable ≤ 3 s', fmtMs(ready, 0), ready <= 3000);
  target(
    'search: change → searchable p99 ≤ 1 s',
    fmtMs(percentile(changes, 99)),
    percentile(changes, 99) <= 1000,
  );

  // 5. Peers in the same run.
  const peerRows = [];
  const oneWord = median(latencies.get('one word'));
  const rg = await ripgrep('budget', tree.root);
  if (rg === undefined)
    peerRows.push(['rg -l budget', 'ripgrep is not installed (apt-get install ripgrep)', '—', '—']);
  else {
    peerRows.push([
      'rg -l budget (median of 3)',
      `${fmtInt(rg.files)} files`,
      fmtMs(rg.ms),
      `search ${(rg.ms / oneWord).toFixed(0)}× faster`,
    ]);
    target(
      'search: one-word query ≥ 50× faster than rg -l',
      `${(rg.ms / oneWord).toFixed(0)}×`,
      rg.ms / oneWord >= 50,
    );
  }
  peerRows.push([
    'search_resources budget (median)',
    `${word1Hits} hits shown`,
    fmtMs(oneWord),
    '',
  ]);
  const namePattern = '**/f004*';
  const sf = await serverFilesystemSearch(serverFilesystem, tree.root, namePattern);
  peerRows.push([
    `server-filesystem search_files ${namePattern} (median of 3)`,
    `${fmtInt(sf.matches)} paths`,
    fmtMs(sf.ms),
    '',
  ]);
  const byName = await nameSearch(cli, tree.root, state, 'f004*');
  peerRows.push([
    'search_resources f004* (names, median of 20)',
    `${byName.hits} hits shown`,
    fmtMs(byName.ms),
    `search ${(sf.ms / byName.ms).toFixed(0)}× faster`,
  ]);
  printTable('Search — peers, same tree, same run', ['what', 'found', 'time', ''], peerRows);
}

/** Builds the index of DIR of `files` files of a few bytes each (generated once under BENCH, reused). */
async function tinyBuild(benchDir, cli, files, progress, target) {
  const root = join(benchDir, `search-tiny-${files}`);
  const marker = `${root}.done`;
  let bytes;
  if (existsSync(marker) && existsSync(root))
    bytes = JSON.parse(readFileSync(marker, 'utf8')).bytes;
  else {
    rmSync(root, { recursive: true, force: true });
    const random = seeded(29);
    const vocabulary = words(random, 5_000);
    bytes = 0;
    for (let d = 0; d < files / 1000; d += 1) {
      const dir = join(root, `d${String(d).padStart(4, '0')}`);
      mkdirSync(dir, { recursive: true });
      for (let f = 0; f < 1000; f += 1) {
        const text = `${vocabulary[Math.floor(random() * vocabulary.length)]}\n`;
        writeFileSync(join(dir, `t${String(f).padStart(3, '0')}.txt`), text);
        bytes += Buffer.byteLength(text);
      }
      if (d % 100 === 99) progress(`search: generating tiny files, ${fmtInt((d + 1) * 1000)}`);
    }
    writeFileSync(marker, JSON.stringify({ bytes }));
  }
  const state = join(benchDir, 'search-tiny-state');
  rmSync(state, { recursive: true, force: true });
  const built = await timedChild(process.execPath, [cli, 'index', root, '--state-dir', state]);
  if (built.code !== 0)
    throw new Error(
      `reservoir index (tiny files) failed (${built.code}): ${built.stderr.slice(-800)}`,
    );
  const indexBytes = dirBytes(join(state, 'search'));
  rmSync(state, { recursive: true, force: true });
  const raw = await withCpu(() => rawFts5Build(root, join(benchDir, 'search-tiny-raw.sqlite')));
  raw.close();
  const perSecond = files / (built.ms / 1000);
  const rawPerSecond = raw.files / (raw.ms / 1000);
  progress(
    `search: ${fmtInt(files)} tiny files: ${fmtInt(perSecond)} files/s (raw ${fmtInt(rawPerSecond)}), CPU ${fmtCpu(built.cpu)}, main thread ${fmtCpu(built.mainCpu)} (raw ${fmtCpu(raw.cpu)}), index ${fmtMB(indexBytes)}, peak RSS ${fmtMB(built.peakRss)}`,
  );
  if (files === 1_000_000) {
    target(
      'search: 1M tiny files, build peak RSS ≤ 300 MB',
      fmtMB(built.peakRss),
      built.peakRss <= 300 * 1024 * 1024,
    );
  }
  return [
    fmtInt(files),
    fmtMB(bytes),
    fmtInt(perSecond),
    fmtInt(rawPerSecond),
    `${(perSecond / rawPerSecond).toFixed(2)}×`,
    fmtMB(built.peakRss),
    fmtMB(indexBytes),
    fmtInt(indexBytes / files),
    `${(indexBytes / bytes).toFixed(1)}×`,
    fmtMB(raw.indexBytes),
  ];
}

/** A tree of DIRS × PER_DIR text files of ~1 KiB under BENCH/search-tree-100000 (reused when complete). */
function searchTree(benchDir, progress) {
  const root = join(benchDir, `search-tree-${DIRS * PER_DIR}`);
  const marker = join(benchDir, `search-tree-${DIRS * PER_DIR}.done`);
  if (existsSync(marker) && existsSync(root)) {
    const { bytes } = JSON.parse(readFileSync(marker, 'utf8'));
    return { root, files: DIRS * PER_DIR, bytes, reused: true };
  }
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  const random = seeded(13);
  const vocabulary = words(random, 20_000);
  const zipf = (n) => vocabulary[Math.min(n - 1, Math.floor(Math.pow(random(), 2.2) * n))];
  let bytes = 0;
  for (let d = 0; d < DIRS; d += 1) {
    const dir = join(root, `d${String(d).padStart(4, '0')}`);
    mkdirSync(dir);
    for (let f = 0; f < PER_DIR; f += 1) {
      const index = d * PER_DIR + f;
      const parts = [];
      let length = 0;
      while (length < 1000) {
        const word = zipf(vocabulary.length);
        parts.push(word);
        length += word.length + 1;
      }
      if (index % 97 === 0) parts.splice(20, 0, 'the', 'retry', 'budget', 'is', 'set', 'here');
      if (index % 13 === 0) parts.splice(40, 0, 'budget');
      if (index % 7 === 0) parts.splice(60, 0, 'retry');
      if (index % 50 === 0)
        parts.splice(80, 0, ['configure', 'configured', 'configuration'][index % 3]);
      if (index % 100 === 3) parts.splice(10, 0, '本系统支持资源订阅和全文搜索。');
      const text = `${parts.join(' ')}\n`;
      writeFileSync(join(dir, `f${String(index).padStart(6, '0')}.txt`), text);
      bytes += Buffer.byteLength(text);
    }
    if (d % 100 === 99) progress(`search: generating the tree, ${fmtInt((d + 1) * PER_DIR)} files`);
  }
  writeFileSync(marker, JSON.stringify({ bytes }));
  return { root, files: DIRS * PER_DIR, bytes, reused: false };
}

function dirBytes(dir) {
  let total = 0;
  for (const name of readdirSync(dir)) total += statSync(join(dir, name)).size;
  return total;
}

/**
 * Runs a child to completion: wall time, peak RSS, exit code, stderr, and (Linux) the CPU seconds of
 * its main thread and of the whole process — steadier than wall time on a busy machine.
 */
async function timedChild(command, args) {
  const started = performance.now();
  const child = spawnTracked(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const rss = sampleRss(child.pid, 100);
  const cpu = { main: undefined, all: undefined };
  const sampleCpu = () => {
    cpu.main = cpuSeconds(`/proc/${child.pid}/task/${child.pid}/stat`) ?? cpu.main;
    cpu.all = cpuSeconds(`/proc/${child.pid}/stat`) ?? cpu.all;
  };
  const cpuTimer = setInterval(sampleCpu, 50);
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk.toString('utf8')));
  child.stdout.resume();
  const code = await new Promise((resolveExit) => child.once('exit', (c) => resolveExit(c)));
  clearInterval(cpuTimer);
  const ms = performance.now() - started;
  const { peak } = rss.stop();
  return { code, ms, peakRss: peak, stderr, mainCpu: cpu.main, cpu: cpu.all };
}

/** User + system CPU seconds from a /proc stat file (the last sample before exit), or undefined. */
function cpuSeconds(file) {
  try {
    const fields = readFileSync(file, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/** What `build` (a rawFts5Build) returns, with the CPU seconds it took in this process. */
async function withCpu(build) {
  const before = process.cpuUsage();
  const result = await build();
  const used = process.cpuUsage(before);
  return { ...result, cpu: (used.user + used.system) / 1e6 };
}

const fmtCpu = (seconds) => (seconds === undefined ? '—' : `${seconds.toFixed(1)} s`);

async function ripgrep(word, root) {
  const times = [];
  let files = 0;
  for (let i = 0; i < 3; i += 1) {
    const started = performance.now();
    try {
      const { stdout } = await run('rg', ['-l', word, root], { maxBuffer: 64 << 20 });
      files = stdout.split('\n').filter(Boolean).length;
    } catch (error) {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    }
    times.push(performance.now() - started);
  }
  return { ms: median(times), files };
}

async function serverFilesystemSearch(entry, root, pattern) {
  const rpc = new StdioRpc(process.execPath, [entry, root]);
  try {
    await rpc.initialize();
    const times = [];
    let matches = 0;
    for (let i = 0; i < 3; i += 1) {
      const started = performance.now();
      const result = await rpc.request(
        'tools/call',
        { name: 'search_files', arguments: { path: root, pattern } },
        300_000,
      );
      times.push(performance.now() - started);
      if (result.isError === true)
        throw new Error(`search_files: ${JSON.stringify(result.content).slice(0, 300)}`);
      const text = result.content?.[0]?.text ?? '';
      matches = text.split('\n').filter((line) => line.startsWith('/')).length;
    }
    return { ms: median(times), matches };
  } finally {
    await rpc.close();
  }
}

async function nameSearch(cli, root, state, query) {
  const rpc = new StdioRpc(process.execPath, [
    cli,
    'serve',
    root,
    '--state-dir',
    state,
    '--log-level',
    'warn',
  ]);
  try {
    await rpc.initialize();
    let result;
    do {
      result = (
        await rpc.request('tools/call', { name: 'search_resources', arguments: { query } }, 120_000)
      ).structuredContent;
    } while (result.indexing !== undefined);
    const times = [];
    for (let i = 0; i < 20; i += 1) {
      const started = performance.now();
      result = (await rpc.request('tools/call', { name: 'search_resources', arguments: { query } }))
        .structuredContent;
      times.push(performance.now() - started);
    }
    return { ms: median(times), hits: result.hits.length };
  } finally {
    await stopChild(rpc.child);
  }
}
