// A list page of a big directory stays a page: it reads at most SYNC_READS heads it has not read
// before (the rest of its files typed by their names), and the hints of the others arrive on a
// later listing once the client stops paging — through the real SDK client over stdio. Paging
// meanwhile lists every file exactly once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYNC_READS } from '../../src/providers/files/heads.js';
import { ensureBuilt } from '../helpers/build.js';
import { Cleanup, connectStdio, listAllPages, listPage } from '../helpers/clients.js';
import { eventually } from '../helpers/eventually.js';
import { makeTempDir, pad, removeTree, writeTree } from '../helpers/tree.js';

const FILES = 300;

let root: string;
const cleanup = new Cleanup();
beforeAll(async () => {
  await ensureBuilt();
  root = makeTempDir('reservoir-head-reads-');
  const files: Record<string, string> = {};
  for (let i = 0; i < FILES; i += 1) files[`note-${pad(i, 3)}.md`] = `# Note ${i}\n\nbody\n`;
  writeTree(root, files);
});
afterAll(async () => {
  await cleanup.run();
  removeTree(root);
});

describe('head reads on a list page of a big directory', () => {
  it('describes at most SYNC_READS new files on a page, and the rest on a later listing', async () => {
    const { client } = await connectStdio('2025', [root], ['--no-search'], cleanup);
    const first = await listPage(client);
    const notes = first.resources.filter((r) => r.name.startsWith('note-'));
    expect(notes).toHaveLength(FILES);
    // Without its head, a file is typed by its name.
    for (const r of notes) expect(r.mimeType).toBe('text/markdown');
    const described = notes.filter((r) => r.description !== undefined);
    expect(described.length).toBeGreaterThan(0);
    expect(described.length).toBeLessThanOrEqual(SYNC_READS);
    for (const r of described) expect(r.description).toBe(`Note ${Number(r.name.slice(5, 8))}`);

    // Once the client stops paging, the rest are read in the background: a later listing has them.
    const all = await eventually(async () => {
      const pages = await listAllPages(client);
      const items = pages.flatMap((p) => p.resources).filter((r) => r.name.startsWith('note-'));
      return items.every((r) => r.description !== undefined) ? items : undefined;
    }, 'every note described');
    expect(new Set(all.map((r) => r.uri)).size).toBe(FILES);
    for (const r of all) expect(r.description).toBe(`Note ${Number(r.name.slice(5, 8))}`);
  });
});
