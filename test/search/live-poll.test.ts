// With `--watch poll` (the polling fallback) the index is live too: a content edit, a new file, a
// rename and a deletion are searchable (or gone) through the real SDK client, over stdio and HTTP, in
// both eras, without a restart. The poller feeds the index from async, rate-bounded rounds
// (providers/files/poll.ts); nothing walks the tree synchronously.
import { appendFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { Cleanup, connectTarget, label, spawnHttpServer, TARGETS } from '../helpers/clients.js';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { textOf } from '../tools/helpers.js';
import { eventually } from '../helpers/eventually.js';

const cleanup = new Cleanup();
let httpUrl: string;
let httpRoot: string;

function tree(): string {
  const root = makeTempDir('reservoir-poll-');
  cleanup.add(() => removeTree(root));
  writeTree(root, { 'notes/a.md': 'Nothing unusual here.\n', 'notes/b.md': 'Still nothing.\n' });
  return root;
}

function stateDir(): string {
  const state = makeTempDir('reservoir-poll-state-');
  cleanup.add(() => removeTree(state));
  return state;
}

beforeAll(async () => {
  await ensureBuilt();
  httpRoot = tree();
  httpUrl = (
    await spawnHttpServer([httpRoot], ['--watch', 'poll', '--state-dir', stateDir()], cleanup)
  ).url;
});

afterAll(() => cleanup.run());

/** The URIs a search finds, once the index has answered it. */
async function found(client: Client, query: string): Promise<string[]> {
  const result = (await client.callTool({
    name: 'search_resources',
    arguments: { query },
  })) as CallToolResult;
  expect(result.isError ?? false, textOf(result)).toBe(false);
  return (result.structuredContent as { hits: { uri: string }[] }).hits.map((h) => h.uri);
}

/** Searches again until `check` holds (the poll reports a change within a second of it). */
async function until(
  client: Client,
  query: string,
  check: (uris: string[]) => boolean,
): Promise<string[]> {
  let last: string[] = [];
  return eventually(
    async () => {
      last = await found(client, query);
      return check(last) ? last : undefined;
    },
    () => `the hits for ${JSON.stringify(query)} to change (last: ${JSON.stringify(last)})`,
    { stepMs: 50 },
  );
}

describe.each(TARGETS)('the index under --watch poll over $transport in the $era era', (target) => {
  it(`${label(target)}: makes an edit, a new file and a rename searchable and a deleted file leave the results, without a restart`, async () => {
    const root = target.transport === 'stdio' ? tree() : httpRoot;
    const client = await connectTarget(
      target,
      { roots: [root], args: ['--watch', 'poll', '--state-dir', stateDir()], httpUrl },
      cleanup,
    );
    const word = `narwhal${target.era}${target.transport}`;
    expect(await found(client, word)).toEqual([]);
    appendFileSync(join(root, 'notes/a.md'), `A ${word} swims by.\n`);
    expect(await until(client, word, (u) => u.length === 1)).toEqual([
      expect.stringMatching(/notes\/a\.md$/),
    ]);
    writeFileSync(join(root, `notes/${word}-new.md`), `another ${word}\n`);
    expect((await until(client, word, (u) => u.length === 2)).sort()).toEqual([
      expect.stringMatching(/notes\/a\.md$/),
      expect.stringMatching(/-new\.md$/),
    ]);
    renameSync(join(root, `notes/${word}-new.md`), join(root, `notes/${word}-moved.md`));
    expect(
      (
        await until(
          client,
          word,
          (u) => u.length === 2 && u.some((uri) => uri.endsWith('-moved.md')),
        )
      ).sort(),
    ).toEqual([expect.stringMatching(/notes\/a\.md$/), expect.stringMatching(/-moved\.md$/)]);
    rmSync(join(root, `notes/${word}-moved.md`));
    expect(await until(client, word, (u) => u.length === 1)).toEqual([
      expect.stringMatching(/notes\/a\.md$/),
    ]);
  });
});
