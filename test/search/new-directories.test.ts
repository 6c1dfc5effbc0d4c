// A file created in a just-created nested directory, and a whole subtree moved into the root, are
// announced (list_changed) and found by search like any other change — through the real SDK client
// over stdio — and the index catches up by reconciling only the new subtree, never the whole source
// (its debug log says which it reconciled).
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { Cleanup, connectStdio, type StdioConnection } from '../helpers/clients.js';
import { eventually } from '../helpers/eventually.js';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { Recorder } from '../subscriptions/harness.js';
import { textOf } from '../tools/helpers.js';

const cleanup = new Cleanup();
let root: string;
let outside: string;
let server: StdioConnection;
let recorder: Recorder;

async function found(client: Client, query: string): Promise<string[]> {
  const result = (await client.callTool({
    name: 'search_resources',
    arguments: { query },
  })) as CallToolResult;
  expect(result.isError ?? false, textOf(result)).toBe(false);
  return (result.structuredContent as { hits: { uri: string }[] }).hits.map((h) => h.uri);
}

const until = (query: string, count: number): Promise<string[]> =>
  eventually(
    async () => {
      const uris = await found(server.client, query);
      return uris.length === count ? uris.sort() : undefined;
    },
    `${count} hits for ${query}`,
    { deadlineMs: 30_000, stepMs: 25 },
  );

const sourceReconciles = (): number =>
  server
    .stderr()
    .split('\n')
    .filter((line) => line.includes('search index: source reconciled')).length;
const subtreeReconciles = (): string[] =>
  server
    .stderr()
    .split('\n')
    .filter((line) => line.includes('search index: subtree reconciled'));

beforeAll(async () => {
  await ensureBuilt();
  root = makeTempDir('reservoir-newdirs-');
  outside = makeTempDir('reservoir-newdirs-outside-');
  const state = makeTempDir('reservoir-newdirs-state-');
  cleanup.add(() => {
    removeTree(root);
    removeTree(outside);
    removeTree(state);
  });
  const files: Record<string, string> = {};
  for (let i = 0; i < 50; i += 1) files[`old/d${i % 5}/f${i}.md`] = `ordinary text ${i}\n`;
  writeTree(root, files);
  // A 2025-era client hears list changes from `initialized` on, without subscribing.
  server = await connectStdio(
    '2025',
    [root],
    ['--state-dir', state, '--log-level', 'debug'],
    cleanup,
  );
  recorder = new Recorder(server.client);
  // The index is built once the first search answers without `indexing`.
  await eventually(async () => {
    const result = (await server.client.callTool({
      name: 'search_resources',
      arguments: { query: 'ordinary' },
    })) as CallToolResult;
    return (result.structuredContent as { indexing?: unknown }).indexing === undefined;
  }, 'the index to be built');
});

afterAll(() => cleanup.run());

describe('new directories', () => {
  it('announce a file created in a new nested directory and make it searchable, reconciling only that subtree', async () => {
    const builds = sourceReconciles();
    const changes = recorder.listChanges();
    mkdirSync(join(root, 'fresh/a/b'), { recursive: true });
    writeFileSync(join(root, 'fresh/a/b/note.md'), 'a quokka appeared\n');
    expect(await until('quokka', 1)).toEqual([expect.stringMatching(/\/fresh\/a\/b\/note\.md$/)]);
    await eventually(() => recorder.listChanges() > changes, 'list_changed');
    expect(subtreeReconciles().some((line) => line.includes('/fresh/'))).toBe(true);
    expect(sourceReconciles()).toBe(builds);
  });

  it('make every file of a whole subtree moved into the root searchable, and nothing of it twice', async () => {
    const builds = sourceReconciles();
    writeTree(outside, {
      'tree/x.md': 'a wallaby hops\n',
      'tree/deep/y.md': 'another wallaby\n',
      'tree/deep/er/z.md': 'the last wallaby\n',
    });
    renameSync(join(outside, 'tree'), join(root, 'moved-in'));
    const uris = await until('wallaby', 3);
    expect(uris.map((u) => u.slice(u.indexOf('/moved-in/')))).toEqual([
      '/moved-in/deep/er/z.md',
      '/moved-in/deep/y.md',
      '/moved-in/x.md',
    ]);
    // Moved out again: gone from the results.
    renameSync(join(root, 'moved-in'), join(outside, 'back'));
    await until('wallaby', 0);
    expect(sourceReconciles()).toBe(builds);
  });
});
