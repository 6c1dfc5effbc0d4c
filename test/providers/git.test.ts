// Pins the git provider: it keeps the provider contract on a real repository; lists the default
// branch's tip in git's path order (regular files only, each with name, title, MIME type and
// size); reads blobs byte for byte at branches (with '/' percent-encoded), tags, commit ids and
// HEAD; round-trips unusual names; enforces the read cap; refuses every hostile ref and path as
// not found; serves the history and commit views; and completes refs, commit ids and paths.
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError, TooLargeError, UnavailableError } from '../../src/core/errors.js';
import type { Completion, ResourceContents } from '../../src/core/types.js';
import { gitProvider, type GitProvider } from '../../src/providers/git/index.js';
import { testProvider } from './contract.js';
import { commit, git, makeRepo, repoName } from './git-helpers.js';
import {
  ctx,
  expectNotFound,
  rejection,
  removeDir,
  tempDir,
  uris,
  walkProvider,
} from './helpers.js';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

/** Names that must list and read back exactly. */
const UNUSUAL = [
  'with space.txt',
  'ünïcödé.md',
  'hash#name.txt',
  'pct%20name.txt',
  'what?.txt',
  'quote\'"s.txt',
  'back\\slash.txt',
  'semi;colon,comma.txt',
  'sp ace/in dir/x y.md',
];

const tree: Record<string, string | Buffer> = {
  'README.md': '# readme\n',
  'src/index.ts': 'export const x = 1;\n',
  'src/lib/util.ts': 'export {};\n',
  'a/b': 'inside a\n',
  'a-c': 'after a\n',
  'image.png': PNG,
  'empty.txt': '',
  'deep/1/2/3/4/leaf.txt': 'leaf\n',
  '.hidden': 'dot file\n',
  ...Object.fromEntries(UNUSUAL.map((name) => [name, `content of ${name}\n`])),
};

/** Names committed but never served. */
const REFUSED_NAMES = ['-leading-dash.txt', 'line\nbreak.txt', 'tab\there.txt', 'at@{1}.txt'];

const repos: string[] = [];
afterAll(() => repos.forEach(removeDir));

function repo(files: Record<string, string | Buffer> = tree): string {
  const dir = makeRepo(files);
  repos.push(dir);
  return dir;
}

async function text(provider: GitProvider, uri: string): Promise<string> {
  const content = await one(provider, uri);
  if (!('text' in content)) throw new Error(`${uri} read as a blob`);
  return content.text;
}

async function one(provider: GitProvider, uri: string): Promise<ResourceContents> {
  const result = await provider.read(uri, ctx());
  expect(result.contents).toHaveLength(1);
  return result.contents[0]!;
}

const enc = (path: string): string => path.split('/').map(encodeURIComponent).join('/');

testProvider({
  name: 'git',
  setup: async () => {
    const dir = makeRepo(tree);
    const provider = gitProvider({ path: dir });
    let version = 0;
    return {
      provider,
      knownUris: Object.keys(tree).map((path) => `git://${repoName(dir)}/main/${enc(path)}`),
      missingUri: `git://${repoName(dir)}/main/no-such-file.txt`,
      cleanup: async () => {
        await provider.close();
        removeDir(dir);
      },
      change: {
        uri: `git://${repoName(dir)}/main/deep/1/2/3/4/leaf.txt`,
        apply: () =>
          void commit(
            dir,
            { 'deep/1/2/3/4/leaf.txt': `leaf, changed ${(version += 1)}\n` },
            'change the leaf',
          ),
      },
      directoryUri: `git://${repoName(dir)}/main/deep/`,
      completion: {
        uriTemplate: `git://${repoName(dir)}/{ref}/{+path}`,
        variable: 'path',
        value: 'deep/',
        expected: 'deep/1/',
      },
    };
  },
});

