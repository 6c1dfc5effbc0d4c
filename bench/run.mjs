#!/usr/bin/env node
/**
 * `npm run bench`: Reservoir's performance bench, in one run, against its peers.
 *
 *   1. read   — resources/read of a 4 KiB file over stdio at 1 and 16 in flight (Reservoir, a bare
 *               SDK v2 McpServer, server-filesystem's read_text_file; plus Reservoir via the SDK Client)
 *   2. list   — resources/list over 100,000- and 10,000-file trees: first page, full paging,
 *               resources/s, server peak RSS; a bare SDK McpServer answering in one response for context
 *   3. http   — Streamable HTTP, 32 concurrent clients for a fixed time: 2025-era sessions
 *               (Reservoir vs a bare SDK server) and 2026-07-28 per-request envelopes (Reservoir)
 *   4. spawn  — spawn to first answered `initialize` over stdio
 *   …  search — full-text index build, query latency, restart, change → searchable, against rg and
 *               server-filesystem's search_files (bench/sections/search.mjs)
 *   …  ranges — a 2 GiB file read whole in ?bytes= ranges over stdio: payload MB/s, server RSS
 *               before/after/peak, SHA-256 checked (bench/sections/ranges.mjs)
 *   …  search-access — a restricted token's search for a word only denied files hold (98,000 of
 *               them; RESERVOIR_BENCH_DENIED_FILES) against an unknown word, and another token's
 *               read p99 meanwhile (bench/sections/search-access.mjs)
 *
 *   …         — and the later sections: templates, completion, subscriptions, polling (the files
 *               fallback poller's idle cost on 100,000 files), git, sql, sql-limits
 *               (value caps, cancel), sql-mysql (MySQL / MariaDB keyset pages beside bare mysql2), sql-cpu (CPU per call of a page, a named query and sql_query beside bare pg and mysql2), http-provider, s3 (list and read against a local S3 server, beside files and the bare AWS SDK), security, outage (one source of three down:
 *               resources/list first page), explorer (the explorer page in Chromium: first tree
 *               paint, first search hit, 1 MB preview, bundle weight), search (index build, queries, change → searchable, beside ripgrep), skills (skills/list and skills/get on 1,000 skills, edit → notification)
 *
 * Flags: --only read,list,http,spawn,templates,completion,subscriptions,polling,git,sql,sql-limits,sql-mysql,sql-cpu,http-provider,s3,ranges,security,outage,explorer,search,search-access,search-engines,skills,libraries,scale,scale-bucket,documents   --reps N (3)   --million (scale: the 1M-file rows)   --read-seconds S (1.5)   --http-seconds S (10)
 *        --save FILE      (write this run's rows — reads/s, server CPU µs per request, p99 — as JSON)
 *        --compare FILE   (print each row's ratio against a run saved earlier with --save)
 *        --soak SECONDS [--soak-era legacy|modern|both]   (long HTTP run on Reservoir, RSS every 10 s)
 *
 * Numbers are printed, never asserted: the exit code is non-zero only when something broke (a
 * JSON-RPC error, a wrong resource count, a server that died), never because a target was missed.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import os from 'node:os';
import { compareRuns, loadRun, writeRun } from './lib/compare.mjs';
import { readFixture } from './lib/fixtures.mjs';
import { killAllChildren, killForeignPids } from './lib/proc.mjs';
import { fmtRatio, printTable } from './lib/stats.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..');

const SECTIONS = [
  'read',
  'list',
  'http',
  'spawn',
  'templates',
  'completion',
  'subscriptions',
  'polling',
  'git',
  'sql',
  'sql-limits',
  'sql-mysql',
  'sql-cpu',
  'http-provider',
  's3',
  'ranges',
  'security',
  'outage',
  'explorer',
  'search',
  'search-access',
  'search-engines',
  'skills',
  'libraries',
  'scale',
  'scale-bucket',
  'documents',
];

function parseArgs(argv) {
  const opts = {
    only: SECTIONS,
    reps: 3,
    readMs: 1500,
    warmupMs: 500,
    httpMs: 10_000,
    soakMs: undefined,
    soakEra: 'both',
  };
  const num = (flag, value, min, max) => {
    const n = Number(value);
    if (!Number.isFinite(n) || n < min || n > max)
      throw new Error(`${flag}: expected a number in ${min}…${max}, got '${value}'`);
    return n;
  };
  for (let i = 0; i < argv.length; i += 1) {
    const flag = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${flag} needs a value`);
      return argv[++i];
    };
    switch (flag) {
      case '--only': {
        const list = value()
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
        for (const s of list)
          if (!SECTIONS.includes(s))
            throw new Error(`--only: unknown section '${s}' (known: ${SECTIONS.join(', ')})`);
        opts.only = list;
        break;
      }
      case '--million':
        opts.million = true;
        break;
      case '--reps':
        opts.reps = Math.round(num(flag, value(), 1, 50));
        break;
      case '--read-seconds':
        opts.readMs = num(flag, value(), 0.1, 120) * 1000;
        break;
      case '--http-seconds':
        opts.httpMs = num(flag, value(), 1, 3600) * 1000;
        break;
      case '--save':
        opts.save = value();
        break;
      case '--compare':
        opts.compare = value();
        break;
      case '--changes':
        opts.changes = Math.round(num(flag, value(), 10, 10_000));
        break;
      case '--soak':
        opts.soakMs = num(flag, value(), 10, 24 * 3600) * 1000;
        break;
      case '--soak-era': {
        const era = value();
        if (!['legacy', 'modern', 'both'].includes(era))
          throw new Error(`--soak-era: expected legacy, modern or both, got '${era}'`);
        opts.soakEra = era;
        break;
      }
      case '-h':
      case '--help':
        console.log(
          `usage: node bench/run.mjs [--only ${SECTIONS.join(',')}] [--reps N] [--read-seconds S] [--http-seconds S] [--changes N] [--million] [--save FILE] [--compare FILE] [--soak SECONDS [--soak-era legacy|modern|both]]`,
        );
        process.exit(0);
        break;
      default:
        throw new Error(`unknown flag '${flag}' (try --help)`);
    }
  }
  if (opts.soakMs !== undefined && !argv.includes('--only')) opts.only = ['http'];
  return opts;
}

const onSignal = (signal) => {
  killAllChildren();
  killForeignPids();
  process.stderr.write(`\nbench: interrupted (${signal}); children killed\n`);
  process.exit(130);
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);
process.on('exit', () => {
  killAllChildren();
  killForeignPids();
});

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const paths = {
    repo,
    cli: join(repo, 'dist/cli/index.js'),
    peerStdio: join(here, 'peers/bare-sdk-stdio.mjs'),
    peerList: join(here, 'peers/bare-sdk-list.mjs'),
    peerHttp: join(here, 'peers/bare-sdk-http.mjs'),
    ceilingStdio: join(here, 'peers/ceiling-stdio.mjs'),
    ceilingHttp: join(here, 'peers/ceiling-http.mjs'),
    serverFilesystem: join(
      repo,
      'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js',
    ),
    benchDir: join(repo, '.bench'),
  };
  for (const [name, path] of Object.entries(paths)) {
    if (name !== 'benchDir' && !existsSync(path))
      throw new Error(`missing ${path}${name === 'cli' ? ' (run npm run build)' : ''}`);
  }
  // Read the saved run first: a bad --compare file fails before minutes of measuring.
  const saved = opts.compare === undefined ? undefined : loadRun(opts.compare);
  const started = performance.now();
  const targets = [];
  /** Rows sections report for --save / --compare: { section, name, reads, cpuUs, p99 }. */
  const recorded = [];
  const failures = [];
  const ctx = {
    opts,
    paths,
    fixture: readFixture(paths.benchDir),
    progress: (text) =>
      process.stderr.write(
        `[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${text}\n`,
      ),
    target: (name, measured, pass) => targets.push({ name, measured, pass }),
    record: (row) => recorded.push(row),
  };

  const cpus = os.cpus();
  console.log(`Reservoir bench — ${new Date().toISOString()}`);
  console.log(
    `node ${process.version}, ${os.platform()} ${os.release()}, ${cpus.length} × ${cpus[0]?.model ?? 'cpu'}, load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log(
    `sections: ${opts.only.join(', ')}; reps ${opts.reps}; read ${opts.readMs / 1000} s/cell; http ${opts.httpMs / 1000} s/row` +
      (opts.soakMs ? `; soak ${opts.soakMs / 1000} s (${opts.soakEra})` : ''),
  );
  console.log(
    'Client and servers share this machine: on 2 cores the bench client competes with the server for CPU.',
  );

  const loaders = {
    read: async () => (await import('./sections/read.mjs')).readSection,
    list: async () => (await import('./sections/list.mjs')).listSection,
    http: async () => (await import('./sections/http.mjs')).httpSection,
    spawn: async () => (await import('./sections/spawn.mjs')).spawnSection,
    templates: async () =>
      (await import('./sections/templates-hostile.mjs')).templatesHostileSection,
    completion: async () => (await import('./sections/completion.mjs')).completionSection,
    subscriptions: async () => (await import('./sections/subscriptions.mjs')).subscriptionsSection,
    polling: async () => (await import('./sections/polling.mjs')).pollingSection,
    git: async () => (await import('./sections/git.mjs')).gitSection,
    sql: async () => (await import('./sections/sql.mjs')).sqlSection,
    'sql-limits': async () => (await import('./sections/sql-limits.mjs')).sqlLimitsSection,
    'sql-mysql': async () => (await import('./sections/sql-mysql.mjs')).sqlMysqlSection,
    'sql-cpu': async () => (await import('./sections/sql-cpu.mjs')).sqlCpuSection,
    'http-provider': async () => (await import('./sections/http-provider.mjs')).httpProviderSection,
    s3: async () => (await import('./sections/s3.mjs')).s3Section,
    ranges: async () => (await import('./sections/ranges.mjs')).rangesSection,
    security: async () => (await import('./sections/security.mjs')).securitySection,
    outage: async () => (await import('./sections/outage.mjs')).outageSection,
    explorer: async () => (await import('./sections/explorer.mjs')).explorerSection,
    search: async () => (await import('./sections/search.mjs')).searchSection,
    'search-access': async () => (await import('./sections/search-access.mjs')).searchAccessSection,
    'search-engines': async () =>
      (await import('./sections/search-engines.mjs')).searchEnginesSection,
    skills: async () => (await import('./sections/skills.mjs')).skillsSection,
    libraries: async () => (await import('./sections/libraries.mjs')).librariesSection,
    scale: async () => (await import('./sections/scale.mjs')).scaleSection,
    'scale-bucket': async () => (await import('./sections/scale-bucket.mjs')).scaleBucketSection,
    documents: async () => (await import('./sections/documents.mjs')).documentsSection,
  };
  for (const name of SECTIONS) {
    if (!opts.only.includes(name)) continue;
    ctx.progress(`${name}: starting`);
    try {
      const run = await loaders[name]();
      await run(ctx);
    } catch (error) {
      failures.push({ section: name, error });
      console.log(`\n!! section ${name} broke: ${error?.stack ?? error}`);
    }
    ctx.progress(`${name}: done`);
  }

  if (targets.length > 0) {
    printTable(
      'Targets (informational — timings never fail the run)',
      ['result', 'target', 'measured'],
      targets.map((t) => [t.pass ? 'PASS' : 'MISS', t.name, t.measured]),
    );
    const passed = targets.filter((t) => t.pass).length;
    const missed = targets.filter((t) => !t.pass).map((t) => t.name);
    console.log(
      `\nSummary: ${passed} of ${targets.length} targets pass.` +
        (missed.length > 0 ? ` Missed: ${missed.join('; ')}.` : ''),
    );
  }
  if (saved !== undefined) {
    const { rows, gone } = compareRuns(recorded, saved);
    const cell = (r) => (Number.isFinite(r) ? fmtRatio(r, 1) : '—');
    printTable(
      `Compared with ${opts.compare} (${saved.date ?? 'undated'}, load then ${saved.load ?? '?'}): now ÷ then`,
      ['section', 'row', 'reads/s', 'CPU/req', 'p99'],
      rows.map((r) =>
        r.missing
          ? [r.section, r.name, 'new row', '', '']
          : [r.section, r.name, cell(r.reads), cell(r.cpuUs), cell(r.p99)],
      ),
    );
    if (gone.length > 0)
      console.log(
        `   Rows in the saved run but not in this one: ${gone.map((g) => `${g.section}: ${g.name}`).join('; ')}.`,
      );
  }
  if (opts.save !== undefined) {
    writeRun(opts.save, recorded, {
      date: new Date().toISOString(),
      load: os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' '),
      reps: opts.reps,
    });
    console.log(`Saved ${recorded.length} rows to ${opts.save}.`);
  }
  killAllChildren();
  killForeignPids();
  console.log(`Total bench time ${((performance.now() - started) / 1000).toFixed(0)} s.`);
  if (failures.length > 0) {
    console.log(
      `\nBROKEN: ${failures.map((f) => `${f.section} (${f.error?.message ?? f.error})`).join('; ')}`,
    );
    process.exitCode = 1;
  }
}

main().catch((error) => {
  console.error(`bench: ${error?.stack ?? error}`);
  process.exitCode = 1;
});
