// Pins the files provider: it keeps the provider contract (on a plain tree and on a tree with
// symlinks and loops), decides text vs blob and MIME types as documented, enforces maxReadBytes,
// reads directories as one-level listings, leaves out .git and ignored/excluded paths in both list
// and read (nested .gitignore, `!` negation, pruned directories), walks in a stable segment-wise
// order, resumes past deleted keys, and never follows symlink loops.
import { chmodSync, mkdirSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TooLargeError } from '../../src/core/errors.js';
import type { Provider, ResourceContents } from '../../src/core/types.js';
import {
  filesProvider,
  type DirectoryChild,
  type FilesOptions,
} from '../../src/providers/files/index.js';
import { testProvider } from './contract.js';
import {
  ctx,
  expectNotFound,
  fileUri,
  rejection,
  removeDir,
  tempDir,
  uris,
  walkProvider,
  writeTree,
} from './helpers.js';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

const base = tempDir('reservoir-files-');
afterAll(() => removeDir(base));

let dirCount = 0;
/** A fresh root under the suite's temp base, populated with `files`. */
function makeRoot(files: Record<string, string | Buffer> = {}): string {
  dirCount += 1;
  const root = join(base, `root${dirCount}`);
  mkdirSync(root);
  writeTree(root, files);
  return root;
}

async function make(options: FilesOptions): Promise<Provider> {
  return filesProvider(options);
}

async function readOne(provider: Provider, uri: string): Promise<ResourceContents> {
  const result = await provider.read(uri, ctx());
  expect(result.contents).toHaveLength(1);
  return result.contents[0]!;
}

async function listedRel(provider: Provider, limit = 1000): Promise<string[]> {
  const walk = await walkProvider(provider, limit);
  return walk.items.map((i) => i.title ?? i.name);
}

const plainTree = {
  'README.md': '# readme\n',
  'notes.txt': 'notes\n',
  'src/index.ts': 'export const x = 1;\n',
  'src/lib/util.ts': 'export {};\n',
  'a/b': 'inside a\n',
  'a-c': 'after a\n',
  'with space.txt': 'space\n',
  'ünïcödé.md': 'unicode\n',
  'hash#name.txt': 'hash\n',
  'pct%20name.txt': 'percent\n',
  'line\nbreak.txt': 'newline in the name\n',
  'back\\slash.txt': 'backslash in the name\n',
  'what?.txt': 'question mark\n',
  'sp ace/in dir/x y.md': 'spaces in directories\n',
  'image.png': PNG,
  'empty.txt': '',
  'deep/1/2/3/4/leaf.txt': 'leaf\n',
  '.gitignore': '*.log\nbuild/\n',
  'debug.log': 'ignored\n',
  'build/out.js': 'ignored\n',
  '.git/HEAD': 'ref: refs/heads/main\n',
};
const plainKnown = Object.keys(plainTree).filter(
  (rel) => !/(^|\/)(\.git\/|build\/)|\.log$/.test(rel),
);

testProvider({
  name: 'files',
  setup: async () => {
    const root = tempDir('reservoir-contract-');
    writeTree(root, plainTree);
    return {
      provider: await make({ root }),
      knownUris: plainKnown.map((rel) => fileUri(join(root, rel))),
      missingUri: fileUri(join(root, 'missing.txt')),
      cleanup: () => removeDir(root),
      change: {
        uri: fileUri(join(root, 'empty.txt')),
        apply: () => writeFileSync(join(root, 'empty.txt'), `changed ${Date.now()}\n`),
      },
      directoryUri: `${fileUri(join(root, 'deep'))}/`,
      completion: {
        uriTemplate: `${fileUri(root)}/{+path}`,
        variable: 'path',
        value: 'deep/',
        expected: 'deep/1/',
      },
    };
  },
  additionalTests: (fixture) => {
    it('lists no ignored file and nothing from .git in the contract tree', async () => {
      const listed = uris((await walkProvider(fixture().provider, 1000)).items);
      expect(
        listed.some((u) => u.endsWith('.log') || u.includes('/build/') || u.includes('/.git/')),
      ).toBe(false);
      expect(listed).toHaveLength(plainKnown.length);
    });
  },
});

