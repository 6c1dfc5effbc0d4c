#!/usr/bin/env node
// `npm run conformance`: the official MCP conformance suites against examples/everything/server.mjs
// over Streamable HTTP, in both protocol eras:
//
//   1. @modelcontextprotocol/conformance 0.1.16, its active server suite (2025-era wire);
//   2. 0.2.0-alpha.12 --requirements 2025-11-25 (the frozen 2025-11-25 server list);
//   3. 0.2.0-alpha.12 --requirements 2026-07-28 (stateless 2026-07-28 wire, MRTR, caching, …).
//
// The suites are devDependencies under npm aliases (the lockfile pins them) and need Node >= 22,
// so they run on the pinned Node 22 binary (scripts/node22.mjs). Each suite gets a fresh server on a
// free loopback port. Every scored scenario must pass: there is no expected-failures list. Scenarios
// a requirements file lists as `not_scored` (pending, extension, added-after-release) are run and
// shown, marked "not scored", and not counted. The last line is `N passed, M failed` (scenarios).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { parse as parseYaml } from 'yaml';
import { ensureNode22, ROOT } from './node22.mjs';

const require = createRequire(import.meta.url);
const SERVER = join(ROOT, 'examples', 'everything', 'server.mjs');
const SUITE_TIMEOUT_MS = 5 * 60_000;

const RUNS = [
  { label: '0.1.16', pkg: 'conformance-0.1.16', version: '0.1.16', args: [] },
  { label: '0.2 @2025-11-25', pkg: 'conformance-0.2.0-alpha.12', version: '0.2.0-alpha.12', args: ['--requirements', '2025-11-25'] },
  { label: '0.2 @2026-07-28', pkg: 'conformance-0.2.0-alpha.12', version: '0.2.0-alpha.12', args: ['--requirements', '2026-07-28'] },
];

/** The installed suite: its directory, checked against the pinned version. */
function suite(run) {
  const manifest = require.resolve(`${run.pkg}/package.json`);
  const { version } = require(manifest);
  if (version !== run.version) throw new Error(`${run.pkg} is ${version}, expected ${run.version}: run npm ci`);
  return dirname(manifest);
}

/** Which scenarios a requirements file scores, and why the others are not scored. */
async function requirements(dir, revision) {
  if (revision === undefined) return undefined;
  const doc = parseYaml(await readFile(join(dir, 'requirements', `${revision}.yaml`), 'utf8'));
  const notScored = new Map((doc.not_scored ?? []).filter((e) => e.leg === 'server').map((e) => [e.scenario, e.reason]));
  return { scored: new Set(doc.server ?? []), notScored };
}

/** Starts the fixture server on a free loopback port; resolves once it printed its URL. */
function startServer() {
  const child = spawn(process.execPath, [SERVER, '--port', '0'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (url) => resolve({ url: url.trim(), stop: () => stopServer(child), stderr: () => stderr }));
    child.once('exit', (code) => reject(new Error(`the fixture server exited (${code}) before printing its URL:\n${stderr}`)));
  });
}

function stopServer(child) {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Runs one suite; resolves with its exit code, its output and the scenarios it announced. */
function runSuite(node, cli, url, args, outDir) {
  const child = spawn(node, [cli, 'server', '--url', url, ...args, '-o', outDir], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), SUITE_TIMEOUT_MS);
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      const announced = [...output.matchAll(/^=== Running scenario: (\S+) ===$/gm)].map((m) => m[1]);
      resolve({ code: code ?? signal, output, announced });
    });
  });
}

/** Per scenario: counts of check statuses, from DIR/server-<scenario>-<time>/checks.json. */
async function results(outDir) {
  const byScenario = new Map();
  for (const entry of await readdir(outDir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const scenario = entry.name.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT[\d-]+Z?$/, '');
    const file = join(outDir, entry.name, 'checks.json');
    if (!existsSync(file)) continue;
    const counts = { passed: 0, failed: 0, warnings: 0, other: 0 };
    for (const check of JSON.parse(await readFile(file, 'utf8'))) {
      if (check.status === 'SUCCESS') counts.passed += 1;
      else if (check.status === 'WARNING') counts.warnings += 1;
      else if (check.status === 'INFO' || check.status === 'SKIPPED') counts.other += 1;
      else counts.failed += 1; // FAILURE, and anything unknown
    }
    byScenario.set(scenario, counts);
  }
  return byScenario;
}

