import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Test files run in parallel forks. Vitest's default (one fewer than the cores) is a single worker
 * on the 2-core CI machines, which runs all ~200 files one after another although most of their
 * time is spent waiting on spawned servers, sockets and databases, not on the CPU. At least two
 * workers, or RESERVOIR_TEST_WORKERS when set (e.g. 1 to debug, 3–4 on an idle 2-core machine).
 */
const workers = Number(
  process.env['RESERVOIR_TEST_WORKERS'] ?? Math.max(2, availableParallelism()),
);

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: Number.isSafeInteger(workers) && workers > 0 ? workers : 2,
    reporters: ['default', './test/reporters/skipped.ts'],
  },
});
