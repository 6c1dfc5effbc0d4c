// Importing the library loads no optional heavyweight: the database drivers, the native file
// watcher, OAuth (jose) and the rate limiter are loaded on first use, so an embedder that serves
// only files pays for none of them.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, REPO_ROOT } from '../helpers/build.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';
import { fromPackages, readTrace, traced } from './module-trace.js';

describe('the library entry point', () => {
  let dir: string;
  beforeAll(async () => {
    await ensureBuilt();
    dir = makeTempDir();
  });
  afterAll(() => removeTree(dir));

  it('loads none of pg, better-sqlite3 or @parcel/watcher when imported', () => {
    const script = `
      import { createRequire } from 'node:module';
      const lib = await import('mcp-reservoir');
      if (typeof lib.createReservoir !== 'function') throw new Error('no createReservoir export');
      const loaded = Object.keys(createRequire(import.meta.url).cache);
      console.log(JSON.stringify(loaded.filter((p) => /node_modules\\/(pg|pg-cursor|better-sqlite3|@parcel\\/watcher)\\//.test(p))));
    `;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    });
    expect(JSON.parse(out.trim())).toEqual([]);
  });

  it('loads neither jose nor rate-limiter-flexible (nor any database driver, nor the AWS SDK) when imported', () => {
    const file = join(dir, 'import.trace');
    const { execArgv, env } = traced(file);
    const script = `const lib = await import('mcp-reservoir'); if (typeof lib.createAuthenticator !== 'function') throw new Error('no createAuthenticator export');`;
    execFileSync(process.execPath, [...execArgv, '--input-type=module', '-e', script], {
      cwd: REPO_ROOT,
      env,
      encoding: 'utf8',
    });
    const { modules, complete } = readTrace(file);
    expect(complete).toBe(true);
    expect(fromPackages(modules, ['@modelcontextprotocol/server'])).not.toEqual([]);
    expect(
      fromPackages(modules, [
        'jose',
        'rate-limiter-flexible',
        'pg',
        'mysql2',
        'better-sqlite3',
        'better-sqlite3-13',
        '@parcel/watcher',
        'ioredis',
        '@opentelemetry/api',
        '@aws-sdk/client-s3',
      ]),
    ).toEqual([]);
  });

  // Imported by a plain Node process, as a user's code imports it: through the test runner's module
  // graph the same import transforms every module of the package first (30 s at load 15).
  it('exports only named values (no default export)', () => {
    const script = `const lib = await import('mcp-reservoir'); process.stdout.write(JSON.stringify(Object.keys(lib)));`;
    const names = JSON.parse(
      execFileSync(process.execPath, ['--input-type=module', '-e', script], {
        cwd: REPO_ROOT,
        encoding: 'utf8',
      }),
    ) as string[];
    expect(names).not.toContain('default');
    expect(names.length).toBeGreaterThan(20);
  });
});
