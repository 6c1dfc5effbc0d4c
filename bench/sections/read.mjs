/**
 * Section 1 — `resources/read` of a 4 KiB file over stdio, at 1 and 16 requests in flight:
 * reads/s, p50 and p99 latency for Reservoir, a bare SDK v2 McpServer (bench/peers/bare-sdk-stdio.mjs)
 * and @modelcontextprotocol/server-filesystem (`read_text_file` via `tools/call`), all driven by the
 * bench's own thin newline-delimited JSON-RPC client, beside the no-SDK ceiling
 * (bench/peers/ceiling-stdio.mjs: a bare JSON-RPC loop with a synchronous read); plus Reservoir driven by the real SDK Client
 * (`Client` + `StdioClientTransport`) to show what the SDK client itself costs. Servers stay up for
 * the whole section and rounds are interleaved (rep → concurrency → server), so machine noise
 * spreads evenly; each cell is the median over the repetitions, with min / median / max beside it.
 * Server CPU per request (utime + stime from /proc/PID/stat over the window ÷ requests) is the
 * figure that still separates servers at 16 in flight, where the 2-core machine is client-bound.
 */
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { cpuWindow } from '../lib/cpu.mjs';
import { trackPid, untrackPid } from '../lib/proc.mjs';
import { closedLoop, JsonRpcError, StdioRpc } from '../lib/stdio-client.mjs';
import {
  fmtInt,
  fmtMs,
  fmtRatio,
  fmtSpread,
  fmtUs,
  median,
  percentile,
  printTable,
} from '../lib/stats.mjs';

const CONCURRENCY = [1, 16];

