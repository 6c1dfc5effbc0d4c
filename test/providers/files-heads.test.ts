// What a list page says of a file from its first bytes (heads.ts): an empty file is typed by its
// name alone, as a read of its (absent) head would type it, and a file with content is sniffed and
// described — on the same page, in any mix.
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FileHeads, SYNC_READS } from '../../src/providers/files/heads.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { makeTempDir, pad, removeTree } from '../helpers/tree.js';
import { ctx } from './helpers.js';

let root: string;
beforeEach(() => {
  root = makeTempDir('reservoir-heads-');
});
afterEach(() => removeTree(root));

/**
 * `count` Markdown files `<prefix>NNN.md` under root, the i-th headed `# <title> i`, as a list page
 * hands them to FileHeads (each with the stats its walk took).
 */
function listedFiles(prefix: string, title: string, count: number) {
  return Array.from({ length: count }, (_, i) => {
    const name = `${prefix}${pad(i, 3)}.md`;
    const abs = join(root, name);
    writeFileSync(abs, `# ${title} ${i}\n`);
    const item: { uri: string; name: string; description?: string } = {
      uri: `file://${abs}`,
      name,
    };
    return { item, abs, stats: statSync(abs) };
  });
}

describe('list hints from file heads', () => {
  it('types empty files by name and describes the files that have content', async () => {
    writeFileSync(join(root, 'empty.md'), '');
    writeFileSync(join(root, 'empty.json'), '');
    writeFileSync(join(root, 'empty'), '');
    writeFileSync(join(root, 'titled.md'), '# A title\n\nbody\n');
    writeFileSync(join(root, 'script'), '#!/bin/sh\n# Says hello\necho hello\n');
    const provider = filesProvider({ root, headBudgetMs: 10_000 });
    try {
      const page = await provider.list(undefined, 100, ctx());
      const byName = new Map(page.items.map((item) => [item.name, item]));
      expect(byName.get('empty.md')?.mimeType).toBe('text/markdown');
      expect(byName.get('empty.md')?.description).toBeUndefined();
      expect(byName.get('empty.json')?.mimeType).toBe('application/json');
      expect(byName.get('empty')?.description).toBeUndefined();
      expect(byName.get('titled.md')?.description).toBe('A title');
      expect(byName.get('script')?.mimeType).toMatch(/^text\//);
    } finally {
      await provider.close?.();
    }
  });

  it('reads at most SYNC_READS new heads on one page, however long its budget, and the rest later', async () => {
    const count = SYNC_READS * 3;
    for (let i = 0; i < count; i += 1)
      writeFileSync(join(root, `n${String(i).padStart(3, '0')}.md`), `# Note ${i}\n`);
    const provider = filesProvider({ root, headBudgetMs: 10_000 });
    try {
      const first = await provider.list(undefined, count, ctx());
      expect(first.items).toHaveLength(count);
      // Typed by name without a head; described only where the page read one.
      expect(first.items.every((item) => item.mimeType === 'text/markdown')).toBe(true);
      expect(first.items.filter((item) => item.description !== undefined)).toHaveLength(SYNC_READS);
      // The next page reads the next SYNC_READS (the first ones are cached by now, and the
      // background drain may have read more in between).
      const second = await provider.list(undefined, count, ctx());
      expect(
        second.items.filter((item) => item.description !== undefined).length,
      ).toBeGreaterThanOrEqual(2 * SYNC_READS);
    } finally {
      await provider.close?.();
    }
  });

  it('reads the first eight heads of a page that began past its budget, and queues the rest', async () => {
    // a budget of 0 ms is a page that began late: its process was descheduled, or gave a turn away
    const heads = new FileHeads(root, { budgetMs: 0 });
    const listed = listedFiles('late', 'Late', 20);
    try {
      await heads.annotate(listed);
      expect(listed.map(({ item }) => item.description)).toEqual([
        ...Array.from({ length: 8 }, (_, i) => `Late ${i}`),
        ...Array.from({ length: 12 }, () => undefined),
      ]);
      expect(heads.queued).toBe(12);
    } finally {
      heads.close();
    }
  });

  // Before Node 24, clearImmediate() given a Timeout still counts an immediate as gone
  // (nodejs/node#57063): the process's count of pending immediates ends one short, and from then
  // on a lone setImmediate() waits until some other one is scheduled — every walk that yields a turn
  // (walk.ts) stalled until its source's list budget ran out and the source was marked down. A
  // drain once kept on a timer and closed with clearImmediate did that to test/tools/tools.test.ts.
  it('closing while heads wait for the background drain clears only what was scheduled, with its own clear', async () => {
    const heads = new FileHeads(root, { budgetMs: 10_000 });
    const listed = listedFiles('q', 'Queued', SYNC_READS + 8);
    const cleared = vi.spyOn(globalThis, 'clearImmediate');
    try {
      await heads.annotate(listed);
      expect(heads.queued).toBe(8);
      heads.close();
      expect(heads.queued).toBe(0);
      // What it handed clearImmediate, by kind: immediates only (a Timeout here is the bug).
      const kinds = cleared.mock.calls.map(([handle]) => (handle as object).constructor.name);
      expect(kinds.filter((kind) => kind !== 'Immediate')).toEqual([]);
    } finally {
      cleared.mockRestore();
    }
    // One immediate, alone in the queue: it runs on the next turn of a healthy event loop.
    await new Promise<void>((resolve) => setImmediate(resolve));
  });
});
