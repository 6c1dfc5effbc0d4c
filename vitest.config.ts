import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { SlowFirstSequencer } from './test/helpers/slow-first.js';

/**
 * Test files run in parallel forks. Vitest's default (one fewer than the cores) is a single worker
 * on the 2-core CI machines, which runs all ~250 files one after another although most of their
 * time is spent waiting on spawned servers, sockets and databases, not on the CPU: a whole run
 * leaves the two cores of a CI machine mostly idle with two workers. So at least four workers (one per core on
 * larger machines), or RESERVOIR_TEST_WORKERS when set (e.g. 1 to debug).
 */
const workers = Number(
  process.env['RESERVOIR_TEST_WORKERS'] ?? Math.max(4, availableParallelism()),
);

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Ceilings for a hung test or hook, never speed claims: with four workers on two cores at
    // load 8 and more, a test running a few hundred requests or a handful of CLIs took 30–48 s.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    sequence: { sequencer: SlowFirstSequencer },
    maxWorkers: Number.isSafeInteger(workers) && workers > 0 ? workers : 4,
    reporters: ['default', './test/reporters/skipped.ts'],
  },
});
