#!/usr/bin/env node
// `npm run conformance`: the official MCP conformance suites over Streamable HTTP, in both protocol
// eras, against two servers:
//
//   - the library fixture, examples/everything/server.mjs, which implements every fixture the suites
//     call (test_* tools, prompts and resources): every scored scenario must pass;
//   - the product, the built CLI `reservoir serve --http` on a temporary folder: every scenario that
//     applies to a resource server must pass. Those are listed explicitly below (PRODUCT); the others
//     call the fixture's own test_* tools, prompts or test:// resources. They still run and are
//     counted as "not applicable". Of the tasks extension, which the product does not declare, the
//     check that applies to every server counts: tasks/* from a client without it answer -32021.
//
// The suites, each run against both servers:
//   1. @modelcontextprotocol/conformance 0.1.16, its active server suite (2025-era wire);
//   2. 0.2.0-alpha.12 --requirements 2025-11-25 (the frozen 2025-11-25 server list);
//   3. 0.2.0-alpha.12 --requirements 2026-07-28 (stateless 2026-07-28 wire, MRTR, caching, …).
//
// The suites are devDependencies under npm aliases (the lockfile pins them) and need Node >= 22,
// so they run on the pinned Node 22 binary (scripts/node-release.mjs). Each suite gets a fresh server on a
// free loopback port. Every scored scenario must pass: there is no expected-failures list. Scenarios
// a requirements file lists as `not_scored` (pending, extension, added-after-release) are run and
// shown, marked "not scored", and not counted. The last line is `N passed, M failed` (scenarios).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { parse as parseYaml } from 'yaml';
import { ensureNode22, ROOT } from './node-release.mjs';

const require = createRequire(import.meta.url);
const SERVER = join(ROOT, 'examples', 'everything', 'server.mjs');
const CLI = join(ROOT, 'dist', 'cli', 'index.js');
const SUITE_TIMEOUT_MS = 5 * 60_000;

const RUNS = [
  { label: '0.1.16', pkg: 'conformance-0.1.16', version: '0.1.16', args: [] },
  {
    label: '0.2 @2025-11-25',
    pkg: 'conformance-0.2.0-alpha.12',
    version: '0.2.0-alpha.12',
    args: ['--requirements', '2025-11-25'],
  },
  {
    label: '0.2 @2026-07-28',
    pkg: 'conformance-0.2.0-alpha.12',
    version: '0.2.0-alpha.12',
    args: ['--requirements', '2026-07-28'],
  },
];

/**
 * The scenarios that apply to `reservoir serve` (a resource server with its built-in tools and
 * prompts), per suite run, and within one the checks that need a fixture the product has no reason
 * to carry (each named with why). Everything else the suites run calls a fixture by name.
 */
const COMMON_2025 = [
  'server-initialize',
  'ping',
  'tools-list',
  'server-sse-multiple-streams',
  'resources-list',
  'prompts-list',
  'dns-rebinding-protection',
];
const PRODUCT = {
  '0.1.16': { scenarios: [...COMMON_2025, 'logging-set-level'] },
  '0.2 @2025-11-25': {
    scenarios: [...COMMON_2025, 'logging-set-level', 'server-session-lifecycle'],
  },
  '0.2 @2026-07-28': {
    scenarios: [
      'server-stateless',
      'tools-list',
      'server-sse-multiple-streams',
      'resources-list',
      'sep-2164-resource-not-found',
      'prompts-list',
      'dns-rebinding-protection',
      'caching',
      'input-required-result-unsupported-methods',
      'http-header-validation',
      'tasks-capability-negotiation',
    ],
    exceptChecks: {
      // The product does not declare the tasks extension; what it must still do is refuse tasks/*
      // from a client that did not negotiate it (TasksMethodsGatedWithoutExtension).
      'tasks-capability-negotiation': {
        TasksExtensionAdvertised: 'the product does not declare the tasks extension',
        TasksToolsCallWithoutExtensionSync: "needs the fixture's task tool slow_compute",
        TasksPerRequestMetaOptIn: "needs the fixture's task tool slow_compute",
      },
      'server-stateless': {
        ServerRejectsUndeclaredCapability:
          "needs the fixture's diagnostic tool test_missing_capability",
        MissingCapabilityHttp400: "needs the fixture's diagnostic tool test_missing_capability",
        HttpServerNoIndependentRequestsOnStream:
          "needs the fixture's diagnostic tool test_streaming_elicitation",
        ServerNoLogWithoutLogLevel: "needs the fixture's diagnostic tool test_logging_tool",
      },
    },
  },
};

/** The installed suite: its directory, checked against the pinned version. */
function suite(run) {
  const manifest = require.resolve(`${run.pkg}/package.json`);
  const { version } = require(manifest);
  if (version !== run.version)
    throw new Error(`${run.pkg} is ${version}, expected ${run.version}: run npm ci`);
  return dirname(manifest);
}