testProvider({
  name: 'files with symlinks and loops',
  setup: async () => {
    const root = tempDir('reservoir-contract-links-');
    const outside = tempDir('reservoir-contract-outside-');
    writeTree(root, { 'real.txt': 'real\n', 'dir/inner.txt': 'inner\n' });
    writeTree(outside, { 'secret.txt': 'secret\n' });
    symlinkSync('real.txt', join(root, 'link-to-real.txt'));
    symlinkSync('dir', join(root, 'link-to-dir'));
    symlinkSync('..', join(root, 'dir', 'up'));
    symlinkSync('self', join(root, 'self'));
    symlinkSync(join(outside, 'secret.txt'), join(root, 'link-out.txt'));
    symlinkSync(outside, join(root, 'link-out-dir'));
    symlinkSync('nowhere', join(root, 'dangling'));
    return {
      provider: await make({ root }),
      knownUris: ['real.txt', 'dir/inner.txt', 'link-to-real.txt'].map((rel) =>
        fileUri(join(root, rel)),
      ),
      missingUri: fileUri(join(root, 'dangling')),
      cleanup: () => {
        removeDir(root);
        removeDir(outside);
      },
    };
  },
  additionalTests: (fixture) => {
    it('lists exactly the real files and the link to a file inside the root', async () => {
      const listed = (await walkProvider(fixture().provider, 1000)).items.map((i) => i.title);
      expect(listed).toEqual(['dir/inner.txt', 'link-to-real.txt', 'real.txt']);
    });
  },
});

describe('files provider: text or blob, and MIME types', () => {
  let root: string;
  let provider: Provider;
  const uri = (rel: string): string => fileUri(join(root, rel));

  beforeAll(async () => {
    root = makeRoot({
      'bad-utf8.txt': Buffer.from([0x68, 0x69, 0xff, 0xfe, 0x0a]),
      'image.png': PNG,
      'notes.unknownext': 'plain words, ünïcödé\n',
      'nul.unknownext': Buffer.from([0x61, 0x00, 0x62]),
      'bad-utf8.unknownext': Buffer.from([0xc3, 0x28]),
      'main.ts': 'export const answer: number = 42;\n',
      'data.json': '{"a":1}\n',
      'empty.txt': '',
      'empty.unknownext': '',
      Makefile: 'all:\n\techo hi\n',
    });
    provider = await make({ root });
  });

  it('serves a .txt file holding invalid UTF-8 as a base64 blob that round-trips byte for byte', async () => {
    const content = await readOne(provider, uri('bad-utf8.txt'));
    expect(content).not.toHaveProperty('text');
    expect(content.mimeType).toBe('text/plain');
    expect(Buffer.from((content as { blob: string }).blob, 'base64')).toEqual(
      Buffer.from([0x68, 0x69, 0xff, 0xfe, 0x0a]),
    );
  });

  it('serves a PNG as an image/png blob with its exact bytes', async () => {
    const content = await readOne(provider, uri('image.png'));
    expect(content).toEqual({
      uri: uri('image.png'),
      mimeType: 'image/png',
      blob: PNG.toString('base64'),
    });
  });

  it('sniffs an unknown extension holding UTF-8 text as text/plain', async () => {
    const content = await readOne(provider, uri('notes.unknownext'));
    expect(content).toEqual({
      uri: uri('notes.unknownext'),
      mimeType: 'text/plain',
      text: 'plain words, ünïcödé\n',
    });
  });

  it('sniffs an unknown extension holding a NUL byte as an application/octet-stream blob', async () => {
    const content = await readOne(provider, uri('nul.unknownext'));
    expect(content).toEqual({
      uri: uri('nul.unknownext'),
      mimeType: 'application/octet-stream',
      blob: 'YQBi',
    });
  });

  it('sniffs an unknown extension holding invalid UTF-8 as an application/octet-stream blob', async () => {
    const content = await readOne(provider, uri('bad-utf8.unknownext'));
    expect(content.mimeType).toBe('application/octet-stream');
    expect(content).toHaveProperty('blob');
  });

  it('serves a Makefile (no extension, a well-known name) as text/x-makefile text', async () => {
    const content = await readOne(provider, uri('Makefile'));
    expect(content).toMatchObject({ mimeType: 'text/x-makefile', text: 'all:\n\techo hi\n' });
  });

  it('types a .ts file as text/x-typescript text, not as an MPEG transport stream', async () => {
    const content = await readOne(provider, uri('main.ts'));
    expect(content).toEqual({
      uri: uri('main.ts'),
      mimeType: 'text/x-typescript',
      text: 'export const answer: number = 42;\n',
    });
    const listed = (await walkProvider(provider, 100)).items.find((i) => i.name === 'main.ts');
    expect(listed?.mimeType).toBe('text/x-typescript');
  });

  it('serves JSON as application/json text', async () => {
    expect(await readOne(provider, uri('data.json'))).toMatchObject({
      mimeType: 'application/json',
      text: '{"a":1}\n',
    });
  });

  it('reads an empty file as empty text, whether its type is known or sniffed', async () => {
    expect(await readOne(provider, uri('empty.txt'))).toEqual({
      uri: uri('empty.txt'),
      mimeType: 'text/plain',
      text: '',
    });
    expect(await readOne(provider, uri('empty.unknownext'))).toMatchObject({
      mimeType: 'text/plain',
      text: '',
    });
  });

  it('reports each listed file’s size, name, relative title and modification time', async () => {
    const items = (await walkProvider(provider, 100)).items;
    const png = items.find((i) => i.name === 'image.png');
    expect(png).toMatchObject({
      uri: uri('image.png'),
      name: 'image.png',
      title: 'image.png',
      size: PNG.length,
      mimeType: 'image/png',
    });
    expect(Number.isNaN(Date.parse(png?.annotations?.lastModified ?? ''))).toBe(false);
    expect(items.find((i) => i.name === 'empty.txt')?.size).toBe(0);
  });
});

