/**
 * Git blob reads: the git provider's long-lived `git cat-file --batch-command` process against a
 * spawn per read (`git cat-file -p <id>`, what a naive provider does), on a generated repository of
 * 2,000 blobs of 4 KiB (20 directories × 100 files, one commit, built under .bench/ or reused).
 * Prints reads/s for: spawn per read; the batch process with one read in flight and with 16; and
 * the provider's whole `read` (ref → commit → tree walk → blob → contents) with one in flight.
 * The target is the batch process at one in flight ≥ 10× the spawn-per-read rate.
 *
 * Usage: npm run build && node bench/sections/git.mjs   (or as a bench section)
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { fmtInt, fmtRatio, printTable } from '../lib/stats.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '../..');
const run = promisify(execFile);
const DIRS = 20;
const PER_DIR = 100;
const TARGET_RATIO = 10;

export async function gitSection(ctx = {}) {
  const progress = ctx.progress ?? ((text) => process.stderr.write(`${text}\n`));
  const target = ctx.target ?? (() => undefined);
  const benchDir = ctx.paths?.benchDir ?? join(repoRoot, '.bench');
  const seconds = (ctx.opts?.readMs ?? 1500) / 1000;
  const dist = join(ctx.paths?.repo ?? repoRoot, 'dist/providers/git');
  const { CatFile } = await import(pathToFileURL(join(dist, 'cat-file.js')).href);
  const { gitEnv } = await import(pathToFileURL(join(dist, 'exec.js')).href);
  const { gitProvider } = await import(pathToFileURL(join(dist, 'index.js')).href);

  const fixture = gitFixture(benchDir);
  progress(
    `git: repository ${fixture.reused ? 'reused' : 'built'} (${fmtInt(fixture.blobs.length)} blobs)`,
  );
  const gitDir = join(fixture.dir, '.git');
  const env = gitEnv({ GIT_DIR: gitDir });
  const ids = fixture.blobs.map((b) => b.id);
  const pick = (i) => ids[(i * 7919) % ids.length];

  /** Runs `once(i)` with `inFlight` concurrent loops for `seconds`; returns reads/s. */
  const rate = async (inFlight, once) => {
    let done = 0;
    const until = performance.now() + seconds * 1000;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: inFlight }, async (_, lane) => {
        for (let i = lane; performance.now() < until; i += inFlight) {
          await once(i);
          done += 1;
        }
      }),
    );
    return done / ((performance.now() - t0) / 1000);
  };

  const spawnRate = await rate(1, async (i) => {
    const { stdout } = await run('git', ['cat-file', '-p', pick(i)], {
      cwd: gitDir,
      env,
      encoding: 'buffer',
      maxBuffer: 1 << 20,
    });
    if (stdout.length !== 4096) throw new Error('spawned cat-file returned the wrong size');
  });
  progress(`git: spawn per read ${fmtInt(spawnRate)}/s`);

  const reader = new CatFile({ cwd: gitDir, env });
  let batch1;
  let batch16;
  try {
    const read = async (i) => {
      const got = await reader.contents(pick(i), 1 << 20);
      if (got?.data.length !== 4096) throw new Error('batch cat-file returned the wrong size');
    };
    await rate(1, read); // warm-up: process start, pack index
    batch1 = await rate(1, read);
    batch16 = await rate(16, read);
  } finally {
    reader.stop(true);
  }
  progress(`git: batch ${fmtInt(batch1)}/s (1 in flight), ${fmtInt(batch16)}/s (16 in flight)`);

  const provider = gitProvider({ path: fixture.dir, name: 'bench' });
  let providerRate;
  try {
    const signal = new AbortController().signal;
    const read = async (i) => {
      const blob = fixture.blobs[(i * 7919) % fixture.blobs.length];
      const result = await provider.read(`git://bench/main/${blob.path}`, { signal });
      if (result.contents[0].text.length !== 4096)
        throw new Error('provider read returned the wrong size');
    };
    await rate(1, read);
    providerRate = await rate(1, read);
  } finally {
    await provider.close();
  }

  printTable(
    'Git blob reads (4 KiB blobs, 2,000 in the repository)',
    ['method', 'reads/s', 'vs spawn'],
    [
      ['spawn per read (git cat-file -p)', fmtInt(spawnRate), '1.00×'],
      ['batch process, 1 in flight', fmtInt(batch1), fmtRatio(batch1, spawnRate)],
      ['batch process, 16 in flight', fmtInt(batch16), fmtRatio(batch16, spawnRate)],
      [
        'provider read (ref, tree walk, blob), 1 in flight',
        fmtInt(providerRate),
        fmtRatio(providerRate, spawnRate),
      ],
    ],
  );
  const ratio = batch1 / spawnRate;
  target(
    `git: batch blob reads ≥ ${TARGET_RATIO}× spawn per read`,
    fmtRatio(batch1, spawnRate),
    ratio >= TARGET_RATIO,
  );
}

/** A repository of DIRS × PER_DIR 4 KiB text blobs at BENCH/git-repo; reused when complete. */
function gitFixture(benchDir) {
  const dir = join(benchDir, 'git-repo');
  const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
  for (const key of Object.keys(env))
    if (key.startsWith('GIT_') && !key.startsWith('GIT_CONFIG_')) delete env[key];
  const git = (...args) =>
    execFileSync('git', args, { cwd: dir, env, encoding: 'utf8', maxBuffer: 64 << 20 }).trim();
  const listBlobs = () =>
    git('ls-tree', '-r', 'HEAD')
      .split('\n')
      .map((line) => {
        const [meta, path] = line.split('\t');
        return { id: meta.split(' ')[2], path };
      });
  if (existsSync(join(dir, '.git'))) {
    try {
      const blobs = listBlobs();
      if (blobs.length === DIRS * PER_DIR) return { dir, blobs, reused: true };
    } catch {
      // broken: rebuild
    }
    rmSync(dir, { recursive: true, force: true });
  }
  mkdirSync(dir, { recursive: true });
  git('init', '-q', '-b', 'main');
  git('config', 'user.name', 'Bench');
  git('config', 'user.email', 'bench@example.com');
  for (let d = 0; d < DIRS; d += 1) {
    const sub = join(dir, `d${String(d).padStart(2, '0')}`);
    mkdirSync(sub);
    for (let f = 0; f < PER_DIR; f += 1) {
      const line = `file ${d}/${f} `.padEnd(63, '.') + '\n';
      writeFileSync(join(sub, `f${String(f).padStart(3, '0')}.txt`), line.repeat(64));
    }
  }
  git('add', '-A');
  git('commit', '-q', '-m', 'bench fixture');
  return { dir, blobs: listBlobs(), reused: false };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  gitSection().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
