// `reservoir serve DIR` over stdio loads only what serving files needs: OAuth (jose), the rate
// limiter, the database drivers and the config schema are loaded when a config file or flag asks
// for them, never on the plain path, so the server answers its first request sooner. The CLI is
// one esbuild bundle (scripts/build-cli.mjs): the plain path reads the bundle and a few chunks and
// nothing from node_modules; `unbundled` maps the chunks back to the modules they hold.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_PATH, ensureBuilt } from '../helpers/build.js';
import { initializeParams } from '../helpers/wire.js';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import {
  bytesOf,
  distModule,
  fromPackages,
  readTrace,
  traced,
  unbundled,
  type Trace,
} from './module-trace.js';

const OPTIONAL_PACKAGES = [
  'jose',
  'rate-limiter-flexible',
  'pg',
  'mysql2',
  'better-sqlite3',
  'better-sqlite3-13',
  '@aws-sdk/client-s3',
  'ioredis',
  '@opentelemetry/api',
  // Document converters: loaded in the conversion worker, on the first document read only.
  'pdfjs-dist',
  'mammoth',
  'exceljs',
  'node-html-markdown',
  'fflate',
];
const CONFIG_SCHEMA = 'config/schema.js';
// What the plain path parses today is ~1.45 MB (minified; zod and the SDK are most of it, zod's
// locales other than English left out); a heavy module pulled onto that path (a driver, jose, the
// config schema's dependants, all of zod's locales) goes over this.
const PLAIN_PATH_BYTES = 1_550_000;

let dir: string;

beforeAll(async () => {
  await ensureBuilt();
  dir = makeTempDir();
  writeTree(dir, { 'plain/docs/a.md': '# a\n', 'configured/docs/a.md': '# a\n' });
});

afterAll(() => removeTree(dir));

/** Runs `reservoir serve ARGS…` in `cwd`, answers one `initialize`, hangs up, and returns what it loaded. */
async function modulesOfServe(cwd: string, args: string[], name: string): Promise<Trace> {
  const file = join(dir, `${name}.trace`);
  const { execArgv, env } = traced(file);
  const child = spawn(process.execPath, [...execArgv, CLI_PATH, 'serve', ...args], {
    cwd,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  const answered = new Promise<string>((resolve, reject) => {
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      if (stdout.includes('\n')) resolve(stdout.slice(0, stdout.indexOf('\n')));
    });
    void exited.then((code) =>
      reject(new Error(`serve exited (${code}) before answering; stderr: ${stderr}`)),
    );
  });
  child.stdin.write(
    `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: initializeParams() })}\n`,
  );
  const response = JSON.parse(await answered) as { id: number; result?: unknown };
  expect(response.id).toBe(1);
  expect(response.result).toBeDefined();
  child.stdin.end();
  expect(await exited, stderr).toBe(0);
  const trace = readTrace(file);
  expect(trace.complete, 'the trace ends with the process exit').toBe(true);
  return trace;
}

describe('reservoir serve over stdio', () => {
  it('serves a directory without a config file loading none of jose, rate-limiter-flexible, pg, better-sqlite3 or the config schema', async () => {
    const cwd = join(dir, 'plain');
    const loaded = (await modulesOfServe(cwd, ['docs', '--log-level', 'warn'], 'plain')).modules;
    // Files read: the bundle and its chunks only, no package from node_modules.
    expect(loaded.filter((path) => path.includes('/node_modules/'))).toEqual([]);
    expect(
      loaded.filter((path) => path.includes('/dist/') && !path.startsWith(distModule('cli/'))),
    ).toEqual([]);
    // Files read at start: the bundle's entry and the shared chunks esbuild cuts between the lazy
    // imports (documents, logging to clients, template tools each add one); the bytes below are the
    // bound that matters.
    expect(loaded.filter((path) => path.startsWith(distModule('cli/'))).length).toBeLessThanOrEqual(
      34,
    );
    expect(
      bytesOf(loaded.filter((path) => path.startsWith(distModule('cli/')))),
    ).toBeLessThanOrEqual(PLAIN_PATH_BYTES);

    const modules = unbundled(loaded);
    // The trace sees what serving loads (the next test shows it sees CommonJS required lazily too).
    expect(modules).toContain(CLI_PATH);
    expect(fromPackages(modules, ['@modelcontextprotocol/server'])).not.toEqual([]);
    expect(fromPackages(modules, ['commander'])).not.toEqual([]);
    // zod's English messages only; the MIME database waits for the first name that needs it.
    expect(
      modules.filter((path) => /zod\/v4\/locales\//.test(path) && !path.endsWith('/en.js')),
    ).toEqual([]);
    expect(fromPackages(modules, ['mime-types', 'mime-db'])).toEqual([]);

    expect(fromPackages(modules, OPTIONAL_PACKAGES)).toEqual([]);
    expect(modules).not.toContain(distModule(CONFIG_SCHEMA));
    expect(modules).not.toContain(distModule('http/auth.js'));
    expect(modules).not.toContain(distModule('server/reload.js'));
    // The files source is built through its catalog row; the rows load no other provider, nor any option schema.
    expect(modules).toContain(distModule('providers/catalog.js'));
    expect(modules).toContain(distModule('providers/files/source.js'));
    expect(modules.filter((path) => /\/dist\/providers\/(git|sql|http|s3)\//.test(path))).toEqual(
      [],
    );
    expect(modules.filter((path) => /\/dist\/providers\/[^/]+\/options\.js$/.test(path))).toEqual(
      [],
    );
    // Cluster mode (Redis, tracing) loads only with --redis / server.redis.
    expect(modules.filter((path) => path.includes('/dist/cluster/'))).toEqual([]);
  });

  it('loads the config schema and the rate limiter when the config file sets rate limits', async () => {
    const cwd = join(dir, 'configured');
    writeTree(cwd, {
      'reservoir.yaml': [
        'sources:',
        '  - type: files',
        '    root: docs',
        'server:',
        '  logLevel: warn',
        '  limits:',
        '    rateLimit:',
        '      requests: { perSecond: 100 }',
        '',
      ].join('\n'),
    });
    const modules = unbundled((await modulesOfServe(cwd, [], 'configured')).modules);
    expect(modules).toContain(distModule(CONFIG_SCHEMA));
    expect(modules).toContain(distModule('server/reload.js'));
    expect(fromPackages(modules, ['rate-limiter-flexible'])).not.toEqual([]);
    expect(
      fromPackages(modules, ['jose', 'pg', 'mysql2', 'better-sqlite3', 'better-sqlite3-13']),
    ).toEqual([]);
  });
});