describe('files provider: read size cap', () => {
  it('reads a file of exactly maxReadBytes and refuses one byte more with TooLargeError carrying size and limit', async () => {
    const root = makeRoot({ 'exact.txt': 'x'.repeat(100), 'over.txt': 'x'.repeat(101) });
    const provider = await make({ root, maxReadBytes: 100 });
    expect(await readOne(provider, fileUri(join(root, 'exact.txt')))).toMatchObject({
      text: 'x'.repeat(100),
    });
    const error = await rejection(provider.read(fileUri(join(root, 'over.txt')), ctx()));
    expect(error).toBeInstanceOf(TooLargeError);
    expect((error as TooLargeError).code).toBe('too_large');
    expect((error as TooLargeError).data).toEqual({
      uri: fileUri(join(root, 'over.txt')),
      size: 101,
      limit: 100,
      measure: 'size',
      // How to read it in parts: a first byte range (the cap's worth) and, as it may be text, lines.
      parts: {
        bytes: `${fileUri(join(root, 'over.txt'))}?bytes=0-99`,
        lines: `${fileUri(join(root, 'over.txt'))}?lines=1-1000`,
      },
    });
    expect((error as TooLargeError).message).toMatch(/Read it in parts by byte ranges/);
  });

  it('still lists a file over the cap, with its true size', async () => {
    const root = makeRoot({ 'big.bin': Buffer.alloc(300) });
    const provider = await make({ root, maxReadBytes: 100 });
    const items = (await walkProvider(provider, 10)).items;
    expect(items.map((i) => [i.name, i.size])).toEqual([['big.bin', 300]]);
  });

  it('reads a file larger than the synchronous chunk in full and byte for byte', async () => {
    const bytes = Buffer.alloc(3 * 1024 * 1024 + 17);
    for (let i = 0; i < bytes.length; i += 1) bytes[i] = (i * 31) & 0xff;
    const root = makeRoot({ 'large.bin': bytes });
    const provider = await make({ root });
    const content = await readOne(provider, fileUri(join(root, 'large.bin')));
    expect(Buffer.from((content as { blob: string }).blob, 'base64').equals(bytes)).toBe(true);
  });

  it('stops reading a large file when the call is already aborted', async () => {
    const root = makeRoot({ 'large.bin': Buffer.alloc(256 * 1024) });
    const provider = await make({ root });
    const controller = new AbortController();
    controller.abort();
    const error = await rejection(
      provider.read(fileUri(join(root, 'large.bin')), { signal: controller.signal }),
    );
    expect((error as Error).name).toBe('AbortError');
  });

  it('refuses a maxReadBytes that is not a positive whole number', () => {
    const root = makeRoot();
    for (const maxReadBytes of [0, -1, 1.5, Number.NaN]) {
      expect(() => filesProvider({ root, maxReadBytes }), String(maxReadBytes)).toThrow(
        /maxReadBytes/,
      );
    }
  });

  it('refuses a root that does not exist or is a file', () => {
    const root = makeRoot({ 'file.txt': 'x' });
    expect(() => filesProvider({ root: join(root, 'nope') })).toThrow(/does not exist/);
    expect(() => filesProvider({ root: join(root, 'file.txt') })).toThrow(/not a directory/);
  });
});

