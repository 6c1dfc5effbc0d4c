// Importing the library loads no optional heavyweight: the database drivers and the native file
// watcher are loaded on first use, so an embedder that serves only files pays for none of them.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, REPO_ROOT } from '../helpers/build.js';

describe('the library entry point', () => {
  beforeAll(() => ensureBuilt());

  it('loads none of pg, better-sqlite3 or @parcel/watcher when imported', () => {
    const script = `
      import { createRequire } from 'node:module';
      const lib = await import('mcp-reservoir');
      if (typeof lib.createReservoir !== 'function') throw new Error('no createReservoir export');
      const loaded = Object.keys(createRequire(import.meta.url).cache);
      console.log(JSON.stringify(loaded.filter((p) => /node_modules\\/(pg|pg-cursor|better-sqlite3|@parcel\\/watcher)\\//.test(p))));
    `;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(JSON.parse(out.trim())).toEqual([]);
  });

  it('exports only named values (no default export)', async () => {
    const lib = (await import(fileURLToPath(new URL('../../dist/index.js', import.meta.url)))) as Record<string, unknown>;
    expect(lib['default']).toBeUndefined();
    expect(Object.keys(lib).length).toBeGreaterThan(20);
  });
});
