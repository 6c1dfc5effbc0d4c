// Searching while a large first build runs, through the real SDK client over stdio and HTTP in
// both eras (each with a fresh index):
// a call carrying a progressToken gets MCP progress notifications, and the answer comes from what
// is indexed so far with `indexing` set, instead of waiting for the whole tree. Once the build is
// done the answer is complete, and a file written afterwards becomes searchable (live updates).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { Cleanup, connectTarget, label, spawnHttpServer, TARGETS } from '../helpers/clients.js';
import { buildNestedTree, makeTempDir, removeTree } from '../helpers/tree.js';

const FILES = 30_000;
const cleanup = new Cleanup();
let root: string;

interface Answer {
  hits: { uri: string; name: string }[];
  nextCursor?: string;
  indexing?: { done: number; total: number };
}

beforeAll(async () => {
  await ensureBuilt();
  root = makeTempDir('reservoir-search-large-');
  cleanup.add(() => removeTree(root));
  buildNestedTree(root, FILES);
}, 120_000);

afterAll(() => cleanup.run());

describe.each(TARGETS)('a large first build over $transport in the $era era', (target) => {
  let client: Client;
  const era = `${target.transport}${target.era}`;

  beforeAll(async () => {
    const state = makeTempDir('reservoir-search-state-');
    cleanup.add(() => removeTree(state));
    const args = ['--state-dir', state];
    const httpUrl =
      target.transport === 'http' ? (await spawnHttpServer([root], args, cleanup)).url : undefined;
    client = await connectTarget(
      target,
      { roots: [root], args, ...(httpUrl === undefined ? {} : { httpUrl }) },
      cleanup,
    );
  });

  it(`${label(target)}: answers from what is indexed so far, with progress notifications and \`indexing\` set`, async () => {
    const progress: { progress: number; total?: number | undefined }[] = [];
    const result = (await client.callTool(
      { name: 'search_resources', arguments: { query: 'txt' } },
      { onprogress: (p) => void progress.push(p) },
    )) as CallToolResult;
    const answer = result.structuredContent as unknown as Answer;
    expect(result.isError ?? false).toBe(false);
    expect(answer.indexing).toBeDefined();
    expect(answer.indexing!.done).toBeLessThan(answer.indexing!.total + 1);
    expect(progress.length).toBeGreaterThan(0);
    for (let i = 1; i < progress.length; i += 1)
      expect(progress[i]!.progress).toBeGreaterThan(progress[i - 1]!.progress);
    expect((result.content[0] as { text: string }).text).toContain(
      'The index is still being built',
    );
  }, 30_000);

  it(`${label(target)}: keeps answering searches while the build runs, and completes`, async () => {
    let answer: Answer;
    let calls = 0;
    do {
      answer = (
        (await client.callTool({
          name: 'search_resources',
          arguments: { query: 'f00007', limit: 5 },
        })) as CallToolResult
      ).structuredContent as unknown as Answer;
      calls += 1;
    } while (answer.indexing !== undefined && calls < 200);
    expect(answer.indexing).toBeUndefined();
    expect(answer.hits.map((h) => h.name)).toEqual(['f00007.txt']);
  }, 120_000);

  it(`${label(target)}: finds a file written after the build`, async () => {
    const word = `quokka${era}`;
    writeFileSync(join(root, 'd000', 's00', `${word}.md`), `a ${word} was here\n`);
    let names: string[] = [];
    for (let i = 0; i < 200 && names.length === 0; i += 1) {
      names = (
        (
          (await client.callTool({
            name: 'search_resources',
            arguments: { query: word },
          })) as CallToolResult
        ).structuredContent as unknown as Answer
      ).hits.map((h) => h.name);
    }
    expect(names).toEqual([`${word}.md`]);
  }, 30_000);
});