describe('files provider: directory reads', () => {
  let root: string;
  let provider: Provider;
  const uri = (rel: string): string => fileUri(join(root, rel));

  beforeAll(async () => {
    root = makeRoot({
      '.gitignore': 'ignored.log\nbuild/\n',
      'a.txt': 'hello',
      'sub/inner.txt': 'inner',
      'sub/deeper/x.txt': 'x',
      'ignored.log': 'nope',
      'build/out.js': 'nope',
      '.git/HEAD': 'ref',
    });
    symlinkSync('a.txt', join(root, 'link.txt'));
    symlinkSync('/etc/hostname', join(root, 'link-out'));
    provider = await make({ root });
  });

  async function children(
    dirUri: string,
  ): Promise<{ content: ResourceContents; children: DirectoryChild[] }> {
    const content = await readOne(provider, dirUri);
    expect(content.mimeType).toBe('inode/directory');
    return {
      content,
      children: JSON.parse((content as { text: string }).text) as DirectoryChild[],
    };
  }

  it('reads the root as a sorted one-level listing of name, uri, kind and size, hiding .git, ignored and outside entries', async () => {
    const { content, children: list } = await children(provider.root);
    expect(content.uri).toBe(provider.root);
    expect(list).toEqual([
      { name: '.gitignore', uri: uri('.gitignore'), kind: 'file', size: 19 },
      { name: 'a.txt', uri: uri('a.txt'), kind: 'file', size: 5 },
      { name: 'link.txt', uri: uri('link.txt'), kind: 'file', size: 5 },
      { name: 'sub', uri: `${uri('sub')}/`, kind: 'directory' },
    ]);
  });

  it('reads a subdirectory, with or without a trailing slash, without recursing into it', async () => {
    for (const dirUri of [uri('sub'), `${uri('sub')}/`]) {
      const { content, children: list } = await children(dirUri);
      expect(content.uri).toBe(`${uri('sub')}/`);
      expect(list).toEqual([
        { name: 'deeper', uri: `${uri('sub/deeper')}/`, kind: 'directory' },
        { name: 'inner.txt', uri: uri('sub/inner.txt'), kind: 'file', size: 5 },
      ]);
    }
  });

  it('answers a read of an ignored directory or of .git as not found', async () => {
    await expectNotFound(provider.read(`${uri('build')}/`, ctx()));
    await expectNotFound(provider.read(`${uri('.git')}/`, ctx()));
  });

  it('refuses a directory listing over maxReadBytes with TooLargeError (measure listing)', async () => {
    const big = makeRoot(
      Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`file-${i}.txt`, 'x'])),
    );
    const small = await make({ root: big, maxReadBytes: 500 });
    const error = await rejection(small.read(fileUri(big), ctx()));
    expect(error).toBeInstanceOf(TooLargeError);
    expect((error as TooLargeError).data['measure']).toBe('listing');
  });
});

