/**
 * Scale (issue 30, item 2) — a bucket of a million objects, over stdio through `reservoir serve`:
 * the S3 source lists a synthetic bucket (bench/lib/s3-synthetic.mjs: ListObjectsV2 answered from
 * keys made by index, so the store holds nothing and answers each page in O(page)) of 10,000,
 * 100,000 and 1,000,000 objects. Per size: the first page (at once, then the median of 15), full
 * paging (resources/s and the server's CPU per resource), RSS idle, after the listing and 10 s
 * later; the growth exponent of the first page over the three sizes; and, as the ceiling, the bare
 * AWS SDK paging the same bucket in the bench's own process in the same run.
 * A 1M-row table is the sql section's (keyset pages at page 1 and page 5,000 of 1,000,000 rows).
 *
 * Usage: npm run bench -- --only scale-bucket
 */
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { cpuMicros } from '../lib/cpu.mjs';
import { memoryOf, spawnTracked, stopChild } from '../lib/proc.mjs';
import { StdioRpc } from '../lib/stdio-client.mjs';
import { fmtInt, fmtMB, fmtMs, median, printTable } from '../lib/stats.mjs';
import { growthExponent } from './scale.mjs';

const SIZES = [10_000, 100_000, 1_000_000];
const FIRST_PAGE_SAMPLES = 15;
const BUCKET = 'bench-bucket';

async function startBucket(paths, count) {
  const child = spawnTracked(process.execPath, [
    join(paths.repo, 'bench/lib/s3-synthetic.mjs'),
    BUCKET,
    String(count),
  ]);
  const [line] = await once(createInterface({ input: child.stdout }), 'line');
  return { child, endpoint: `http://127.0.0.1:${JSON.parse(line).port}` };
}

function serveBucket(paths, work, endpoint) {
  const config = join(work, `bucket-${Date.now()}.yaml`);
  writeFileSync(
    config,
    [
      'sources:',
      '  - type: s3',
      `    bucket: ${BUCKET}`,
      `    endpoint: ${endpoint}`,
      '    forcePathStyle: true',
      '    region: us-east-1',
      '    accessKeyId: ${BENCH_S3_KEY}',
      '    secretAccessKey: ${BENCH_S3_SECRET}',
      '    allowPrivateNetworks: true',
      '',
    ].join('\n'),
  );
  return new StdioRpc(
    process.execPath,
    [paths.cli, 'serve', '--config', config, '--no-search', '--log-level', 'warn'],
    { env: { ...process.env, BENCH_S3_KEY: 'bench', BENCH_S3_SECRET: 'bench-secret' } },
  );
}

/** Pages through every resource; the time taken. Each URI must come once, all of them. */
async function pageAll(rpc, expected) {
  const seen = new Set();
  let cursor;
  const t0 = performance.now();
  do {
    const result = await rpc.request(
      'resources/list',
      cursor === undefined ? {} : { cursor },
      120_000,
    );
    if (result._meta?.['reservoir/skippedSources'] !== undefined)
      throw new Error('resources/list: the bucket ran past its list budget');
    for (const r of result.resources) {
      if (seen.has(r.uri)) throw new Error(`resources/list repeated ${r.uri}`);
      seen.add(r.uri);
    }
    cursor = result.nextCursor;
  } while (cursor !== undefined);
  const ms = performance.now() - t0;
  if (seen.size !== expected)
    throw new Error(`resources/list paged ${seen.size} objects, expected ${expected}`);
  return ms;
}

