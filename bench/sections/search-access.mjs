/**
 * Search under access rules (issue 24, item 5): what a restricted caller's search costs when most of
 * the index is denied to it. A generated tree — 2,000 files under docs/ that a `docs` token may
 * read, and N files under secret/ (default 98,000; `RESERVOIR_BENCH_DENIED_FILES=N` to change) that
 * it may not, every one of them holding the word `hushword` — served by `reservoir serve` over HTTP
 * with two static tokens:
 *
 *   - the scoped token's search_resources for `hushword` (held only by denied files) against an
 *     unknown word, interleaved: p50/p99 of each and the ratio of medians (target ≤ 2×);
 *   - another token's resources/read of a small file (4 clients, closed loop) alone, then while
 *     four scoped clients search for `hushword` without pause: read p50/p99 (target p99 ≤ 50 ms).
 *
 * The tree and its index are built under .bench/ once and reused.
 *
 * Usage: npm run bench -- --only search-access
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { HttpMcpClient } from '../lib/http-client.mjs';
import { spawnListening, spawnTracked, stopChild } from '../lib/proc.mjs';
import { closedLoop, mergeRuns } from '../lib/stdio-client.mjs';
import { fmtInt, fmtMs, median, percentile, printTable } from '../lib/stats.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '../..');
const VISIBLE = 2000;
const PER_DIR = 1000;
const SEARCH_REPS = 40;
const LOAD_MS = 5000;
const READERS = 4;
const SEARCHERS = 4;

export async function searchAccessSection(ctx = {}) {
  const progress = ctx.progress ?? ((text) => process.stderr.write(`${text}\n`));
  const target = ctx.target ?? (() => undefined);
  const benchDir = ctx.paths?.benchDir ?? join(repoRoot, '.bench');
  const cli = ctx.paths?.cli ?? join(repoRoot, 'dist/cli/index.js');
  const denied = Number(process.env.RESERVOIR_BENCH_DENIED_FILES ?? 98_000);
  if (!Number.isSafeInteger(denied) || denied < 1)
    throw new Error(
      `RESERVOIR_BENCH_DENIED_FILES: expected a whole number ≥ 1, got ${process.env.RESERVOIR_BENCH_DENIED_FILES}`,
    );

  const tree = accessTree(benchDir, denied, progress);
  const state = join(benchDir, `search-access-state-${denied}`);
  const scopedToken = randomBytes(24).toString('hex');
  const readerToken = randomBytes(24).toString('hex');
  const sha = (token) => createHash('sha256').update(token).digest('hex');
  const rootUri = pathToFileURL(tree).href.replace(/\/?$/, '/');
  const config = join(
    mkdtempSync(join(tmpdir(), 'reservoir-bench-search-access-')),
    'reservoir.yaml',
  );
  writeFileSync(
    config,
    [
      `sources: [{ type: files, root: ${JSON.stringify(tree)} }]`,
      'server:',
      `  stateDir: ${JSON.stringify(state)}`,
      '  limits: { concurrency: { perPrincipal: 64 } }',
      '  http:',
      '    auth:',
      '      tokens:',
      `        - { name: scoped, sha256: ${sha(scopedToken)}, scopes: [docs] }`,
      `        - { name: reader, sha256: ${sha(readerToken)}, scopes: [all] }`,
      'access:',
      '  rules:',
      `    - { scopes: [docs], allow: [${JSON.stringify(`${rootUri}docs/**`)}, "tool:*"] }`,
      '    - { scopes: [all], allow: ["file:///**", "tool:*"] }',
      '',
    ].join('\n'),
  );

  const built = performance.now();
  const indexer = spawnTracked(process.execPath, [cli, 'index', tree, '--state-dir', state], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  indexer.stderr.on('data', (chunk) => (stderr += chunk.toString('utf8')));
  const code = await new Promise((done) => indexer.once('exit', done));
  if (code !== 0) throw new Error(`reservoir index failed (${code}): ${stderr.slice(-800)}`);
  progress(
    `search-access: index of ${fmtInt(denied + VISIBLE)} files ready in ${fmtMs(performance.now() - built, 0)}`,
  );

  const server = await spawnListening(process.execPath, (port) => [
    cli,
    'serve',
    '--config',
    config,
    '--http',
    `127.0.0.1:${port}`,
    '--log-level',
    'warn',
  ]);
  const client = (token) =>
    new HttpMcpClient({ port: server.port, era: 'modern', token, timeoutMs: 120_000 });
  const scoped = Array.from({ length: SEARCHERS }, () => client(scopedToken));
  const readers = Array.from({ length: READERS }, () => client(readerToken));
  try {
    const search = async (c, query) => {
      const result = await c.request('tools/call', {
        name: 'search_resources',
        arguments: { query },
      });
      if (result.isError === true)
        throw new Error(
          `search_resources ${query}: ${JSON.stringify(result.content).slice(0, 300)}`,
        );
      return result.structuredContent;
    };
    while ((await search(readers[0], 'visibleword')).indexing !== undefined);
    if ((await search(scoped[0], 'visibleword')).hits.length === 0)
      throw new Error('the scoped token finds nothing under docs/');
    if ((await search(scoped[0], 'hushword')).hits.length !== 0)
      throw new Error('the scoped token found a denied file');
    if ((await search(readers[0], 'hushword')).hits.length === 0)
      throw new Error('hushword is in no file');

    // 1. Denied-heavy word against an unknown word, interleaved, one scoped client.
    const times = { hushword: [], unknown: [] };
    for (let i = 0; i < SEARCH_REPS + 5; i += 1) {
      for (const [kind, query] of [
        ['hushword', 'hushword'],
        ['unknown', `nosuchword${i}`],
      ]) {
        const started = performance.now();
        await search(scoped[0], query);
        if (i >= 5) times[kind].push(performance.now() - started);
      }
    }
    const ratio = median(times.hushword) / median(times.unknown);
    printTable(
      `Search under access rules — a scoped token (2,000 files visible, ${fmtInt(denied)} denied ones hold the word), ${SEARCH_REPS} each`,
      ['query', 'p50', 'p99'],
      [
        [
          'hushword (only in denied files)',
          fmtMs(median(times.hushword)),
          fmtMs(percentile(times.hushword, 99)),
        ],
        ['an unknown word', fmtMs(median(times.unknown)), fmtMs(percentile(times.unknown, 99))],
        ['ratio of medians', `${ratio.toFixed(2)}×`, ''],
      ],
    );
    target(
      'search: denied-heavy word ≤ 2× an unknown word for a scoped caller',
      `${ratio.toFixed(2)}×`,
      ratio <= 2,
    );

    // 2. Another principal's reads, alone and during four scoped searches for the denied-heavy word.
    const uri = `${rootUri}docs/v0000.txt`;
    const read = (c) => async () => {
      const { message } = await c.post('resources/read', { uri });
      if (message.error !== undefined) throw new Error(`resources/read: ${message.error.message}`);
    };
    const alone = mergeRuns(
      await Promise.all(
        readers.map((c) => closedLoop(read(c), { concurrency: 1, durationMs: LOAD_MS })),
      ),
    );
    let searching = true;
    let searches = 0;
    const searchers = scoped.map(async (c) => {
      while (searching) {
        await search(c, 'hushword');
        searches += 1;
      }
    });
    let during;
    try {
      during = mergeRuns(
        await Promise.all(
          readers.map((c) => closedLoop(read(c), { concurrency: 1, durationMs: LOAD_MS })),
        ),
      );
    } finally {
      searching = false;
      await Promise.all(searchers);
    }
    const p99 = percentile([...during.latencies], 99);
    printTable(
      `Search under access rules — another token's reads (${READERS} clients) beside ${SEARCHERS} scoped searches for hushword`,
      ['while', 'reads', 'p50', 'p99', 'searches'],
      [
        [
          'nothing else runs',
          fmtInt(alone.count),
          fmtMs(percentile([...alone.latencies], 50)),
          fmtMs(percentile([...alone.latencies], 99)),
          '',
        ],
        [
          `${SEARCHERS} scoped searches run`,
          fmtInt(during.count),
          fmtMs(percentile([...during.latencies], 50)),
          fmtMs(p99),
          fmtInt(searches),
        ],
      ],
    );
    target(
      "search: other clients' read p99 ≤ 50 ms during four denied-heavy searches",
      fmtMs(p99),
      p99 <= 50,
    );
  } finally {
    for (const c of [...scoped, ...readers]) c.close();
    await stopChild(server.child);
    rmSync(dirname(config), { recursive: true, force: true });
  }
}

/** docs/ (VISIBLE files) and secret/ (`denied` files, each holding hushword), under BENCH/search-access-N; reused when complete. */
function accessTree(benchDir, denied, progress) {
  const root = join(benchDir, `search-access-${denied}`);
  const marker = `${root}.done`;
  if (existsSync(marker) && existsSync(root)) return root;
  rmSync(root, { recursive: true, force: true });
  mkdirSync(join(root, 'docs'), { recursive: true });
  const filler = (i) =>
    Array.from({ length: 40 }, (_, k) => `w${(i * 31 + k * 17) % 5000}`).join(' ');
  for (let i = 0; i < VISIBLE; i += 1)
    writeFileSync(
      join(root, 'docs', `v${String(i).padStart(4, '0')}.txt`),
      `visibleword ${filler(i)}\n`,
    );
  for (let i = 0; i < denied; i += 1) {
    const dir = join(root, 'secret', `d${String(Math.floor(i / PER_DIR)).padStart(3, '0')}`);
    if (i % PER_DIR === 0) mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `s${String(i).padStart(6, '0')}.txt`), `hushword ${filler(i)}\n`);
    if (i % 10_000 === 9_999)
      progress(`search-access: generating the tree, ${fmtInt(i + 1)} denied files`);
  }
  writeFileSync(marker, JSON.stringify({ denied }));
  return root;
}