/** Which scenarios a requirements file scores, and why the others are not scored. */
async function requirements(dir, revision) {
  if (revision === undefined) return undefined;
  const doc = parseYaml(await readFile(join(dir, 'requirements', `${revision}.yaml`), 'utf8'));
  const notScored = new Map(
    (doc.not_scored ?? []).filter((e) => e.leg === 'server').map((e) => [e.scenario, e.reason]),
  );
  return { scored: new Set(doc.server ?? []), notScored };
}

/** Starts the fixture server on a free loopback port; resolves once it printed its URL. */
function startServer() {
  const child = spawn(process.execPath, [SERVER, '--port', '0'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (url) =>
      resolve({ url: url.trim(), stop: () => stopServer(child), stderr: () => stderr }),
    );
    child.once('exit', (code) =>
      reject(new Error(`the fixture server exited (${code}) before printing its URL:\n${stderr}`)),
    );
  });
}

/** Starts `reservoir serve FOLDER --http 127.0.0.1:0` (the built CLI); resolves with the URL it logs. */
function startProduct(folder) {
  const child = spawn(
    process.execPath,
    [CLI, 'serve', folder, '--http', '127.0.0.1:0', '--log-level', 'info'],
    { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stderr });
    lines.on('line', (line) => {
      stderr += `${line}\n`;
      let entry;
      try {
        entry = JSON.parse(line);
      } catch {
        return;
      }
      if (
        typeof entry.msg === 'string' &&
        entry.msg.startsWith('serving MCP at') &&
        typeof entry.url === 'string'
      ) {
        resolve({ url: entry.url, stop: () => stopServer(child), stderr: () => stderr });
      }
    });
    child.once('exit', (code) =>
      reject(new Error(`reservoir serve exited (${code}) before serving:\n${stderr}`)),
    );
  });
}

/** A folder for the product to serve: a text file, a nested one and a binary one. */
async function productFolder() {
  const folder = await mkdtemp(join(tmpdir(), 'reservoir-conformance-'));
  await mkdir(join(folder, 'docs'));
  await writeFile(join(folder, 'README.md'), '# Served by reservoir\n');
  await writeFile(join(folder, 'docs', 'notes.txt'), 'Some notes.\n');
  await writeFile(
    join(folder, 'pixel.png'),
    Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg==',
      'base64',
    ),
  );
  return folder;
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
  const child = spawn(node, [cli, 'server', '--url', url, ...args, '-o', outDir], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), SUITE_TIMEOUT_MS);
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      const announced = [...output.matchAll(/^=== Running scenario: (\S+) ===$/gm)].map(
        (m) => m[1],
      );
      resolve({ code: code ?? signal, output, announced });
    });
  });
}

/**
 * Per scenario: counts of check statuses, from DIR/server-<scenario>-<time>/checks.json. Checks named
 * in `except[scenario]` are counted apart (`excepted`), not as passed or failed.
 */
async function results(outDir, except = {}) {
  const byScenario = new Map();
  for (const entry of await readdir(outDir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const scenario = entry.name.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT[\d-]+Z?$/, '');
    const file = join(outDir, entry.name, 'checks.json');
    if (!existsSync(file)) continue;
    const counts = { passed: 0, failed: 0, warnings: 0, other: 0, excepted: 0 };
    for (const check of JSON.parse(await readFile(file, 'utf8'))) {
      if (except[scenario]?.[check.name] !== undefined) counts.excepted += 1;
      else if (check.status === 'SUCCESS') counts.passed += 1;
      else if (check.status === 'WARNING') counts.warnings += 1;
      else if (check.status === 'INFO' || check.status === 'SKIPPED') counts.other += 1;
      else counts.failed += 1; // FAILURE, and anything unknown
    }
    byScenario.set(scenario, counts);
  }
  return byScenario;
}

