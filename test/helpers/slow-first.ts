/**
 * The order test files start in. Without timings of its own (a clean checkout, as in CI) vitest
 * starts the largest files first, but size is a poor guide here: the split alias matrix, two
 * mid-sized files that each keep a worker busy for minutes, started last and were the last two
 * running. The files listed below, the longest of full runs on the 2-core machines under load
 * (slowest first), start before all others; the rest keep vitest's own order. A stale list only
 * costs time, never a result.
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node';

export const SLOW_FIRST: readonly string[] = [
  'test/providers/s3.test.ts',
  'test/skills/s3.test.ts',
  'test/skills/skills.test.ts',
  'test/search/broad.test.ts',
  'test/conformance/inspector.test.ts',
  'test/skills/validation.test.ts',
  'test/e2e/check-before-open.test.ts',
  'test/e2e/setup.test.ts',
  'test/security/alias-matrix-2025.test.ts',
  'test/security/alias-matrix-2026.test.ts',
  'test/skills/live.test.ts',
  'test/e2e/s3.test.ts',
  'test/e2e/drain.test.ts',
  'test/security/reserved-paths.test.ts',
  'test/e2e/sql-limits.test.ts',
  'test/e2e/defaults.test.ts',
  'test/e2e/sql-mysql-connect-failures.test.ts',
  'test/explorer/mcp-app.test.ts',
  'test/e2e/paging-churn.test.ts',
  'test/explorer/opened-urls.test.ts',
  'test/search/service.test.ts',
  'test/e2e/source-outage-local.test.ts',
  'test/e2e/operator-defaults.test.ts',
  'test/config/reload-sources.test.ts',
  'test/e2e/secrets.test.ts',
  'test/package/package.test.ts',
];

export class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification): number => {
      const index = SLOW_FIRST.findIndex((path) => file.moduleId.endsWith(`/${path}`));
      return index === -1 ? SLOW_FIRST.length : index;
    };
    // Array.prototype.sort is stable: files off the list keep vitest's order among themselves.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
