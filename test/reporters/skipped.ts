/**
 * A vitest reporter that ends every run by saying what it skipped and why: each test file with
 * skipped tests and how many, and each external service whose URL was not given (so its tests did
 * not run) with the variable to set. `npm test` on a laptop without the services runs everything
 * else and says so.
 */
import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/** The services tests run against when their URL is set (see README, "Running the tests"). */
export const SERVICES = [
  {
    variable: 'RESERVOIR_TEST_PG',
    what: 'PostgreSQL',
    example: 'postgres://postgres@127.0.0.1:5432/test',
  },
  {
    variable: 'RESERVOIR_TEST_MYSQL',
    what: 'MySQL / MariaDB',
    example: 'mysql://root@127.0.0.1:3306/test',
  },
] as const;

export default class SkippedReporter implements Reporter {
  onTestRunEnd(testModules: readonly TestModule[]): void {
    const skipped = new Map<string, number>();
    for (const module of testModules) {
      let count = 0;
      for (const test of module.children.allTests())
        if (test.result().state === 'skipped') count += 1;
      if (count > 0) skipped.set(relative(process.cwd(), module.moduleId), count);
    }
    const unset = SERVICES.filter((service) => (process.env[service.variable] ?? '') === '');
    if (skipped.size === 0 && unset.length === 0) return;
    const lines = ['', 'Skipped:'];
    for (const [file, count] of [...skipped].sort())
      lines.push(`  ${file}: ${count} test${count === 1 ? '' : 's'}`);
    if (skipped.size === 0) lines.push('  no tests');
    for (const service of unset) {
      lines.push(
        `  ${service.variable} is not set: tests that need ${service.what} did not run (e.g. ${service.variable}=${service.example})`,
      );
    }
    lines.push(
      '  Other skips say why in their own output (e.g. no openssl, no shell to parse a completion script).',
      '',
    );
    process.stdout.write(`${lines.join('\n')}\n`);
  }
}
