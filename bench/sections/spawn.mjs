/**
 * Section 4 — cold start over stdio: spawn the server, write `initialize` at once, and time until
 * its response arrives (median of 10 each; min/max beside it and Reservoir ÷ each). Spawns
 * alternate between servers so machine noise spreads evenly.
 */
import { StdioRpc } from '../lib/stdio-client.mjs';
import { fmtMs, fmtRatio, median, printTable } from '../lib/stats.mjs';

const BASELINE =
  "process.stdin.once('data', () => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: 1, result: {} }) + '\\n')); process.stdin.once('end', () => process.exit(0));";

export async function spawnSection(ctx) {
  const { paths, fixture } = ctx;
  const servers = [
    { name: 'Reservoir (serve DIR)', args: [paths.cli, 'serve', fixture.dir], n: 10, times: [] },
    { name: 'bare SDK McpServer', args: [paths.peerStdio, fixture.file], n: 10, times: [] },
    { name: 'server-filesystem', args: [paths.serverFilesystem, fixture.dir], n: 10, times: [] },
    // Baseline: a bare node process answering the first line, i.e. the floor this machine allows.
    { name: 'node baseline (no modules)', args: ['-e', BASELINE], n: 10, times: [] },
  ];
  for (let i = 0; i < 10; i += 1) {
    for (const s of servers) {
      if (i >= s.n) continue;
      const t0 = performance.now();
      const rpc = new StdioRpc(process.execPath, s.args);
      try {
        await rpc.initialize(15_000);
        s.times.push(performance.now() - t0);
      } finally {
        await rpc.close();
      }
    }
  }
  const ours = median(servers[0].times);
  printTable(
    '4. Spawn to first answered request (initialize) over stdio',
    ['server', 'median', 'min', 'max', 'Reservoir ÷ this (median)', 'runs'],
    servers.map((s) => [
      s.name,
      fmtMs(median(s.times)),
      fmtMs(Math.min(...s.times)),
      fmtMs(Math.max(...s.times)),
      fmtRatio(ours, median(s.times)),
      String(s.times.length),
    ]),
  );
  const bareSdk = median(servers[1].times);
  ctx.target('spawn: first answer ≤ 300 ms', fmtMs(ours), ours <= 300);
  ctx.target(
    'spawn: first answer ≤ 1.0 × bare SDK McpServer (same run)',
    `${fmtRatio(ours, bareSdk)} (${fmtMs(ours)} vs ${fmtMs(bareSdk)})`,
    ours <= bareSdk,
  );
}