/** The bare AWS SDK paging the same bucket, 1,000 keys a request: keys/s. */
async function bareSdkRate(endpoint, expected) {
  const { S3Client, ListObjectsV2Command } = await import('@aws-sdk/client-s3');
  const client = new S3Client({
    endpoint,
    forcePathStyle: true,
    region: 'us-east-1',
    credentials: { accessKeyId: 'bench', secretAccessKey: 'bench-secret' },
  });
  try {
    let token;
    let keys = 0;
    const t0 = performance.now();
    do {
      const page = await client.send(
        new ListObjectsV2Command({
          Bucket: BUCKET,
          MaxKeys: 1000,
          ...(token === undefined ? {} : { ContinuationToken: token }),
        }),
      );
      keys += page.Contents?.length ?? 0;
      token = page.IsTruncated === true ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
    if (keys !== expected) throw new Error(`bare SDK listed ${keys} keys, expected ${expected}`);
    return keys / ((performance.now() - t0) / 1000);
  } finally {
    client.destroy();
  }
}

export async function scaleBucketSection(ctx) {
  const { paths } = ctx;
  const work = mkdtempSync(join(tmpdir(), 'reservoir-bench-bucket-'));
  const rows = [];
  const firsts = [];
  const results = {};
  try {
    for (const count of SIZES) {
      const bucket = await startBucket(paths, count);
      const rpc = serveBucket(paths, work, bucket.endpoint);
      try {
        await rpc.initialize(60_000);
        const samples = [];
        for (let i = 0; i <= FIRST_PAGE_SAMPLES; i += 1) {
          const t0 = performance.now();
          const page = await rpc.request('resources/list', {}, 60_000);
          samples.push(performance.now() - t0);
          if (!Array.isArray(page.resources) || page.resources.length === 0)
            throw new Error('resources/list: empty first page');
        }
        const first = median(samples.slice(1));
        firsts.push(first);
        const idle = memoryOf(rpc.pid).rss;
        const cpu0 = cpuMicros(rpc.pid);
        const ms = await pageAll(rpc, count);
        const cpuPer = (cpuMicros(rpc.pid) - cpu0) / count;
        const after = memoryOf(rpc.pid).rss;
        await new Promise((resolve) => setTimeout(resolve, 10_000));
        const settled = memoryOf(rpc.pid).rss;
        const bare = await bareSdkRate(bucket.endpoint, count);
        const rate = count / (ms / 1000);
        results[count] = { first, rate, after, idle, settled, bare };
        rows.push([
          fmtInt(count),
          fmtMs(samples[0]),
          fmtMs(first),
          fmtMs(ms, 0),
          fmtInt(rate),
          `${cpuPer.toFixed(1)} µs`,
          fmtInt(bare),
          `${(rate / bare).toFixed(2)}×`,
          fmtMB(idle),
          fmtMB(after),
          fmtMB(settled),
        ]);
      } finally {
        await rpc.close();
        await stopChild(bucket.child);
      }
      ctx.progress(`scale-bucket: ${fmtInt(count)} objects done`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const exponent = growthExponent(SIZES, firsts);
  printTable(
    `Scale 4. a bucket of up to a million objects over stdio (S3 source, synthetic ListObjectsV2 store; first-page growth exponent 10k → 1M: ${exponent.toFixed(2)})`,
    [
      'objects',
      'first page (1st)',
      'first page (median)',
      'full listing',
      'resources/s',
      'server CPU per resource',
      'bare AWS SDK keys/s',
      'of bare',
      'RSS idle',
      'RSS after listing',
      'RSS 10 s later',
    ],
    rows,
  );
  const m = results[1_000_000];
  ctx.target('scale: 1M-object bucket first page ≤ 30 ms', fmtMs(m.first), m.first <= 30);
  ctx.target(
    'scale: bucket first-page growth exponent ≤ 0.1',
    exponent.toFixed(2),
    exponent <= 0.1,
  );
  ctx.target(
    'scale: 1M-object bucket paging ≥ 50,000 resources/s',
    fmtInt(m.rate),
    m.rate >= 50_000,
  );
  ctx.target(
    'scale: 1M-object bucket RSS after listing ≤ 150 MB',
    fmtMB(m.after),
    m.after <= 150 * 1024 * 1024,
  );
}
