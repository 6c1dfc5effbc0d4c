/**
 * S3 provider throughput against a local S3 API server (s3rver, a node child on loopback — see
 * test/providers/s3-server-child.mjs), beside the files provider serving the same 10,000 objects
 * as files, in process through the Registry:
 *   - listing: every page of 1,000 through `Registry.listResources` (pages/s, keys/s), and the bare
 *     AWS SDK paging the same bucket with ListObjectsV2 + continuation tokens in the same run
 *     (target: Reservoir ≥ 80% of the bare SDK's keys/s);
 *   - reads: `Registry.read` of 256-byte objects at 1 and 16 in flight.
 * The S3 server shares the machine's CPU with the bench; numbers only.
 *
 * Usage: npm run build && node bench/sections/s3.mjs   (or as a bench section: --only s3)
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { fmtInt, median, printTable } from '../lib/stats.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '../..');
const KEYS = 10_000;
const PAGE = 1000;
const BODY = 'x'.repeat(255) + '\n';
const keyOf = (i) => `k/${String(i).padStart(5, '0')}.txt`;

async function startS3(dir) {
  const child = spawn(
    process.execPath,
    ['--openssl-legacy-provider', join(repo, 'test/providers/s3-server-child.mjs'), dir],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const [line] = await once(createInterface({ input: child.stdout }), 'line');
  return { child, endpoint: `http://127.0.0.1:${JSON.parse(line).port}` };
}

async function listAll(registry, signal) {
  let cursor;
  let pages = 0;
  let keys = 0;
  const skipped = [];
  do {
    const page = await registry.listResources(cursor, { signal }, { limit: PAGE });
    pages += 1;
    keys += page.items.length;
    skipped.push(...(page.skipped ?? []).map((s) => s.reason));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return { pages, keys, skipped };
}

// Each read has its own signal, as each MCP request has: one signal shared by 16 reads in flight
// gets an abort listener per read from the AWS SDK, and Node warns past ten.
async function readLoop(registry, uris, inFlight, ms) {
  const deadline = performance.now() + ms;
  let done = 0;
  const loop = async () => {
    while (performance.now() < deadline) {
      const result = await registry.read(uris[(done * 7919) % uris.length], {
        signal: new AbortController().signal,
      });
      if (result.contents.length !== 1) throw new Error('unexpected read result');
      done += 1;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, loop));
  return (done / ms) * 1000;
}

export async function s3Section(ctx = {}) {
  const progress = ctx.progress ?? ((text) => process.stderr.write(`${text}\n`));
  const target = ctx.target ?? (() => undefined);
  const readMs = ctx.opts?.readMs ?? 1500;
  const reps = ctx.opts?.reps ?? 3;
  const dist = (path) => pathToFileURL(join(ctx.paths?.repo ?? repo, 'dist', path)).href;
  const { Registry } = await import(dist('core/registry.js'));
  const { sdkTemplateEngine } = await import(dist('mcp/templates.js'));
  const { s3Provider } = await import(dist('providers/s3/index.js'));
  const { filesProvider } = await import(dist('providers/files/index.js'));
  const { S3Client, CreateBucketCommand, PutObjectCommand, ListObjectsV2Command } =
    await import('@aws-sdk/client-s3');

  const work = mkdtempSync(join(tmpdir(), 'reservoir-bench-s3-'));
  const { child, endpoint } = await startS3(join(work, 's3'));
  const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
  const client = new S3Client({
    endpoint,
    forcePathStyle: true,
    region: 'us-east-1',
    credentials: { ...credentials },
  });
  try {
    progress(`s3: filling the bucket and the tree with ${fmtInt(KEYS)} objects`);
    await client.send(new CreateBucketCommand({ Bucket: 'bench-bucket' }));
    let next = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < KEYS)
          await client.send(
            new PutObjectCommand({ Bucket: 'bench-bucket', Key: keyOf(next++), Body: BODY }),
          );
      }),
    );
    const tree = join(work, 'tree');
    mkdirSync(join(tree, 'k'), { recursive: true });
    for (let i = 0; i < KEYS; i++) writeFileSync(join(tree, keyOf(i)), BODY);

    const signal = new AbortController().signal;
    // The per-source list budget (2 s by default) guards a live server against a stuck source; on this
    // shared machine under load a 1,000-key s3rver page can outlast it and the page would be skipped,
    // which measures the load, not the lister. Throughput is measured with a budget it never meets.
    const budget = { sourceListTimeoutMs: 60_000 };
    const s3 = new Registry({ templateEngine: sdkTemplateEngine, pageSize: PAGE, ...budget }).mount(
      s3Provider({
        bucket: 'bench-bucket',
        endpoint,
        forcePathStyle: true,
        region: 'us-east-1',
        accessKeyId: 'S3RVER',
        secretAccessKey: 'S3RVER',
        allowPrivateNetworks: true,
      }),
    );
    const files = new Registry({
      templateEngine: sdkTemplateEngine,
      pageSize: PAGE,
      ...budget,
    }).mount(filesProvider({ root: tree, gitignore: false }));
    const bare = async () => {
      let token;
      let pages = 0;
      let keys = 0;
      do {
        const page = await client.send(
          new ListObjectsV2Command({
            Bucket: 'bench-bucket',
            MaxKeys: PAGE,
            ...(token === undefined ? {} : { ContinuationToken: token }),
          }),
        );
        pages += 1;
        keys += page.Contents?.length ?? 0;
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token !== undefined);
      return { pages, keys };
    };
    const timed = async (run, who = 'lister') => {
      const start = performance.now();
      const cpu = process.cpuUsage();
      const { pages, keys, skipped = [] } = await run();
      const used = process.cpuUsage(cpu);
      // A page the registry skipped (the source ran past its list time budget on a loaded machine) says so.
      if (keys !== KEYS)
        throw new Error(
          `${who} listed ${keys} keys, expected ${KEYS}${skipped.length > 0 ? ` (skipped: ${skipped.join('; ')})` : ''}`,
        );
      return {
        pages,
        seconds: (performance.now() - start) / 1000,
        cpuMs: (used.user + used.system) / 1000,
      };
    };
    const runs = { s3: [], bare: [], files: [] };
    await timed(() => listAll(s3, signal)); // warm-up
    await timed(bare);
    await timed(() => listAll(files, signal));
    for (let rep = 0; rep < reps; rep++) {
      // Interleaved, so the S3 server's and the machine's drift hits each alike.
      runs.bare.push(await timed(bare, 'the bare SDK'));
      runs.s3.push(await timed(() => listAll(s3, signal), 'the s3 provider'));
      runs.files.push(await timed(() => listAll(files, signal), 'the files provider'));
      progress(`s3: listing rep ${rep + 1}/${reps}`);
    }
    const rate = (list) => median(list.map((r) => r.pages / r.seconds));
    // Client CPU per full listing: the bench process's own work (SDK parsing, and for Reservoir the
    // registry and provider on top), which the shared machine's load moves far less than wall time.
    const cpu = (list) => fmtInt(Math.round(median(list.map((r) => r.cpuMs))));
    const listRows = [
      [
        'Reservoir s3 provider (Registry.listResources)',
        fmtInt(Math.round(rate(runs.s3))),
        fmtInt(Math.round(rate(runs.s3) * PAGE)),
        cpu(runs.s3),
      ],
      [
        'bare AWS SDK ListObjectsV2 + continuation tokens',
        fmtInt(Math.round(rate(runs.bare))),
        fmtInt(Math.round(rate(runs.bare) * PAGE)),
        cpu(runs.bare),
      ],
      [
        'Reservoir files provider, same 10,000 objects as files',
        fmtInt(Math.round(rate(runs.files))),
        fmtInt(Math.round(rate(runs.files) * PAGE)),
        cpu(runs.files),
      ],
    ];
    printTable(
      `Listing ${fmtInt(KEYS)} keys in pages of ${PAGE} (median of ${reps}), local s3rver`,
      ['lister', 'pages/s', 'keys/s', 'client CPU ms'],
      listRows,
    );
    const ratios = runs.s3.map((r, i) => runs.bare[i].seconds / r.seconds).sort((a, b) => a - b);
    progress(
      `s3: Reservoir/bare per rep: ${ratios.map((r) => `${Math.round(r * 100)}%`).join(', ')}`,
    );
    const ratio = rate(runs.s3) / rate(runs.bare);
    target(
      'Listing 10,000 keys through Reservoir ≥ 80% of the bare AWS SDK paging the same server',
      `${Math.round(ratio * 100)}%`,
      ratio >= 0.8,
    );

    const uris = Array.from({ length: KEYS }, (_, i) => `s3://bench-bucket/${keyOf(i)}`);
    const fileUris = Array.from(
      { length: KEYS },
      (_, i) => pathToFileURL(join(tree, keyOf(i))).href,
    );
    const readRows = [];
    for (const inFlight of [1, 16]) {
      await readLoop(s3, uris, inFlight, Math.min(300, readMs));
      const s3Rate = await readLoop(s3, uris, inFlight, readMs);
      await readLoop(files, fileUris, inFlight, Math.min(300, readMs));
      const filesRate = await readLoop(files, fileUris, inFlight, readMs);
      readRows.push(
        ['s3 provider', String(inFlight), fmtInt(Math.round(s3Rate))],
        ['files provider', String(inFlight), fmtInt(Math.round(filesRate))],
      );
      progress(
        `s3: reads × ${inFlight}: s3 ${fmtInt(Math.round(s3Rate))}/s, files ${fmtInt(Math.round(filesRate))}/s`,
      );
    }
    printTable(
      `Reads of 256-byte objects (Registry.read), ${readMs / 1000} s per row, local s3rver`,
      ['provider', 'in flight', 'reads/s'],
      readRows,
    );
    await s3.close();
    await files.close();
  } finally {
    client.destroy();
    child.stdin.end();
    child.kill('SIGKILL');
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  s3Section().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
