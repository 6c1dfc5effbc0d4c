// What a list page says of a file from its first bytes (heads.ts): an empty file is typed by its
// name alone, as a read of its (absent) head would type it, and a file with content is sniffed and
// described — on the same page, in any mix.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SYNC_READS } from '../../src/providers/files/heads.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';
import { ctx } from './helpers.js';

let root: string;
beforeEach(() => {
  root = makeTempDir('reservoir-heads-');
});
afterEach(() => removeTree(root));

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
});