function table(rows) {
  const header = ['suite', 'scenario', 'passed', 'failed', 'warnings', 'status'];
  const cells = [header, ...rows.map((r) => [r.suite, r.scenario, String(r.passed), String(r.failed), String(r.warnings), r.status])];
  const widths = header.map((_, i) => Math.max(...cells.map((c) => c[i].length)));
  const line = (c) => c.map((v, i) => (i >= 2 && i <= 4 ? v.padStart(widths[i]) : v.padEnd(widths[i]))).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join('\n');
}

async function main() {
  const node = await ensureNode22({ log: (message) => console.log(`conformance: ${message}`) });
  const outRoot = join(ROOT, '.cache', 'conformance', new Date().toISOString().replace(/[:.]/g, '-'));
  await mkdir(outRoot, { recursive: true });
  console.log(`conformance: Node ${node === process.execPath ? process.version : node}; results in ${outRoot}`);

  const rows = [];
  const problems = [];
  for (const [index, run] of RUNS.entries()) {
    const dir = suite(run);
    const revision = run.args[1];
    const required = await requirements(dir, revision);
    const outDir = join(outRoot, `${index + 1}-${run.label.replace(/[^\w.-]+/g, '_')}`);
    await mkdir(outDir, { recursive: true });
    const server = await startServer();
    const started = Date.now();
    let ran;
    try {
      ran = await runSuite(node, join(dir, 'dist', 'index.js'), server.url, run.args, outDir);
    } finally {
      await server.stop();
    }
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    await writeFile(join(outDir, 'suite-output.txt'), ran.output);
    await writeFile(join(outDir, 'server-stderr.txt'), server.stderr());
    const found = await results(outDir);
    const scenarios = [...new Set([...ran.announced, ...found.keys()])];
    const expected = required === undefined ? Number(/Running \w+ suite \((\d+) scenarios\)/.exec(ran.output)?.[1] ?? NaN) : required.scored.size;
    let scoredSeen = 0;
    for (const scenario of scenarios) {
      const counts = found.get(scenario);
      const reason = required?.notScored.get(scenario);
      const scored = reason === undefined;
      if (scored) scoredSeen += 1;
      const ok = counts !== undefined && counts.failed === 0;
      const status = `${ok ? 'PASS' : counts === undefined ? 'FAIL (no results)' : 'FAIL'}${scored ? '' : ` (not scored: ${reason})`}`;
      rows.push({ suite: run.label, scenario, passed: counts?.passed ?? 0, failed: counts?.failed ?? 0, warnings: counts?.warnings ?? 0, status, scored, ok });
    }
    if (required !== undefined) {
      for (const scenario of required.scored) {
        if (!scenarios.includes(scenario)) {
          rows.push({ suite: run.label, scenario, passed: 0, failed: 0, warnings: 0, status: 'FAIL (did not run)', scored: true, ok: false });
        }
      }
    } else if (scoredSeen !== expected) {
      problems.push(`${run.label}: the suite announced ${expected} scenarios but ${scoredSeen} ran`);
    }
    const failedHere = rows.filter((r) => r.suite === run.label && r.scored && !r.ok).length;
    if (ran.code !== 0 && failedHere === 0) problems.push(`${run.label}: the suite exited ${ran.code} (see ${join(outDir, 'suite-output.txt')})`);
    console.log(`conformance: ${run.label}: ${scenarios.length} scenarios in ${seconds} s (suite exit ${ran.code})`);
  }

  console.log('');
  console.log(table(rows));
  console.log('');
  const scored = rows.filter((r) => r.scored);
  const notScored = rows.filter((r) => !r.scored);
  if (notScored.length > 0) {
    const failing = notScored.filter((r) => !r.ok).length;
    console.log(
      `Not scored: ${notScored.length} scenario run(s) (${failing} failing) that the requirements files list as not_scored ` +
        '(pending, extension, added-after-release); shown for visibility, not counted.',
    );
  }
  for (const problem of problems) console.log(`Problem: ${problem}`);
  const passed = scored.filter((r) => r.ok).length;
  const failed = scored.length - passed + problems.length;
  console.log(`${passed} passed, ${failed} failed`);
  process.exitCode = failed === 0 ? 0 : 1;
}

main().catch((error) => {
  console.error(`conformance: ${error instanceof Error ? error.stack : String(error)}`);
  console.log('0 passed, 1 failed');
  process.exitCode = 1;
});
