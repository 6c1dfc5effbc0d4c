/**
 * `completion/complete` of a files template's `path` on a 100,000-file tree (100 directories ×
 * 1,000 files, generated under .bench/ or reused), over stdio with the bench's thin client, one
 * request in flight. Prints p50 / p99 / max milliseconds per kind of prefix, numbers only:
 *   - cold: the first completion in each of the 100 directories (listing read, not yet cached);
 *   - warm: repeated prefixes — the root (''), a whole directory ('d042/', 1,000 matches: 100
 *     values, total 1,000), a narrow prefix ('d042/f09', 10 matches) and one matching nothing.
 *
 * Usage: npm run build && node bench/sections/completion.mjs   (or as a bench section)
 */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { listTree } from '../lib/fixtures.mjs';
import { JsonRpcError, StdioRpc } from '../lib/stdio-client.mjs';
import { fmtInt, fmtMs, percentile, printTable } from '../lib/stats.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '../..');
const SAMPLES = 500;

export async function completionSection(ctx = {}) {
  const progress = ctx.progress ?? ((text) => process.stderr.write(`${text}\n`));
  const benchDir = ctx.paths?.benchDir ?? join(repo, '.bench');
  const cli = ctx.paths?.cli ?? join(repo, 'dist/cli/index.js');
  const tree = listTree(benchDir, 100, 1000);
  progress(`completion: tree ${tree.reused ? 'reused' : 'built'} (${fmtInt(tree.count)} files)`);
  const rootUri = `${pathToFileURL(tree.root).href}/`;
  const template = `${rootUri}{+path}`;
  const rpc = new StdioRpc(process.execPath, [cli, 'serve', tree.root, '--log-level', 'warn']);
  try {
    await rpc.initialize();
    const complete = async (value) => {
      const t0 = performance.now();
      const { message } = await rpc.send('completion/complete', {
        ref: { type: 'ref/resource', uri: template },
        argument: { name: 'path', value },
      });
      const ms = performance.now() - t0;
      if (message.error !== undefined) throw new JsonRpcError('completion/complete', message.error);
      return { ms, completion: message.result.completion };
    };
    const rows = [];
    const all = [];
    const row = (label, samples, completion) => {
      all.push(...samples);
      rows.push([
        label,
        fmtInt(samples.length),
        fmtMs(percentile(samples, 50)),
        fmtMs(percentile(samples, 99)),
        fmtMs(Math.max(...samples)),
        `${completion.values.length} / ${completion.total}`,
      ]);
    };

    const cold = [];
    let last;
    for (let d = 0; d < 100; d += 1) {
      const r = await complete(`d${String(d).padStart(2, '0')}/f0`);
      cold.push(r.ms);
      last = r.completion;
    }
    row("cold: 'dNN/f0', each directory once", cold, last);

    const dir = 'd42';
    for (const [label, value] of [
      ["root ''", ''],
      [`'${dir}/' (whole directory)`, `${dir}/`],
      [`'${dir}/f09' (narrow)`, `${dir}/f09`],
      [`'${dir}/zz' (no match)`, `${dir}/zz`],
    ]) {
      for (let i = 0; i < 20; i += 1) await complete(value); // warm-up
      const samples = [];
      let completion;
      for (let i = 0; i < SAMPLES; i += 1) {
        const r = await complete(value);
        samples.push(r.ms);
        completion = r.completion;
      }
      row(`warm: ${label}`, samples, completion);
    }
    rows.push([
      'all',
      fmtInt(all.length),
      fmtMs(percentile(all, 50)),
      fmtMs(percentile(all, 99)),
      fmtMs(Math.max(...all)),
      '',
    ]);
    printTable(
      `completion/complete of path on a ${fmtInt(tree.count)}-file tree, stdio, 1 in flight`,
      ['prefix', 'samples', 'p50', 'p99', 'max', 'values / total'],
      rows,
    );
  } finally {
    await rpc.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  completionSection().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
