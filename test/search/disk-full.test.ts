// Issue 24, item 11: a full disk while the index is written (SQLITE_FULL, for real: the state
// directory on a tiny tmpfs) makes `reservoir index` exit non-zero with a message naming the
// failure, and the server marks its index partial: search_resources says the hits are incomplete.
// Needs root to mount a tmpfs; skipped (saying so) otherwise.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli } from '../helpers/build.js';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { serveCli, type Served } from '../e2e/serve-cli.js';

let base: string;
let root: string;
const mounts: string[] = [];
let mountable = false;

/** A fresh tmpfs of `size` bytes, or undefined when this process may not mount one. */
function tinyDisk(name: string, size: number): string | undefined {
  const dir = join(base, name);
  mkdirSync(dir);
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'ignore' });
  } catch {
    return undefined;
  }
  mounts.push(dir);
  return dir;
}

beforeAll(async () => {
  await ensureBuilt();
  base = makeTempDir('reservoir-disk-full-');
  root = join(base, 'root');
  // Far more distinct words than the disk can index: about 3 MB of text.
  const files: Record<string, string> = { 'first.md': 'platypus first\n' };
  for (let i = 0; i < 300; i += 1)
    files[`docs/${String(i).padStart(3, '0')}.txt`] = Array.from(
      { length: 800 },
      () => `w${randomBytes(5).toString('hex')}`,
    ).join(' ');
  writeTree(root, files);
  mountable = tinyDisk('probe', 64 * 1024) !== undefined;
});

afterAll(() => {
  for (const dir of mounts) {
    try {
      execFileSync('umount', [dir], { stdio: 'ignore' });
    } catch {
      // best effort
    }
  }
  removeTree(base);
});

describe('a full disk under the search index', () => {
  it('makes `reservoir index` exit 1, saying the index is partial and why', async (context) => {
    if (!mountable) context.skip(); // cannot mount a tmpfs here (not root)
    const state = tinyDisk('index-state', 512 * 1024)!;
    const run = await runCli(['index', root, '--state-dir', state]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /search index .*index-[^ ]*\.sqlite is partial: writing it failed \(SQLITE_FULL: database or disk is full\)/,
    );
  });

  it('makes the server answer searches marked incomplete, naming the failure', async (context) => {
    if (!mountable) context.skip();
    const state = tinyDisk('serve-state', 512 * 1024)!;
    let served: Served | undefined;
    try {
      served = await serveCli(
        { transport: 'stdio', era: '2026' },
        { args: [root, '--state-dir', state] },
      );
      const client: Client = served.client;
      const deadline = Date.now() + 60_000;
      let page: { indexing?: unknown; incomplete?: { reason: string } } & Record<string, unknown>;
      let text: string;
      do {
        const result = (await client.callTool({
          name: 'search_resources',
          arguments: { query: 'platypus' },
        })) as CallToolResult;
        expect(result.isError ?? false).toBe(false);
        page = result.structuredContent as typeof page;
        text = (result.content[0] as { text: string }).text;
      } while (
        (page.indexing !== undefined || page.incomplete === undefined) &&
        Date.now() < deadline
      );
      expect(page.incomplete?.reason).toMatch(/SQLITE_FULL/);
      expect(text).toContain('The index is incomplete');
    } finally {
      await served?.close();
    }
  });
});
