/**
 * Section 2 — `resources/list` over a 100,000-file and a 10,000-file tree (generated under .bench/,
 * reused when the count is right), over stdio with the bench's thin client:
 *   - time to the first page (the very first request, then the median of several more),
 *   - time to page through everything (follow nextCursor until absent; the count of distinct URIs
 *     must equal the file count, else the run is marked broken), resources/s,
 *   - the server's peak RSS (VmHWM at the end, and VmRSS sampled every 50 ms while paging).
 * For context, a bare SDK McpServer (bench/peers/bare-sdk-list.mjs) registers every file and answers
 * resources/list in one response: startup time, response time, response size, RSS.
 */
import { listTree } from '../lib/fixtures.mjs';
import { memoryOf, sampleRss } from '../lib/proc.mjs';
import { StdioRpc } from '../lib/stdio-client.mjs';
import { fmtInt, fmtMB, fmtMs, fmtRatio, median, printTable } from '../lib/stats.mjs';

const FIRST_PAGE_SAMPLES = 15;
const MAX_PAGES = 1000; // bound on one paging run (100k files at the default 1000 per page = 100 pages)

export async function listSection(ctx) {
  const { paths, opts } = ctx;
  const started = performance.now();
  const big = listTree(paths.benchDir, 100, 1000);
  const small = listTree(paths.benchDir, 10, 1000);
  ctx.progress(
    `list: trees ready (${big.reused ? 'reused' : 'built'} ${fmtInt(big.count)}, ${small.reused ? 'reused' : 'built'} ${fmtInt(small.count)}) in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );

  const rows = [];
  const results = await measureReservoir(paths, [big, small], opts.reps);
  ctx.progress('list: Reservoir done');
  for (const tree of [big, small]) {
    const r = results[tree.count];
    rows.push([
      'Reservoir (paged, 1000/page)',
      fmtInt(tree.count),
      fmtMs(r.firstCold),
      fmtMs(r.firstMedian),
      fmtMs(r.pagingMedian),
      fmtInt(r.pages),
      fmtInt(r.rate),
      fmtMB(r.bytes),
      fmtMB(r.idleRss),
      fmtMB(r.peakSampled),
      fmtMB(r.hwm),
    ]);
  }
  const peers = {};
  for (const tree of [big, small]) {
    const p = await measureBareList(paths, tree, opts.reps);
    peers[tree.count] = p;
    rows.push([
      'bare SDK McpServer (one response)',
      fmtInt(tree.count),
      fmtMs(p.firstCold),
      fmtMs(p.median),
      fmtMs(p.median),
      '1',
      fmtInt(tree.count / (p.median / 1000)),
      fmtMB(p.bytes),
      fmtMB(p.idleRss),
      fmtMB(p.peakSampled),
      fmtMB(p.hwm),
    ]);
    ctx.progress(`list: bare SDK ${fmtInt(tree.count)} done`);
  }
  printTable(
    `2. resources/list over stdio (first page: first request, then median of ${FIRST_PAGE_SAMPLES}; full listing: median of ${opts.reps})`,
    [
      'server',
      'files',
      'first page (1st)',
      'first page (median)',
      'full listing',
      'pages',
      'resources/s',
      'bytes',
      'RSS after init',
      'peak RSS (sampled)',
      'VmHWM',
    ],
    rows,
  );
  const b = results[big.count];
  const s = results[small.count];
  console.log(
    `   bare SDK startup (walk + registerResource × N, until its first answer): ${fmtMs(peers[big.count].startup)} at ${fmtInt(big.count)}, ` +
      `${fmtMs(peers[small.count].startup)} at ${fmtInt(small.count)}. Reservoir full listing is ${fmtRatio(peers[big.count].median, b.pagingMedian)} ` +
      `the bare SDK's one-response time at ${fmtInt(big.count)} (> 1× means Reservoir is faster).`,
  );
  const spread = b.firstMedian / s.firstMedian - 1;
  ctx.target('list: first page ≤ 30 ms at 100k', fmtMs(b.firstMedian), b.firstMedian <= 30);
  ctx.target(
    'list: first page at 100k within ±25% of 10k',
    `${fmtMs(b.firstMedian)} vs ${fmtMs(s.firstMedian)} (${(spread * 100).toFixed(0)}%)`,
    Math.abs(spread) <= 0.25,
  );
  const minRate = Math.min(b.rate, s.rate);
  ctx.target(
    'list: paging ≥ 50,000 resources/s',
    `${fmtInt(b.rate)} (100k), ${fmtInt(s.rate)} (10k)`,
    minRate >= 50_000,
  );
  const maxRss = Math.max(b.hwm ?? 0, s.hwm ?? 0, b.peakSampled, s.peakSampled);
  ctx.target('list: server RSS ≤ 150 MB throughout', fmtMB(maxRss), maxRss <= 150 * 1024 * 1024);
}

