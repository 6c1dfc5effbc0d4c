// A git source in the index: its files at the default branch are searchable by content and name,
// other refs' files are not listed, and moving the branch re-indexes what changed — through the
// provider's own ref watcher (onChanges), with content signatures (git reports no times).
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Registry } from '../../src/core/registry.js';
import { silentLogger } from '../../src/core/log.js';
import { gitProvider } from '../../src/providers/git/index.js';
import { SearchService } from '../../src/search/service.js';
import { commit, git, makeRepo, repoName } from '../providers/git-helpers.js';
import { ctx, removeDir, tempDir } from '../providers/helpers.js';

const repo = makeRepo({
  'README.md': '# Project\n\nThe walrus protocol.\n',
  'src/app.ts': 'export const narwhal = 1;\n',
});
const state = tempDir('reservoir-state-');
let service: SearchService | undefined;
let registry: Registry | undefined;

afterEach(async () => {
  await service?.close();
  await registry?.close();
});

afterAll(() => {
  removeDir(repo);
  removeDir(state);
});

const names = async (query: string): Promise<string[]> =>
  (await service!.search({ query, limit: 20 }, ctx())).hits.map((h) => h.name).sort();

describe('a git source', () => {
  it('is indexed at its default branch, and a commit on it is searchable once the watcher sees it', async () => {
    git(repo, 'checkout', '-q', '-b', 'other');
    commit(repo, { 'other.md': 'a dugong lives on another branch\n' }, 'other');
    git(repo, 'checkout', '-q', 'main');
    registry = new Registry().mount(gitProvider({ path: repo, pollIntervalMs: 20 }));
    service = new SearchService(registry, { stateDir: state }, silentLogger);
    await service.ready;
    expect(service.sources()).toEqual([repoName(repo)]);
    expect(await names('walrus')).toEqual(['README.md']);
    expect(await names('narwhal')).toEqual(['app.ts']);
    expect(await names('dugong')).toEqual([]);

    commit(
      repo,
      { 'src/app.ts': 'export const beluga = 1;\n', 'docs/new.md': 'a manatee\n' },
      'change',
    );
    for (;;) {
      await new Promise<void>((resolve) => {
        const off = service!.onProgress(() => {
          off();
          resolve();
        });
      });
      await service.idle();
      if ((await names('beluga')).length > 0) break;
    }
    expect(await names('beluga')).toEqual(['app.ts']);
    expect(await names('narwhal')).toEqual([]);
    expect(await names('manatee')).toEqual(['new.md']);
  });
});