export async function readSection(ctx) {
  const { paths, fixture, opts } = ctx;
  const uri = pathToFileURL(fixture.file).href;
  const expected = 4096;
  const servers = [];
  try {
    const mk = (name, args, call) => {
      const rpc = new StdioRpc(process.execPath, args);
      servers.push({ name, rpc, pid: rpc.pid, call: () => call(rpc) });
    };
    const readCall = async (rpc) => {
      const { message } = await rpc.send('resources/read', { uri });
      if (message.error !== undefined) throw new JsonRpcError('resources/read', message.error);
      if (message.result?.contents?.[0]?.text?.length !== expected)
        throw new Error('resources/read: wrong content length');
    };
    mk('Reservoir', [paths.cli, 'serve', fixture.dir], readCall);
    mk('no-SDK ceiling', [paths.ceilingStdio, fixture.file], readCall);
    mk('bare SDK McpServer', [paths.peerStdio, fixture.file], readCall);
    mk('server-filesystem (tools/call)', [paths.serverFilesystem, fixture.dir], async (rpc) => {
      const { message } = await rpc.send('tools/call', {
        name: 'read_text_file',
        arguments: { path: fixture.file },
      });
      if (message.error !== undefined) throw new JsonRpcError('tools/call', message.error);
      if (message.result?.isError === true)
        throw new Error(`read_text_file: ${JSON.stringify(message.result.content)}`);
      if (message.result?.content?.[0]?.text?.length !== expected)
        throw new Error('read_text_file: wrong content length');
    });
    for (const s of servers) await s.rpc.initialize();

    // The same workload through the SDK's own client, against Reservoir.
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [paths.cli, 'serve', fixture.dir],
      stderr: 'pipe',
    });
    const client = new Client({ name: 'reservoir-bench', version: '1' });
    try {
      await client.connect(transport);
    } catch (error) {
      await transport.close().catch(() => undefined);
      throw error;
    }
    trackPid(transport.pid);
    servers.push({
      name: 'Reservoir via SDK Client',
      sdkClient: client,
      pid: transport.pid,
      call: async () => {
        const result = await client.readResource({ uri }, { cacheMode: 'bypass' });
        if (result.contents?.[0]?.text?.length !== expected)
          throw new Error('SDK readResource: wrong content length');
      },
    });

    // Warm-up (JIT, page cache): not measured.
    for (const s of servers)
      await closedLoop(s.call, { concurrency: 16, durationMs: opts.warmupMs, maxRequests: 50_000 });

    /** results[name][concurrency] = [{ rate, p50, p99 }, …] */
    const results = Object.fromEntries(
      servers.map((s) => [s.name, Object.fromEntries(CONCURRENCY.map((c) => [c, []]))]),
    );
    for (let rep = 0; rep < opts.reps; rep += 1) {
      for (const concurrency of CONCURRENCY) {
        for (const s of servers) {
          const cpu = cpuWindow(s.pid);
          const r = await closedLoop(s.call, {
            concurrency,
            durationMs: opts.readMs,
            maxRequests: 500_000,
          });
          const cpuUs = cpu.stop(r.count);
          results[s.name][concurrency].push({
            rate: r.rate,
            p50: percentile(r.latencies, 50),
            p99: percentile(r.latencies, 99),
            count: r.count,
            cpuUs,
          });
        }
      }
      ctx.progress(`read: repetition ${rep + 1}/${opts.reps} done`);
    }

    const summary = {};
    for (const s of servers) {
      summary[s.name] = {};
      for (const c of CONCURRENCY) {
        const runs = results[s.name][c];
        summary[s.name][c] = {
          rate: median(runs.map((r) => r.rate)),
          p50: median(runs.map((r) => r.p50)),
          p99: median(runs.map((r) => r.p99)),
          cpuUs: median(runs.map((r) => r.cpuUs)),
          rates: runs.map((r) => r.rate),
          cpus: runs.map((r) => r.cpuUs),
        };
        ctx.record({
          section: 'read',
          name: `${s.name}, ${c} in flight`,
          reads: summary[s.name][c].rate,
          cpuUs: summary[s.name][c].cpuUs,
          p99: summary[s.name][c].p99,
        });
      }
    }
    const ours = summary['Reservoir'];
    const ceiling = summary['no-SDK ceiling'];
    const rows = [];
    for (const c of CONCURRENCY) {
      for (const s of servers) {
        const m = summary[s.name][c];
        rows.push([
          `${c}`,
          s.name,
          fmtInt(m.rate),
          fmtSpread(m.rates),
          fmtMs(m.p50),
          fmtMs(m.p99),
          fmtUs(m.cpuUs),
          fmtSpread(m.cpus, fmtUs),
          fmtRatio(m.rate, ceiling[c].rate),
          fmtRatio(m.cpuUs, ceiling[c].cpuUs),
          s.name === 'Reservoir' ? '1.00×' : fmtRatio(ours[c].rate, m.rate),
          s.name === 'Reservoir' ? '1.00×' : fmtRatio(ours[c].cpuUs, m.cpuUs),
        ]);
      }
    }
    printTable(
      `1. resources/read, 4 KiB file, stdio (median of ${opts.reps} × ${(opts.readMs / 1000).toFixed(1)} s; bench's thin client unless noted)`,
      [
        'in flight',
        'server',
        'reads/s',
        'min / med / max',
        'p50',
        'p99',
        'CPU/req',
        'CPU min / med / max',
        'reads ÷ ceiling',
        'CPU ÷ ceiling',
        'Reservoir ÷ this (reads)',
        'Reservoir ÷ this (CPU)',
      ],
      rows,
    );

    const bare = summary['bare SDK McpServer'];
    const fsrv = summary['server-filesystem (tools/call)'];
    const sdk = summary['Reservoir via SDK Client'];
    console.log(
      `   SDK Client cost: at 16 in flight the SDK client reaches ${fmtInt(sdk[16].rate)} reads/s against the same server ` +
        `(${fmtRatio(sdk[16].rate, ours[16].rate)} of the thin client); p50 at 1 in flight ${fmtMs(sdk[1].p50)} vs ${fmtMs(ours[1].p50)}.`,
    );
    ctx.target(
      'read: Reservoir ≥ 10,000 reads/s at 16 in flight',
      fmtInt(ours[16].rate) + ' reads/s',
      ours[16].rate >= 10_000,
    );
    ctx.target(
      'read: ≥ 1.7× bare SDK at 16 in flight',
      fmtRatio(ours[16].rate, bare[16].rate),
      ours[16].rate >= 1.7 * bare[16].rate,
    );
    ctx.target(
      'read: ≥ 2× server-filesystem at 16 in flight',
      fmtRatio(ours[16].rate, fsrv[16].rate),
      ours[16].rate >= 2 * fsrv[16].rate,
    );
    ctx.target('read: p99 at 1 in flight ≤ 1 ms', fmtMs(ours[1].p99), ours[1].p99 <= 1);
    ctx.target(
      'read: server CPU per read at 16 in flight ≤ 1.25× the no-SDK ceiling',
      `${fmtUs(ours[16].cpuUs)} vs ${fmtUs(ceiling[16].cpuUs)} (${fmtRatio(ours[16].cpuUs, ceiling[16].cpuUs)})`,
      ours[16].cpuUs <= 1.25 * ceiling[16].cpuUs,
    );
  } finally {
    for (const s of servers) {
      if (s.rpc !== undefined) await s.rpc.close();
      if (s.sdkClient !== undefined) {
        await s.sdkClient.close().catch(() => undefined);
        untrackPid(s.pid);
      }
    }
  }
}
