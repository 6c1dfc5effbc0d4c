/**
 * The providers' directory reads (`readDirectory`) and change feeds (`onChanges`), which
 * `resources/directory/read` and the skills catalogs build on: children by name, keyset-paged,
 * under the same exclusion, hiding, containment and access rules as reads.
 */
import { execFileSync } from 'node:child_process';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DirectoryEntry, Provider } from '../../src/core/types.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { gitProvider } from '../../src/providers/git/index.js';
import { commit, git, makeRepo, repoName } from './git-helpers.js';
import { ctx, expectNotFound, fileUri, removeDir, tempDir, writeTree } from './helpers.js';
import { eventually } from '../helpers/eventually.js';

const providers: Provider[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const provider of providers.splice(0)) await provider.close?.();
  for (const dir of dirs.splice(0)) removeDir(dir);
});

function folder(files: Record<string, string>): string {
  const root = tempDir('reservoir-dir-');
  dirs.push(root);
  writeTree(root, files);
  return root;
}

async function all(
  provider: Provider,
  uri: string,
  limit: number,
): Promise<{ calls: number; items: DirectoryEntry[] }> {
  const items: DirectoryEntry[] = [];
  let after: string | undefined;
  let calls = 0;
  do {
    const page = await provider.readDirectory!(uri, after, limit, ctx());
    calls += 1;
    items.push(...page.items);
    after = page.last;
  } while (after !== undefined);
  return { calls, items };
}

describe('files readDirectory', () => {
  it('pages a folder by name, naming special files and marking symlinks, leaving out excluded, hidden and outside entries', async () => {
    const outside = folder({ 'secret.txt': 's' });
    const root = folder({
      '.gitignore': 'ignored.txt\n',
      'a.txt': 'a',
      'b/c.txt': 'c',
      'ignored.txt': 'i',
      'config.yaml': 'k: v',
    });
    symlinkSync(join(root, 'a.txt'), join(root, 'link.txt'));
    symlinkSync(join(outside, 'secret.txt'), join(root, 'escape.txt'));
    execFileSync('mkfifo', [join(root, 'pipe')]);
    const provider = filesProvider({ root, hide: [join(root, 'config.yaml')] });
    providers.push(provider);
    const { calls, items } = await all(provider, `${fileUri(root)}/`, 2);
    expect(calls).toBe(3);
    expect(items.map((i) => [i.name, i.kind, i.link === true])).toEqual([
      ['.gitignore', 'file', false],
      ['a.txt', 'file', false],
      ['b', 'directory', false],
      ['link.txt', 'file', true],
      ['pipe', 'special', false],
    ]);
    expect(items[2]).toMatchObject({
      uri: `${fileUri(join(root, 'b'))}/`,
      mimeType: 'inode/directory',
    });
  });

  it('names only the children the caller may list', async () => {
    const root = folder({ 'open/x.txt': 'x', 'closed/y.txt': 'y', 'z.txt': 'z' });
    const provider = filesProvider({ root });
    providers.push(provider);
    const page = await provider.readDirectory!(`${fileUri(root)}/`, undefined, 10, {
      ...ctx(),
      allows: (_operation, uri) => !uri.includes('/closed'),
    });
    expect(page.items.map((i) => i.name)).toEqual(['open', 'z.txt']);
  });

  it('answers a file, a missing folder and a folder outside the root as not found', async () => {
    const root = folder({ 'a.txt': 'a' });
    const provider = filesProvider({ root });
    providers.push(provider);
    for (const uri of [
      fileUri(join(root, 'a.txt')),
      `${fileUri(join(root, 'nope'))}/`,
      'file:///etc/',
    ])
      await expectNotFound(provider.readDirectory!(uri, undefined, 10, ctx()));
  });

  it('reports a write under the root to change listeners, with the file URI', async () => {
    const root = folder({ 'a.txt': 'a' });
    const provider = filesProvider({ root });
    providers.push(provider);
    const seen: string[][] = [];
    const stop = await provider.onChanges!((changes) =>
      seen.push(changes.map((change) => change.uri)),
    );
    writeFileSync(join(root, 'a.txt'), 'changed');
    await eventually(
      () => seen.flat().includes(fileUri(join(root, 'a.txt'))),
      () => `a change of a.txt; reported: ${JSON.stringify(seen)}`,
    );
    stop();
  });
});

describe('git readDirectory', () => {
  it('reads a ref tree and a folder in it, symlinks as special entries, paged by name', async () => {
    const repo = makeRepo({
      'docs/a.md': 'a',
      'docs/b.md': 'bb',
      'docs/sub/c.md': 'c',
      'README.md': 'r',
    });
    dirs.push(repo);
    symlinkSync('a.md', join(repo, 'docs/link.md'));
    commit(repo, {}, 'link');
    const provider = gitProvider({ path: repo });
    providers.push(provider);
    const root = `git://${repoName(repo)}/`;
    const { calls, items } = await all(provider, `${root}main/docs/`, 2);
    expect(calls).toBe(2);
    expect(items.map((i) => [i.name, i.kind, i.size, i.link === true])).toEqual([
      ['a.md', 'file', 1, false],
      ['b.md', 'file', 2, false],
      ['link.md', 'special', undefined, true],
      ['sub', 'directory', undefined, false],
    ]);
    expect(items[3]!.uri).toBe(`${root}main/docs/sub/`);
    const head = git(repo, 'rev-parse', 'HEAD');
    expect(
      (await provider.readDirectory!(`${root}${head}/`, undefined, 10, ctx())).items.map(
        (i) => i.name,
      ),
    ).toEqual(['README.md', 'docs']);
  });

  it('answers a file, a missing folder, a view and a missing ref as not found', async () => {
    const repo = makeRepo({ 'a.md': 'a' });
    dirs.push(repo);
    const provider = gitProvider({ path: repo });
    providers.push(provider);
    const root = `git://${repoName(repo)}/`;
    for (const uri of [
      `${root}main/a.md/`,
      `${root}main/nope/`,
      `${root}log/main/`,
      `${root}nope/`,
      `${root}main/a.md`,
    ]) {
      await expectNotFound(provider.readDirectory!(uri, undefined, 10, ctx()));
    }
  });
});
