// Pins the read-cap audit of issue #11 outside SQL: nothing is read whole before its size is
// checked. A .gitignore over MAX_GITIGNORE_BYTES is never read; its directory is treated as wholly
// ignored (failing closed: such files often hide secrets), while the rest of the tree is served.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { filesProvider } from '../../src/providers/files/index.js';
import { MAX_GITIGNORE_BYTES } from '../../src/providers/files/ignore.js';
import {
  ctx,
  expectNotFound,
  fileUri,
  removeDir,
  tempDir,
  walkProvider,
  writeTree,
} from './helpers.js';

describe('files provider: a .gitignore over the cap', () => {
  let root: string;
  beforeAll(() => {
    root = tempDir('reservoir-read-caps-');
    writeTree(root, {
      'open/readme.md': 'served',
      'huge/.env': 'SECRET=1',
      'huge/notes.md': 'under the huge .gitignore',
    });
    writeFileSync(join(root, 'huge/.gitignore'), `.env\n${'#'.repeat(MAX_GITIGNORE_BYTES)}\n`);
  });
  afterAll(() => removeDir(root));

  it('is never read, and hides its whole directory while the rest of the tree is served', async () => {
    const provider = filesProvider({ root });
    const listed = (await walkProvider(provider, 100)).items.map((r) => r.uri);
    expect(listed).toContain(fileUri(join(root, 'open/readme.md')));
    expect(listed.filter((u) => u.includes('/huge/'))).toEqual([]);
    for (const rel of ['huge/.env', 'huge/notes.md'])
      await expectNotFound(
        provider.read(fileUri(join(root, rel)), ctx()),
        fileUri(join(root, rel)),
      );
  });
});