/**
 * Both trees are served at once and every measurement alternates between them, so a burst of
 * machine noise cannot land on one tree only.
 */
async function measureReservoir(paths, trees, reps) {
  const servers = trees.map((tree) => ({
    tree,
    rpc: new StdioRpc(process.execPath, [paths.cli, 'serve', tree.root]),
    firsts: [],
    runs: [],
  }));
  try {
    for (const s of servers) {
      s.idleRss = undefined;
      await s.rpc.initialize();
      s.idleRss = memoryOf(s.rpc.pid).rss;
      s.sampler = sampleRss(s.rpc.pid, 50);
    }
    const firstPage = async (rpc) => {
      const t0 = performance.now();
      const result = await rpc.request('resources/list', {}, 30_000);
      const ms = performance.now() - t0;
      if (!Array.isArray(result.resources) || result.resources.length === 0)
        throw new Error('resources/list: empty first page');
      return ms;
    };
    for (const s of servers) s.firstCold = await firstPage(s.rpc);
    for (let i = 0; i < FIRST_PAGE_SAMPLES; i += 1)
      for (const s of servers) s.firsts.push(await firstPage(s.rpc));

    for (let rep = 0; rep < reps; rep += 1) {
      for (const s of servers) {
        const seen = new Set();
        let cursor;
        let pages = 0;
        let bytes = 0;
        const t0 = performance.now();
        do {
          if (pages >= MAX_PAGES)
            throw new Error(
              `resources/list: more than ${MAX_PAGES} pages for ${s.tree.count} files`,
            );
          const { message, bytes: size } = await s.rpc.send(
            'resources/list',
            cursor === undefined ? {} : { cursor },
          );
          if (message.error !== undefined)
            throw new Error(
              `resources/list: JSON-RPC ${message.error.code}: ${message.error.message}`,
            );
          for (const r of message.result.resources) seen.add(r.uri);
          cursor = message.result.nextCursor;
          pages += 1;
          bytes += size;
        } while (cursor !== undefined);
        s.runs.push(performance.now() - t0);
        s.pages = pages;
        s.bytes = bytes;
        if (seen.size !== s.tree.count)
          throw new Error(
            `resources/list paged ${seen.size} distinct resources, expected ${s.tree.count}`,
          );
      }
    }
    const results = {};
    for (const s of servers) {
      const { peak } = s.sampler.stop();
      const pagingMedian = median(s.runs);
      results[s.tree.count] = {
        firstCold: s.firstCold,
        firstMedian: median(s.firsts),
        pagingMedian,
        pages: s.pages,
        bytes: s.bytes,
        rate: s.tree.count / (pagingMedian / 1000),
        idleRss: s.idleRss,
        peakSampled: peak,
        hwm: memoryOf(s.rpc.pid).hwm,
      };
    }
    return results;
  } finally {
    for (const s of servers) {
      s.sampler?.stop();
      await s.rpc.close();
    }
  }
}

async function measureBareList(paths, tree, reps) {
  const t0 = performance.now();
  const rpc = new StdioRpc(process.execPath, [paths.peerList, tree.root]);
  try {
    await rpc.initialize(120_000);
    const startup = performance.now() - t0;
    const idleRss = memoryOf(rpc.pid).rss;
    const sampler = sampleRss(rpc.pid, 50);
    const times = [];
    let bytes = 0;
    for (let rep = 0; rep <= reps; rep += 1) {
      const t1 = performance.now();
      const { message, bytes: size } = await rpc.send('resources/list', {});
      times.push(performance.now() - t1);
      if (message.error !== undefined)
        throw new Error(
          `bare SDK resources/list: JSON-RPC ${message.error.code}: ${message.error.message}`,
        );
      const count = message.result.resources.length;
      if (count !== tree.count)
        throw new Error(
          `bare SDK resources/list returned ${count} resources, expected ${tree.count}`,
        );
      if (message.result.nextCursor !== undefined)
        throw new Error('bare SDK resources/list unexpectedly paged');
      bytes = size;
    }
    const { peak } = sampler.stop();
    return {
      startup,
      idleRss,
      firstCold: times[0],
      median: median(times.slice(1)),
      bytes,
      peakSampled: peak,
      hwm: memoryOf(rpc.pid).hwm,
    };
  } finally {
    await rpc.close();
  }
}