describe('files provider: .git, .gitignore and exclude', () => {
  let root: string;
  const uri = (rel: string): string => fileUri(join(root, rel));
  const tree = {
    '.gitignore': '*.log\n!keep.log\nbuild/\n!build/keep.txt\n/only-root.txt\n',
    'debug.log': 'ignored',
    'keep.log': 're-included by !keep.log',
    'build/out.js': 'ignored directory',
    'build/keep.txt': 'cannot be re-included: its directory is excluded',
    'build/.gitignore': '!*\n',
    'only-root.txt': 'anchored pattern, ignored here',
    'a.tmp': 'the nested *.tmp rule does not apply up here',
    'pkg/.gitignore': '*.tmp\n!important.log\n',
    'pkg/a.tmp': 'ignored by the nested .gitignore',
    'pkg/important.log': 're-included by the nested negation',
    'pkg/other.log': 'still ignored by the root *.log',
    'pkg/only-root.txt': 'not matched by the anchored root pattern',
    'pkg/build/x.js': 'build/ matches at any depth',
    'pkg/deeper/.gitignore': '!*.tmp\n',
    'pkg/deeper/b.tmp': 're-included one level further down',
    'pkg/.git/config': 'a nested .git is skipped too',
    '.git/HEAD': 'ref: refs/heads/main',
    '.git/objects/ab/cdef': 'object',
    'secret/key.txt': 'excluded by pattern',
    'notes.secret': 'excluded by pattern',
    'readme.md': 'listed',
  };
  const listedByDefault = [
    '.gitignore',
    'a.tmp',
    'keep.log',
    'pkg/.gitignore',
    'pkg/deeper/.gitignore',
    'pkg/deeper/b.tmp',
    'pkg/important.log',
    'pkg/only-root.txt',
    'notes.secret',
    'readme.md',
    'secret/key.txt',
  ].sort();

  beforeAll(() => {
    root = makeRoot(tree);
  });

  it('honours .gitignore files, nested ones below their own directory, with ! negation, pruning ignored directories', async () => {
    const provider = await make({ root });
    expect((await listedRel(provider)).sort()).toEqual(listedByDefault);
  });

  it('answers reads of ignored files, of files in ignored directories and of .git exactly like missing files', async () => {
    const provider = await make({ root });
    for (const rel of [
      'debug.log',
      'build/out.js',
      'build/keep.txt',
      'build/.gitignore',
      'only-root.txt',
      'pkg/a.tmp',
      'pkg/other.log',
      'pkg/build/x.js',
      'pkg/.git/config',
      '.git/HEAD',
      '.git/objects/ab/cdef',
    ]) {
      await expectNotFound(provider.read(uri(rel), ctx()), uri(rel));
    }
    for (const rel of listedByDefault)
      await expect(provider.read(uri(rel), ctx())).resolves.toBeDefined();
  });

  it('serves ignored files when gitignore is false, but still not .git', async () => {
    const provider = await make({ root, gitignore: false });
    const listed = await listedRel(provider);
    expect(listed).toEqual(
      expect.arrayContaining([
        'debug.log',
        'build/out.js',
        'build/keep.txt',
        'pkg/a.tmp',
        'pkg/build/x.js',
        'only-root.txt',
      ]),
    );
    expect(listed.some((rel) => rel.split('/').includes('.git'))).toBe(false);
    expect(await readOne(provider, uri('build/out.js'))).toMatchObject({
      text: 'ignored directory',
    });
    await expectNotFound(provider.read(uri('.git/HEAD'), ctx()));
  });

  it('serves .git when includeGitDir is true', async () => {
    const provider = await make({ root, includeGitDir: true });
    const listed = await listedRel(provider);
    expect(listed).toEqual(
      expect.arrayContaining(['.git/HEAD', '.git/objects/ab/cdef', 'pkg/.git/config']),
    );
    expect(await readOne(provider, uri('.git/HEAD'))).toMatchObject({
      text: 'ref: refs/heads/main',
    });
    expect(listed).not.toContain('debug.log');
  });

  it('leaves out exclude patterns from listing and read, on top of .gitignore and without it', async () => {
    for (const gitignore of [true, false]) {
      const provider = await make({ root, gitignore, exclude: ['*.secret', 'secret/'] });
      const listed = await listedRel(provider);
      expect(listed).not.toContain('notes.secret');
      expect(listed).not.toContain('secret/key.txt');
      expect(listed).toContain('readme.md');
      await expectNotFound(provider.read(uri('notes.secret'), ctx()));
      await expectNotFound(provider.read(uri('secret/key.txt'), ctx()));
      await expectNotFound(provider.read(`${uri('secret')}/`, ctx()));
    }
  });

  it('does not list a symlink to an ignored file or into .git, since it would not read it', async () => {
    const linkRoot = makeRoot({
      '.gitignore': 'hidden/\n',
      'hidden/secret.txt': 'hidden',
      '.git/config': '[core]',
      'ok.txt': 'ok',
    });
    symlinkSync('hidden/secret.txt', join(linkRoot, 'link-to-ignored.txt'));
    symlinkSync('.git/config', join(linkRoot, 'link-to-git'));
    const provider = await make({ root: linkRoot });
    // Whatever is listed must be readable (the provider contract); these two are refused on read.
    await expectNotFound(provider.read(fileUri(join(linkRoot, 'link-to-ignored.txt')), ctx()));
    await expectNotFound(provider.read(fileUri(join(linkRoot, 'link-to-git')), ctx()));
    expect(await listedRel(provider)).toEqual(['.gitignore', 'ok.txt']);
    const dir = JSON.parse(
      ((await readOne(provider, provider.root)) as { text: string }).text,
    ) as DirectoryChild[];
    expect(dir.map((c) => c.name)).toEqual(['.gitignore', 'ok.txt']);
  });

  it('honours exclude patterns when the root is the filesystem root itself', async () => {
    const secretRoot = makeRoot({ 'secret.txt': 'excluded', 'plain.txt': 'plain' });
    const rel = secretRoot.slice(1);
    const provider = await make({ root: '/', exclude: [`${rel}/secret.txt`] });
    expect(provider.root).toBe('file:///');
    expect(await readOne(provider, fileUri(join(secretRoot, 'plain.txt')))).toMatchObject({
      text: 'plain',
    });
    await expectNotFound(provider.read(fileUri(join(secretRoot, 'secret.txt')), ctx()));
  });
});

