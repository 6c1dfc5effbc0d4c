/**
 * Template matching under hostile input, and template read throughput. Prints numbers only.
 *
 *   - matching: each 64 KiB hostile URI against every template of a files root, through the
 *     server's template engine directly (`sdkTemplateEngine.compile(t).match(uri)`, all templates)
 *     and through `Registry.read` in process (routing, matching, and the refusal that follows):
 *     p50 / p99 / max milliseconds per URI;
 *   - for contrast, the SDK's `UriTemplate.match` alone on the same URIs (its regular expression);
 *   - throughput: reads/s of a 4 KiB file via its `{+path}` URI and via `{?lines}`, in process
 *     (Registry.read) and over stdio (the built CLI, 16 requests in flight).
 *
 * Usage: npm run build && node bench/sections/templates-hostile.mjs   (or as a bench section)
 */
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { UriTemplate } from '@modelcontextprotocol/server';
import { readFixture } from '../lib/fixtures.mjs';
import { closedLoop, JsonRpcError, StdioRpc } from '../lib/stdio-client.mjs';
import { fmtInt, fmtMs, percentile, printTable } from '../lib/stats.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '../..');
const SAMPLES = 200;

/** 64 KiB URIs built to make a backtracking matcher work hard against `{+path}` and `{+path}{?lines}`. */
export function hostileUris(prefix) {
  const fill = (s) => (prefix + s.repeat(Math.ceil(65_536 / s.length))).slice(0, 65_535);
  return {
    "'a/' × 32K": fill('a/'),
    "'%' run": fill('%'),
    "'%2e%2e/' repeated": fill('%2e%2e/'),
    "'?lines=' then '&' run": `${prefix}x?lines=${'&'.repeat(65_536)}`.slice(0, 65_535),
    "'?lines=a' repeated, then '&'": `${fill('?lines=a').slice(0, 65_534)}&`,
    "'?lines=1-' repeated": fill('?lines=1-'),
    "'?' run": fill('?'),
    "'#' run": fill('#'),
    "'&lines=1' repeated": `${prefix}a?lines=1${'&lines=1'.repeat(8_000)}`.slice(0, 65_535),
  };
}

function stats(samples) {
  return [
    fmtMs(percentile(samples, 50)),
    fmtMs(percentile(samples, 99)),
    fmtMs(Math.max(...samples)),
  ];
}

async function timeEach(fn, samples = SAMPLES) {
  for (let i = 0; i < 5; i += 1) await fn(); // warm-up
  const out = [];
  for (let i = 0; i < samples; i += 1) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out;
}

export async function templatesHostileSection(ctx = {}) {
  const progress = ctx.progress ?? ((text) => process.stderr.write(`${text}\n`));
  const benchDir = ctx.paths?.benchDir ?? join(repo, '.bench');
  const cli = ctx.paths?.cli ?? join(repo, 'dist/cli/index.js');
  const dist = (path) => pathToFileURL(join(repo, 'dist', path)).href;
  const { Registry } = await import(dist('core/registry.js'));
  const { sdkTemplateEngine } = await import(dist('mcp/templates.js'));
  const { filesProvider } = await import(dist('providers/files/index.js'));

  mkdirSync(benchDir, { recursive: true });
  const fixture = ctx.fixture ?? readFixture(benchDir);
  const provider = filesProvider({ root: fixture.dir });
  const registry = new Registry({ templateEngine: sdkTemplateEngine }).mount(provider);
  const signal = new AbortController().signal;
  const templates = provider.templates().map((t) => t.uriTemplate);
  const compiled = templates.map((t) => sdkTemplateEngine.compile(t));
  const sdk = templates.map((t) => new UriTemplate(t));
  try {
    const rows = [];
    const all = { engine: [], read: [], sdk: [] };
    for (const [label, uri] of Object.entries(hostileUris(provider.root))) {
      const engine = await timeEach(() => {
        for (const c of compiled) c.match(uri);
      });
      const read = await timeEach(() =>
        registry.read(uri, { signal }).then(
          () => undefined,
          () => undefined,
        ),
      );
      const bare = await timeEach(() => {
        for (const t of sdk) t.match(uri);
      }, 10);
      all.engine.push(...engine);
      all.read.push(...read);
      all.sdk.push(...bare);
      rows.push([label, ...stats(engine), ...stats(read), fmtMs(Math.max(...bare))]);
    }
    rows.push(['all', ...stats(all.engine), ...stats(all.read), fmtMs(Math.max(...all.sdk))]);
    printTable(
      `Template matching, 64 KiB hostile URIs × ${templates.length} templates (${SAMPLES} samples each)`,
      [
        'URI',
        'engine p50',
        'engine p99',
        'engine max',
        'Registry.read p50',
        'p99',
        'max',
        'SDK regex max',
      ],
      rows,
    );

    const small = pathToFileURL(fixture.file).href;
    const ranged = `${small}?lines=1-10`;
    const inProcess = async (uri) => {
      const r = await closedLoop(() => registry.read(uri, { signal }), {
        concurrency: 1,
        durationMs: 1_000,
        maxRequests: 2_000_000,
      });
      return r;
    };
    const tRows = [];
    for (const [label, uri] of [
      ['{+path}', small],
      ['{+path}{?lines} (1-10)', ranged],
    ]) {
      const r = await inProcess(uri);
      tRows.push([
        `in process, ${label}`,
        fmtInt(r.rate),
        fmtMs(percentile(r.latencies, 50)),
        fmtMs(percentile(r.latencies, 99)),
      ]);
    }
    progress('templates: in-process throughput done');
    const rpc = new StdioRpc(process.execPath, [cli, 'serve', fixture.dir]);
    try {
      await rpc.initialize();
      for (const [label, uri] of [
        ['{+path}', small],
        ['{+path}{?lines} (1-10)', ranged],
      ]) {
        const call = async () => {
          const { message } = await rpc.send('resources/read', { uri });
          if (message.error !== undefined) throw new JsonRpcError('resources/read', message.error);
        };
        await closedLoop(call, { concurrency: 16, durationMs: 300 });
        const r = await closedLoop(call, { concurrency: 16, durationMs: 1_500 });
        tRows.push([
          `stdio, 16 in flight, ${label}`,
          fmtInt(r.rate),
          fmtMs(percentile(r.latencies, 50)),
          fmtMs(percentile(r.latencies, 99)),
        ]);
      }
    } finally {
      await rpc.close();
    }
    printTable('Template read throughput, 4 KiB file', ['how', 'reads/s', 'p50', 'p99'], tRows);
  } finally {
    await registry.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  templatesHostileSection().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