function table(rows) {
  const header = ['server', 'suite', 'scenario', 'passed', 'failed', 'warnings', 'status'];
  const cells = [
    header,
    ...rows.map((r) => [
      r.server,
      r.suite,
      r.scenario,
      String(r.passed),
      String(r.failed),
      String(r.warnings),
      r.status,
    ]),
  ];
  const widths = header.map((_, i) => Math.max(...cells.map((c) => c[i].length)));
  const line = (c) =>
    c
      .map((v, i) => (i >= 3 && i <= 5 ? v.padStart(widths[i]) : v.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [
    line(header),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...cells.slice(1).map(line),
  ].join('\n');
}

/**
 * How one suite's scenarios are scored against one server: the fixture by the requirements file
 * (every scored scenario, or the whole active suite for 0.1.16); the product by its PRODUCT list.
 * Returns, per scenario, whether it counts and, if not, why.
 */
function scoring(target, run, required) {
  if (target === 'fixture') {
    return {
      expected: required === undefined ? undefined : [...required.scored],
      reasonNotCounted: (scenario) => {
        const reason = required?.notScored.get(scenario);
        return reason === undefined ? undefined : `not scored: ${reason}`;
      },
    };
  }
  const applicable = new Set(PRODUCT[run.label].scenarios);
  return {
    expected: [...applicable],
    reasonNotCounted: (scenario) =>
      applicable.has(scenario) ? undefined : 'n/a: calls a fixture the product does not carry',
  };
}

async function main() {
  const node = await ensureNode22({ log: (message) => console.log(`conformance: ${message}`) });
  const outRoot = join(
    ROOT,
    '.cache',
    'conformance',
    new Date().toISOString().replace(/[:.]/g, '-'),
  );
  await mkdir(outRoot, { recursive: true });
  console.log(
    `conformance: Node ${node === process.execPath ? process.version : node}; results in ${outRoot}`,
  );
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
  const folder = await productFolder();

  const rows = [];
  const problems = [];
  try {
    for (const [index, run] of RUNS.entries()) {
      const dir = suite(run);
      const revision = run.args[1];
      const required = await requirements(dir, revision);
      for (const target of ['fixture', 'product']) {
        const outDir = join(
          outRoot,
          `${index + 1}-${target}-${run.label.replace(/[^\w.-]+/g, '_')}`,
        );
        await mkdir(outDir, { recursive: true });
        const server = target === 'fixture' ? await startServer() : await startProduct(folder);
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
        const except = target === 'product' ? (PRODUCT[run.label].exceptChecks ?? {}) : {};
        const found = await results(outDir, except);
        const scenarios = [...new Set([...ran.announced, ...found.keys()])];
        const { expected, reasonNotCounted } = scoring(target, run, required);
        let countedSeen = 0;
        const here = [];
        for (const scenario of scenarios) {
          const counts = found.get(scenario);
          const reason = reasonNotCounted(scenario);
          const scored = reason === undefined;
          if (scored) countedSeen += 1;
          const ok = counts !== undefined && counts.failed === 0;
          const excepted = counts?.excepted
            ? ` (${counts.excepted} fixture-only check(s) set aside)`
            : '';
          const status = `${ok ? 'PASS' : counts === undefined ? 'FAIL (no results)' : 'FAIL'}${scored ? excepted : ` (${reason})`}`;
          here.push({
            server: target,
            suite: run.label,
            scenario,
            passed: counts?.passed ?? 0,
            failed: counts?.failed ?? 0,
            warnings: counts?.warnings ?? 0,
            status,
            scored,
            ok,
          });
        }
        if (expected !== undefined) {
          for (const scenario of expected) {
            if (!scenarios.includes(scenario))
              here.push({
                server: target,
                suite: run.label,
                scenario,
                passed: 0,
                failed: 0,
                warnings: 0,
                status: 'FAIL (did not run)',
                scored: true,
                ok: false,
              });
          }
        } else {
          const announced = Number(
            /Running \w+ suite \((\d+) scenarios\)/.exec(ran.output)?.[1] ?? NaN,
          );
          if (countedSeen !== announced)
            problems.push(
              `${target} ${run.label}: the suite announced ${announced} scenarios but ${countedSeen} ran`,
            );
        }
        rows.push(...here);
        // The product fails the scenarios that call fixtures, so its suite exit code says nothing.
        const failedHere = here.filter((r) => r.scored && !r.ok).length;
        if (target === 'fixture' && ran.code !== 0 && failedHere === 0)
          problems.push(
            `${run.label}: the suite exited ${ran.code} (see ${join(outDir, 'suite-output.txt')})`,
          );
        console.log(
          `conformance: ${target} ${run.label}: ${scenarios.length} scenarios in ${seconds} s (suite exit ${ran.code})`,
        );
      }
    }
  } finally {
    await rm(folder, { recursive: true, force: true });
  }

  console.log('');
  console.log(table(rows.filter((r) => r.server === 'fixture' || r.scored)));
  console.log('');
  const scored = rows.filter((r) => r.scored);
  const notScored = rows.filter((r) => !r.scored && r.server === 'fixture');
  if (notScored.length > 0) {
    const failing = notScored.filter((r) => !r.ok).length;
    console.log(
      `Not scored: ${notScored.length} fixture scenario run(s) (${failing} failing) that the requirements files list as not_scored ` +
        '(pending, extension, added-after-release); shown for visibility, not counted.',
    );
  }
  const notApplicable = rows.filter((r) => !r.scored && r.server === 'product');
  if (notApplicable.length > 0) {
    console.log(
      `Not applicable: ${notApplicable.length} product scenario run(s) that call the fixture's own test_* tools, prompts or ` +
        'test:// resources, which reservoir serve does not offer; run, not shown, not counted.',
    );
  }
  for (const problem of problems) console.log(`Problem: ${problem}`);
  for (const target of ['fixture', 'product']) {
    const mine = scored.filter((r) => r.server === target);
    console.log(
      `${target}: ${mine.filter((r) => r.ok).length} passed, ${mine.filter((r) => !r.ok).length} failed`,
    );
  }
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