describe('files provider: listing order and resumption', () => {
  it('walks depth-first in segment order, so a/b comes before a-c though "a-c" < "a/b" as strings', async () => {
    const root = makeRoot({
      'a/b': '1',
      'a-c': '2',
      'a.txt': '3',
      ab: '4',
      'B.txt': '5',
      'a/a/z': '6',
      'a/c': '7',
    });
    const provider = await make({ root });
    const expected = ['B.txt', 'a/a/z', 'a/b', 'a/c', 'a-c', 'a.txt', 'ab'];
    expect(await listedRel(provider)).toEqual(expected);
    for (const limit of [1, 2, 3])
      expect(await listedRel(provider, limit), `limit ${limit}`).toEqual(expected);
  });

  it('resumes after a key whose file was deleted, at the next file in order', async () => {
    const root = makeRoot({ f1: '1', f2: '2', f3: '3', f4: '4', f5: '5' });
    const provider = await make({ root });
    const first = await provider.list(undefined, 2, ctx());
    expect(first.items.map((i) => i.name)).toEqual(['f1', 'f2']);
    expect(first.last).toBe('f2');
    unlinkSync(join(root, 'f2'));
    unlinkSync(join(root, 'f3'));
    const second = await provider.list(first.last, 2, ctx());
    expect(second.items.map((i) => i.name)).toEqual(['f4', 'f5']);
  });

  it('resumes after a key whose whole directory was deleted, at the next entry after that directory', async () => {
    const root = makeRoot({ 'd1/x': '1', 'd2/a': '2', 'd2/b': '3', 'd2/sub/c': '4', 'd3/y': '5' });
    const provider = await make({ root });
    const first = await provider.list(undefined, 2, ctx());
    expect(first.items.map((i) => i.title)).toEqual(['d1/x', 'd2/a']);
    rmSync(join(root, 'd2'), { recursive: true });
    const rest = await provider.list(first.last, 10, ctx());
    expect(rest.items.map((i) => i.title)).toEqual(['d3/y']);
    expect(rest.last).toBeUndefined();
  });

  it('neither repeats nor drops unchanged files when files are added and removed between pages', async () => {
    const root = makeRoot({ b: '1', d: '2', f: '3', h: '4' });
    const provider = await make({ root });
    const first = await provider.list(undefined, 2, ctx());
    writeFileSync(join(root, 'a'), 'new, before the key');
    writeFileSync(join(root, 'e'), 'new, after the key');
    unlinkSync(join(root, 'f'));
    const rest = await walkFrom(provider, first.last, 1);
    expect([...first.items.map((i) => i.name), ...rest]).toEqual(['b', 'd', 'e', 'h']);
  });

  it('refuses resume keys that could not name a path inside the root', async () => {
    const provider = await make({ root: makeRoot() });
    for (const key of ['', '..', '../etc/passwd', 'a/../b', './a', 'a//b', '/etc', 'a/', 'a\0b']) {
      expect(provider.isValidKey?.(key), JSON.stringify(key)).toBe(false);
    }
    for (const key of ['a', 'a/b', '.gitignore', 'dir/.hidden', 'with space', '..a', 'a..']) {
      expect(provider.isValidKey?.(key), JSON.stringify(key)).toBe(true);
    }
  });
});

