// What a list page says of a file from its first bytes (heads.ts): an empty file is typed by its
// name alone, as a read of its (absent) head would type it, and a file with content is sniffed and
// described — on the same page, in any mix.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
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
});