describe('git provider', () => {
  let dir: string;
  let provider: GitProvider;
  let root: string;
  let first: string;
  let second: string;

  beforeAll(() => {
    dir = repo();
    first = git(dir, 'rev-parse', 'HEAD');
    git(dir, 'tag', 'v1');
    git(dir, 'tag', '-a', '-m', 'annotated', 'v1-annotated');
    git(dir, 'checkout', '-q', '-b', 'feature/x');
    commit(
      dir,
      { 'README.md': '# feature readme\n', 'feature-only.txt': 'only here\n' },
      'feature work',
    );
    git(dir, 'checkout', '-q', 'main');
    second = commit(dir, { 'README.md': '# readme v2\n', 'src/lib/util.ts': null }, 'second');
    git(dir, 'branch', 'log');
    for (const name of REFUSED_NAMES)
      git(
        dir,
        'update-index',
        '--add',
        '--cacheinfo',
        `100644,${git(dir, 'hash-object', '-w', '--stdin')},${name}`,
      );
    // Symbolic links and submodules are not listed.
    symlinkSync('README.md', join(dir, 'link.md'));
    git(dir, 'update-index', '--add', '--cacheinfo', `160000,${first},vendor/sub`);
    git(dir, 'add', 'link.md');
    git(dir, 'commit', '-q', '-m', 'odd entries');
    provider = gitProvider({ path: dir });
    root = provider.root;
  });
  afterAll(() => provider.close());

  it('mounts at git://<directory name>/ by default, or at the configured name', async () => {
    expect(root).toBe(`git://${repoName(dir)}/`);
    const named = gitProvider({ path: dir, name: 'docs' });
    expect(named.root).toBe('git://docs/');
    await named.close();
    expect(() => gitProvider({ path: dir, name: 'bad name' })).toThrow(/name/);
    expect(() => gitProvider({ path: dir, branch: '-x' })).toThrow(/branch/);
    expect(() => gitProvider({ path: dir, maxReadBytes: 0 } as never)).toThrow(/maxReadBytes/);
  });

  it('lists the regular files at the default branch tip in git path order, with name, title, MIME type and size', async () => {
    const items = (await walkProvider(provider, 1000)).items;
    const titles = items.map((i) => i.title);
    const expected = [...Object.keys(tree).filter((p) => p !== 'src/lib/util.ts')].sort((a, b) =>
      Buffer.compare(Buffer.from(a), Buffer.from(b)),
    );
    expect(titles).toEqual(expected);
    expect(titles.indexOf('a-c')).toBeLessThan(titles.indexOf('a/b'));
    const readme = items.find((i) => i.title === 'README.md')!;
    // Besides these, the description and last commit date its content and history give (hints.test.ts).
    expect(readme).toMatchObject({
      uri: `${root}main/README.md`,
      name: 'README.md',
      title: 'README.md',
      mimeType: 'text/markdown',
      size: 12,
    });
    expect(items.find((i) => i.title === 'image.png')).toMatchObject({
      mimeType: 'image/png',
      size: PNG.length,
    });
    for (const refused of [...REFUSED_NAMES, 'link.md', 'vendor/sub'])
      expect(titles).not.toContain(refused);
  });

  it('reads at a branch, a branch with a slash, a tag, an annotated tag, a commit id, a short id and HEAD', async () => {
    expect(await text(provider, `${root}main/README.md`)).toBe('# readme v2\n');
    expect(await text(provider, `${root}feature%2Fx/README.md`)).toBe('# feature readme\n');
    expect(await text(provider, `${root}feature%2Fx/feature-only.txt`)).toBe('only here\n');
    expect(await text(provider, `${root}refs%2Fheads%2Ffeature%2Fx/README.md`)).toBe(
      '# feature readme\n',
    );
    expect(await text(provider, `${root}v1/README.md`)).toBe('# readme\n');
    expect(await text(provider, `${root}v1-annotated/src/lib/util.ts`)).toBe('export {};\n');
    expect(await text(provider, `${root}${first}/README.md`)).toBe('# readme\n');
    expect(await text(provider, `${root}${first.slice(0, 7)}/README.md`)).toBe('# readme\n');
    expect(await text(provider, `${root}${second}/README.md`)).toBe('# readme v2\n');
    expect(await text(provider, `${root}HEAD/README.md`)).toBe('# readme v2\n');
    // A branch named like a view goes by its full name.
    expect(await text(provider, `${root}refs%2Fheads%2Flog/README.md`)).toBe('# readme v2\n');
    // A file deleted at the tip is still there at older refs, and missing at the tip.
    await expectNotFound(provider.read(`${root}main/src/lib/util.ts`, ctx()));
    // An unencoded slash ends the ref: 'feature' is not a ref.
    await expectNotFound(provider.read(`${root}feature/x/README.md`, ctx()));
    await expectNotFound(provider.read(`${root}no-such-branch/README.md`, ctx()));
  });

  it('round-trips unusual names and binary content byte for byte', async () => {
    for (const name of UNUSUAL) {
      const uri = `${root}main/${enc(name)}`;
      expect(await text(provider, uri), name).toBe(`content of ${name}\n`);
    }
    const bytes = randomBytes(300_000);
    bytes[0] = 0; // certainly not text
    const binDir = repo({ 'data.bin': bytes, noext: bytes });
    const bin = gitProvider({ path: binDir });
    try {
      for (const name of ['data.bin', 'noext']) {
        const content = await one(bin, `${bin.root}main/${name}`);
        expect('blob' in content).toBe(true);
        const back = Buffer.from((content as { blob: string }).blob, 'base64');
        expect(createHash('sha256').update(back).digest('hex')).toBe(
          createHash('sha256').update(bytes).digest('hex'),
        );
      }
      const png = await one(provider, `${root}main/image.png`);
      expect(png).toEqual({
        uri: `${root}main/image.png`,
        mimeType: 'image/png',
        blob: PNG.toString('base64'),
      });
    } finally {
      await bin.close();
    }
  });

  it('refuses a blob over the read cap with its size and the limit, and reads one at the cap', async () => {
    const capped = gitProvider({ path: dir, maxReadBytes: 12 });
    try {
      expect(await text(capped, `${capped.root}main/README.md`)).toBe('# readme v2\n');
      const error = await rejection(capped.read(`${capped.root}main/src/index.ts`, ctx()));
      expect(error).toBeInstanceOf(TooLargeError);
      expect((error as TooLargeError).data).toMatchObject({ size: 20, limit: 12 });
    } finally {
      await capped.close();
    }
  });

  it('refuses hostile refs as not found, without running anything they spell', async () => {
    const refs = [
      '-rf',
      '--output=%2Ftmp%2Fx',
      '--exec=touch',
      'main..v1',
      'main...v1',
      'main@%7B1%7D',
      '@%7B-1%7D',
      '@',
      'HEAD~1',
      'main%5E',
      'main%5E%7Bcommit%7D',
      'main:README.md',
      '%3AREADME.md',
      'ma%0Ain',
      'ma%00in',
      'ma%09in',
      'ma%20in',
      'refs%2Fremotes%2Forigin%2Fmain',
      '.hidden',
      'main.lock',
      'main%2F',
      '%2Fmain',
      'feature%2F%2Fx',
      'ma*n',
      'ma%3Fn',
      'ma%5Bn',
      'ma%5Cn',
      `${first.slice(0, 3)}`,
      '%E0%A4%A',
      'refs%2Fheads%2F..%2Fmain',
      'FETCH_HEAD',
      'config',
      'description',
    ];
    for (const ref of refs) {
      await expectNotFound(provider.read(`${root}${ref}/README.md`, ctx()));
      await expectNotFound(provider.read(`${root}log/${ref}`, ctx()));
    }
    expect(await text(provider, `${root}main/README.md`)).toBe('# readme v2\n');
  });

  it('refuses hostile paths as not found', async () => {
    const paths = [
      '-leading-dash.txt',
      '--output=x',
      'line%0Abreak.txt',
      'tab%09here.txt',
      'at@%7B1%7D.txt',
      'src%2Findex.ts',
      '%2E%2E/README.md',
      'src/%2e%2e%2fREADME.md',
      'src//index.ts',
      'src/index.ts/',
      '%00',
      'link.md',
      'vendor/sub',
      'src',
      'src/',
      '%FF.txt',
    ];
    for (const path of paths) await expectNotFound(provider.read(`${root}main/${path}`, ctx()));
  });

  it('refuses a query or fragment on a file URI as an invalid argument', async () => {
    expect(await rejection(provider.read(`${root}main/README.md?x=1`, ctx()))).toBeInstanceOf(
      InvalidArgumentError,
    );
    expect(await rejection(provider.read(`${root}main/README.md#top`, ctx()))).toBeInstanceOf(
      InvalidArgumentError,
    );
    expect(await rejection(provider.read(`${root}commits/${second}?x`, ctx()))).toBeInstanceOf(
      InvalidArgumentError,
    );
  });

  it('validates list resume keys', () => {
    for (const key of ['README.md', 'a/', 'deep/1/2/3/4/leaf.txt'])
      expect(provider.isValidKey!(key)).toBe(true);
    for (const key of ['', '/x', 'a//b', 'a/../b', '.', 'a\0b', '//'])
      expect(provider.isValidKey!(key), key).toBe(false);
  });

  it('resumes a page after a key whose file or directory has since been deleted', async () => {
    const d = repo({ 'a.txt': 'a', 'b/1.txt': '1', 'b/2.txt': '2', 'b.txt': 'bt', 'c.txt': 'c' });
    const p = gitProvider({ path: d });
    try {
      const firstPage = await p.list(undefined, 2, ctx());
      expect(firstPage.items.map((i) => i.title)).toEqual(['a.txt', 'b.txt']);
      commit(d, { 'b.txt': null, 'b/1.txt': null, 'b/2.txt': null }, 'delete');
      const rest = await p.list(firstPage.last, 10, ctx());
      expect(rest.items.map((i) => i.title)).toEqual(['c.txt']);
      const dirKey = await p.list('b/', 10, ctx());
      expect(dirKey.items.map((i) => i.title)).toEqual(['c.txt']);
    } finally {
      await p.close();
    }
  });

  describe('templates', () => {
    it('serves six templates (the two partial reads first), each with completion', () => {
      const templates = provider.templates!();
      expect(templates.map((t) => t.uriTemplate)).toEqual([
        `${root}{ref}/{+path}{?lines}`,
        `${root}{ref}/{+path}{?bytes}`,
        `${root}{ref}/{+path}`,
        `${root}log/{ref}/{+path}{?limit}`,
        `${root}log/{ref}{?limit}`,
        `${root}commits/{sha}`,
      ]);
      for (const t of templates) expect(Object.keys(t.complete ?? {}).length).toBeGreaterThan(0);
    });

    it('reads the history of a path and of a ref, newest first, with a limit and a cap', async () => {
      const log = JSON.parse(await text(provider, `${root}log/main/README.md`));
      expect(log).toMatchObject({
        repository: repoName(dir),
        ref: 'main',
        path: 'README.md',
        limit: 20,
        more: false,
      });
      expect(log.commits.map((c: { sha: string }) => c.sha)).toEqual([second, first]);
      expect(log.commits[0]).toMatchObject({
        uri: `${root}commits/${second}`,
        parents: [first],
        author: { name: 'Test Author', email: 'author@example.com' },
        subject: 'second',
      });
      expect(log.commits[0].author.date).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$/);
      const limited = JSON.parse(await text(provider, `${root}log/main?limit=1`));
      expect(limited).toMatchObject({ path: null, limit: 1, more: true });
      expect(limited.commits).toHaveLength(1);
      const feature = JSON.parse(await text(provider, `${root}log/feature%2Fx/feature-only.txt`));
      expect(feature.commits.map((c: { subject: string }) => c.subject)).toEqual(['feature work']);
      const dirLog = JSON.parse(await text(provider, `${root}log/main/src`));
      expect(dirLog.commits.map((c: { sha: string }) => c.sha)).toEqual([second, first]);
      // A pathspec is literal: no glob, no magic.
      expect(JSON.parse(await text(provider, `${root}log/main/*.md`)).commits).toEqual([]);
      expect(
        JSON.parse(await text(provider, `${root}log/main/${encodeURIComponent(':(glob)**')}`))
          .commits,
      ).toEqual([]);
      const capped = gitProvider({ path: dir, maxLogEntries: 5 });
      try {
        const error = await rejection(capped.read(`${capped.root}log/main?limit=6`, ctx()));
        expect(error).toBeInstanceOf(InvalidArgumentError);
        expect((error as InvalidArgumentError).data).toMatchObject({ argument: 'limit', max: 5 });
        // However many digits, a limit over the cap is told the cap, not that it is no number.
        for (const limit of ['999999999', '9'.repeat(40)]) {
          const big = await rejection(capped.read(`${capped.root}log/main?limit=${limit}`, ctx()));
          expect((big as InvalidArgumentError).message, limit).toContain('at most 5 commits');
        }
      } finally {
        await capped.close();
      }
      for (const query of ['limit=0', 'limit=abc', 'limit=-1', 'other=1', 'limit=1&limit=2']) {
        expect(
          await rejection(provider.read(`${root}log/main?${query}`, ctx())),
          query,
        ).toBeInstanceOf(InvalidArgumentError);
      }
    });

    it('reads a commit: metadata, changed files and the diff; omits a diff over the cap', async () => {
      const view = JSON.parse(await text(provider, `${root}commits/${second}`));
      expect(view).toMatchObject({
        sha: second,
        uri: `${root}commits/${second}`,
        parents: [first],
        message: 'second\n',
        author: { name: 'Test Author' },
      });
      expect(view.files).toEqual([
        { path: 'README.md', status: 'M', additions: 1, deletions: 1 },
        { path: 'src/lib/util.ts', status: 'D', additions: 0, deletions: 1 },
      ]);
      expect(view.diff).toContain('-# readme\n+# readme v2\n');
      expect(view.diffOmitted).toBeUndefined();
      const root0 = JSON.parse(await text(provider, `${root}commits/${first.slice(0, 8)}`));
      expect(root0.parents).toEqual([]);
      expect(root0.files.find((f: { path: string }) => f.path === 'image.png')).toEqual({
        path: 'image.png',
        status: 'A',
        additions: null,
        deletions: null,
      });
      const whole = JSON.parse(await text(provider, `${root}commits/${first}`));
      const cap = JSON.stringify({ ...whole, diff: null }).length + 40; // room for the metadata, not the patch
      const small = gitProvider({ path: dir, maxReadBytes: cap });
      const tiny = gitProvider({ path: dir, maxReadBytes: 200 });
      try {
        const omitted = JSON.parse(await text(small, `${small.root}commits/${first}`));
        expect(omitted.diff).toBeNull();
        expect(omitted.diffOmitted).toEqual({ reason: 'too_large', limit: cap });
        expect(omitted.files).toEqual(whole.files);
        const error = await rejection(tiny.read(`${tiny.root}commits/${first}`, ctx()));
        expect(error).toBeInstanceOf(TooLargeError);
        expect((error as TooLargeError).data).toMatchObject({ limit: 200 });
      } finally {
        await small.close();
        await tiny.close();
      }
      // Not a commit, or no such object.
      const blob = git(dir, 'rev-parse', 'HEAD:README.md');
      await expectNotFound(provider.read(`${root}commits/${blob}`, ctx()));
      await expectNotFound(provider.read(`${root}commits/${'0'.repeat(40)}`, ctx()));
      await expectNotFound(provider.read(`${root}commits/main`, ctx()));
      await expectNotFound(provider.read(`${root}commits/${second}/x`, ctx()));
    });

    it('completes refs: branches, then tags, then HEAD, and commit ids from 4 hex digits', async () => {
      const ref = provider.templates!()[0]!.complete!['ref']!;
      const values = async (
        value: string,
        context: Record<string, string> = {},
      ): Promise<string[]> => ((await ref(value, context, ctx())) as Completion).values;
      expect(await values('')).toEqual([
        'feature/x',
        'main',
        'refs/heads/log',
        'v1',
        'v1-annotated',
        'HEAD',
      ]);
      expect(await values('fe')).toEqual(['feature/x']);
      expect(await values('v1')).toEqual(['v1', 'v1-annotated']);
      expect(await values(first.slice(0, 3))).toEqual([]);
      expect(await values(first.slice(0, 6))).toContain(first);
      expect(await values('zzz')).toEqual([]);
      expect(await values('-')).toEqual([]);
      const sha = provider.templates!().find((t) => t.name.endsWith('-commit'))!.complete!['sha']!;
      expect(((await sha(second.slice(0, 5), {}, ctx())) as Completion).values).toEqual([second]);
      expect(((await sha('main', {}, ctx())) as Completion).values).toEqual([]);
    });

    it('completes paths like a shell within the tree at the chosen ref, or the default branch', async () => {
      const path = provider.templates!()[0]!.complete!['path']!;
      const values = async (
        value: string,
        context: Record<string, string> = {},
      ): Promise<string[]> => ((await path(value, context, ctx())) as Completion).values;
      // vendor/ holds only a submodule: a directory all the same, as a shell would offer it.
      expect(await values('')).toEqual([
        'a/',
        'deep/',
        'sp ace/',
        'src/',
        'vendor/',
        'README.md',
        'a-c',
        'back\\slash.txt',
        'empty.txt',
        'hash#name.txt',
        'image.png',
        'pct%20name.txt',
        'quote\'"s.txt',
        'semi;colon,comma.txt',
        'what?.txt',
        'with space.txt',
        'ünïcödé.md',
      ]);
      expect(await values('.')).toEqual(['.hidden']);
      expect(await values('src/')).toEqual(['src/index.ts']);
      expect(await values('src/', { ref: 'v1' })).toEqual(['src/lib/', 'src/index.ts']);
      expect(await values('f', { ref: 'feature/x' })).toEqual(['feature-only.txt']);
      expect(await values('f')).toEqual([]);
      for (const hostile of ['../', '/etc/', 'src/../', '-', 'src//'])
        expect(await values(hostile), hostile).toEqual([]);
      expect(await values('', { ref: '--all' })).toEqual([]);
      expect(await values('', { ref: 'no-such-ref' })).toEqual([]);
    });
  });

  it('lists nothing for an empty repository, and serves a bare one', async () => {
    const empty = repo({});
    const p = gitProvider({ path: empty });
    expect((await p.list(undefined, 10, ctx())).items).toEqual([]);
    await p.close();
    const bareDir = tempDir('reservoir-bare-');
    repos.push(bareDir);
    git(bareDir, 'clone', '-q', '--bare', dir, join(bareDir, 'bare.git'));
    const bare = gitProvider({ path: join(bareDir, 'bare.git') });
    try {
      expect(bare.root).toBe('git://bare/');
      expect(await text(bare, 'git://bare/main/README.md')).toBe('# readme v2\n');
      expect(uris((await walkProvider(bare, 100)).items)).toContain('git://bare/main/a-c');
    } finally {
      await bare.close();
    }
  });

  it('answers a directory that is not a repository — even inside one — as unavailable, its list included', async () => {
    const inner = join(dir, 'not-a-repo');
    mkdirSync(inner);
    const p = gitProvider({ path: inner });
    try {
      const error = await rejection(p.read(`${p.root}main/README.md`, ctx()));
      expect(error).toBeInstanceOf(UnavailableError);
      expect((error as UnavailableError).message).toMatch(/not a git repository|missing/);
      expect(await rejection(p.list(undefined, 10, ctx()))).toBeInstanceOf(UnavailableError);
    } finally {
      await p.close();
    }
  });

  it('keeps one object reader for many concurrent reads', async () => {
    const p = gitProvider({ path: dir });
    try {
      const reads = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          text(p, `${p.root}${i % 2 === 0 ? 'main' : 'v1'}/README.md`),
        ),
      );
      expect(reads.filter((r) => r === '# readme v2\n')).toHaveLength(100);
      expect(p.readerStarts()).toBe(1);
    } finally {
      await p.close();
    }
  });
});
