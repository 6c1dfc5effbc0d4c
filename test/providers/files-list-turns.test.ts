// A list page gives the event loop turns (providers/files/slice.ts): once the page's slice is
// spent, the walk and the head reads each yield before going on, so other requests on the
// connection (a read, a cancel) are answered between two slices instead of behind the whole page.
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileHeads } from '../../src/providers/files/heads.js';
import { IgnoreRules } from '../../src/providers/files/ignore.js';
import { walkPage } from '../../src/providers/files/walk.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';
import { SpentSlice, turnsDuring } from '../helpers/turns.js';

let root: string;
beforeEach(() => {
  root = makeTempDir('reservoir-turns-');
  for (let i = 0; i < 20; i += 1)
    writeFileSync(join(root, `f${String(i).padStart(2, '0')}.md`), `# ${i}\n`);
});
afterEach(() => removeTree(root));

describe('list page turns', () => {
  it('the walk yields between entries once the page slice is spent', async () => {
    const { turns } = await turnsDuring(() =>
      walkPage(root, new IgnoreRules(root), undefined, 100, 10_000, { slice: new SpentSlice() }),
    );
    expect(turns).toBeGreaterThanOrEqual(20);
  });

  it('the head reads yield between files once the page slice is spent', async () => {
    const heads = new FileHeads(root, { budgetMs: 10_000 });
    const listed = Array.from({ length: 20 }, (_, i) => {
      const abs = join(root, `f${String(i).padStart(2, '0')}.md`);
      return { item: { uri: `file://${abs}`, name: `f${i}.md` }, abs, stats: statSync(abs) };
    });
    try {
      const { turns } = await turnsDuring(() => heads.annotate(listed, new SpentSlice()));
      expect(turns).toBeGreaterThanOrEqual(20);
      expect(
        listed.every(({ item }) => (item as { description?: string }).description !== undefined),
      ).toBe(true);
    } finally {
      heads.close();
    }
  });
});