async function walkFrom(
  provider: Provider,
  after: string | undefined,
  limit: number,
): Promise<string[]> {
  const names: string[] = [];
  let key = after;
  for (let i = 0; i < 1000; i += 1) {
    const page = await provider.list(key, limit, ctx());
    names.push(...page.items.map((item) => item.name));
    if (page.last === undefined) return names;
    key = page.last;
  }
  throw new Error('walk did not end');
}

describe('files provider: symlink loops', () => {
  it('lists a tree holding a directory symlinked to its parent, a self-loop and a two-link loop without following them', async () => {
    const root = makeRoot({ 'top.txt': 'top', 'dir/file.txt': 'file' });
    symlinkSync('..', join(root, 'dir', 'up'));
    symlinkSync('.', join(root, 'dir', 'here'));
    symlinkSync('self', join(root, 'self'));
    symlinkSync('loop-b', join(root, 'loop-a'));
    symlinkSync('loop-a', join(root, 'loop-b'));
    const provider = await make({ root });
    // Following a loop would list dir/up/dir/file.txt and the like, or never end (the test timeout).
    for (const limit of [1, 1000])
      expect(await listedRel(provider, limit)).toEqual(['dir/file.txt', 'top.txt']);
    await expectNotFound(provider.read(fileUri(join(root, 'self')), ctx()));
    await expectNotFound(provider.read(fileUri(join(root, 'loop-a')), ctx()));
    const dir = JSON.parse(
      ((await readOne(provider, `${fileUri(join(root, 'dir'))}/`)) as { text: string }).text,
    ) as DirectoryChild[];
    expect(dir.map((c) => [c.name, c.kind])).toEqual([
      ['file.txt', 'file'],
      ['here', 'directory'],
      ['up', 'directory'],
    ]);
  });

  it('skips a directory it cannot read instead of failing the whole listing', async () => {
    const root = makeRoot({ 'a.txt': 'a', 'locked/b.txt': 'b', 'z.txt': 'z' });
    chmodSync(join(root, 'locked'), 0o000);
    try {
      const provider = await make({ root });
      const listed = await listedRel(provider);
      // As root the directory is still readable; either way the listing completes.
      expect(listed[0]).toBe('a.txt');
      expect(listed[listed.length - 1]).toBe('z.txt');
    } finally {
      chmodSync(join(root, 'locked'), 0o755);
    }
  });
});
