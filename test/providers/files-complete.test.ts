// Pins path completion for the files templates, through the registry's `completeTemplate` (as
// `completion/complete` reaches it): shell-like completion of the segment after the last '/',
// directories first with a trailing '/', then files, each sorted; at most 100 values with an honest
// total and hasMore; dot-names only for a typed '.'; never an excluded entry (.git, .gitignore'd,
// --exclude, anything below an excluded directory) and never anything outside the root ('..',
// absolute paths, empty or '.' segments, symlinks leading out); symlinks inside offered as what they
// point to; and a cached listing that stays correct when entries or ignore rules change.
import { mkdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Registry } from '../../src/core/registry.js';
import type { Completion } from '../../src/core/types.js';
import { sdkTemplateEngine } from '../../src/mcp/templates.js';
import { filesProvider, type FilesProvider } from '../../src/providers/files/index.js';
import { ctx, fileUri, removeDir, tempDir, writeTree } from './helpers.js';

const base = tempDir('reservoir-complete-');
const root = join(base, 'root');
const outside = join(base, 'outside');
const LONG_AGO = new Date('2020-01-01T00:00:00Z');

let registry: Registry;
let provider: FilesProvider;
let plain: string;
let ranged: string;

beforeAll(() => {
  mkdirSync(root);
  mkdirSync(outside);
  const files: Record<string, string> = {
    'README.md': 'readme\n',
    'package.json': '{}\n',
    'src/core/types.ts': 'x\n',
    'src/core/registry.ts': 'x\n',
    'src/cli/index.ts': 'x\n',
    'src/config.ts': 'x\n',
    'src/.hidden.ts': 'x\n',
    'src/.hidden-dir/a.ts': 'x\n',
    '.editorconfig': 'x\n',
    '.gitignore': 'node_modules/\n*.log\n',
    'debug.log': 'x\n',
    'node_modules/pkg/index.js': 'x\n',
    '.git/HEAD': 'x\n',
    'private/notes.txt': 'x\n',
    'docs/.gitignore': 'draft-*\n',
    'docs/draft-1.md': 'x\n',
    'docs/guide.md': 'x\n',
    'with space/file #1.txt': 'x\n',
    'many/.keep': '',
  };
  for (let i = 0; i < 30; i += 1) files[`many/dir${String(i).padStart(2, '0')}/f.txt`] = 'x\n';
  for (let i = 0; i < 120; i += 1) files[`many/file${String(i).padStart(3, '0')}.txt`] = 'x\n';
  writeTree(root, files);
  writeFileSync(join(outside, 'secret.txt'), 'outside\n');
  mkdirSync(join(outside, 'dir'));
  symlinkSync(join(outside, 'secret.txt'), join(root, 'link-out.txt'));
  symlinkSync(outside, join(root, 'link-out-dir'));
  symlinkSync(join(root, 'README.md'), join(root, 'link-readme.md'));
  symlinkSync(join(root, 'src', 'core'), join(root, 'link-core'));
  symlinkSync(join(root, 'debug.log'), join(root, 'link-to-ignored.txt'));
  provider = filesProvider({ root, exclude: ['private/'] });
  registry = new Registry({ templateEngine: sdkTemplateEngine }).mount(provider);
  [ranged, plain] = provider.templates!().map((t) => t.uriTemplate) as [string, string];
});

afterAll(async () => {
  await registry.close();
  removeDir(base);
});

function complete(value: string, template = plain): Promise<Completion> {
  return registry.completeTemplate(template, 'path', value, {}, ctx());
}

async function values(value: string): Promise<string[]> {
  return (await complete(value)).values;
}

describe('path completion', () => {
  it('at the root: directories first with a trailing slash, then files, each sorted, no dot-names or exclusions', async () => {
    expect(await complete('')).toEqual({
      values: [
        'docs/',
        'link-core/',
        'many/',
        'src/',
        'with space/',
        'README.md',
        'link-readme.md',
        'package.json',
      ],
      total: 8,
      hasMore: false,
    });
  });

  it('completes the segment after the last slash within its directory', async () => {
    expect(await values('s')).toEqual(['src/']);
    expect(await values('src')).toEqual(['src/']);
    expect(await values('src/')).toEqual(['src/cli/', 'src/core/', 'src/config.ts']);
    expect(await values('src/c')).toEqual(['src/cli/', 'src/core/', 'src/config.ts']);
    expect(await values('src/co')).toEqual(['src/core/', 'src/config.ts']);
    expect(await values('src/core/')).toEqual(['src/core/registry.ts', 'src/core/types.ts']);
    expect(await values('src/core/t')).toEqual(['src/core/types.ts']);
    expect(await values('with space/f')).toEqual(['with space/file #1.txt']);
    expect(await values('README.md')).toEqual(['README.md']);
  });

  it('is the same for both templates, and ignores context', async () => {
    expect(await complete('src/', ranged)).toEqual(await complete('src/'));
    expect(await registry.completeTemplate(plain, 'path', 'src/', { lines: '1-2' }, ctx())).toEqual(
      await complete('src/'),
    );
    // `lines` needs no completion.
    expect(await registry.completeTemplate(ranged, 'lines', '1', {}, ctx())).toEqual({
      values: [],
      total: 0,
      hasMore: false,
    });
  });

  it('answers nothing when nothing matches', async () => {
    expect(await complete('zzz')).toEqual({ values: [], total: 0, hasMore: false });
    expect(await complete('src/zzz')).toEqual({ values: [], total: 0, hasMore: false });
    expect(await complete('no-such-dir/')).toEqual({ values: [], total: 0, hasMore: false });
    expect(await complete('README.md/')).toEqual({ values: [], total: 0, hasMore: false });
  });

  it('caps at 100 values with an honest total and hasMore, directories first', async () => {
    const all = await complete('many/');
    expect(all.total).toBe(150);
    expect(all.hasMore).toBe(true);
    expect(all.values).toHaveLength(100);
    expect(all.values.slice(0, 30)).toEqual(
      Array.from({ length: 30 }, (_, i) => `many/dir${String(i).padStart(2, '0')}/`),
    );
    expect(all.values[30]).toBe('many/file000.txt');
    expect(all.values[99]).toBe('many/file069.txt');
    const files = await complete('many/file');
    expect(files).toMatchObject({ total: 120, hasMore: true });
    expect(files.values).toHaveLength(100);
    expect(await complete('many/file11')).toEqual({
      values: Array.from({ length: 10 }, (_, i) => `many/file11${i}.txt`),
      total: 10,
      hasMore: false,
    });
  });

  it('offers dot-names only when the typed segment starts with a dot, and never .git', async () => {
    expect(await values('.')).toEqual(['.editorconfig', '.gitignore']);
    expect(await values('.g')).toEqual(['.gitignore']);
    expect(await values('.git/')).toEqual([]);
    expect(await values('src/.')).toEqual(['src/.hidden-dir/', 'src/.hidden.ts']);
    expect(await values('many/.')).toEqual(['many/.keep']);
  });

  it('never offers an excluded entry, nor anything below an excluded directory', async () => {
    expect(await values('n')).toEqual([]);
    expect(await values('node_modules/')).toEqual([]);
    expect(await values('node_modules/pkg/')).toEqual([]);
    expect(await values('d')).toEqual(['docs/']);
    expect(await values('docs/')).toEqual(['docs/guide.md']); // nested .gitignore
    expect(await values('docs/.')).toEqual(['docs/.gitignore']);
    expect(await values('p')).toEqual(['package.json']); // --exclude private/
    expect(await values('private/')).toEqual([]);
  });

  it.each([
    '..',
    '../',
    '../outside/',
    '../../',
    '/',
    '/etc/',
    `${outside}/`,
    './',
    './src/',
    'src/../',
    'src/../../',
    'src//',
    '//etc/',
    'src/./',
    '%2e%2e/',
    '..%2f',
    '..\\',
    'src\0/',
    'link-out-dir/',
    'link-out-dir/d',
  ])('never offers anything outside the root: %j', async (value) => {
    expect(await complete(value)).toEqual({ values: [], total: 0, hasMore: false });
  });

  it('offers symlinks inside the root as what they point to, and never ones leading out or to excluded files', async () => {
    expect(await values('link')).toEqual(['link-core/', 'link-readme.md']);
    expect(await values('link-core/')).toEqual(['link-core/registry.ts', 'link-core/types.ts']);
  });

  it('refuses values longer than any path', async () => {
    expect(await complete('a/'.repeat(5000))).toEqual({ values: [], total: 0, hasMore: false });
  });
});

describe('the listing cache', () => {
  it('sees entries added and removed in a directory it has cached', async () => {
    const dir = join(root, 'changing');
    mkdirSync(dir);
    writeFileSync(join(dir, 'one.txt'), '1');
    utimesSync(dir, LONG_AGO, LONG_AGO); // old enough to be cached
    expect(await values('changing/')).toEqual(['changing/one.txt']);
    expect(await values('changing/')).toEqual(['changing/one.txt']); // from the cache
    writeFileSync(join(dir, 'two.txt'), '2'); // the directory's mtime moves
    expect(await values('changing/')).toEqual(['changing/one.txt', 'changing/two.txt']);
    rmSync(join(dir, 'one.txt'));
    mkdirSync(join(dir, 'sub'));
    expect(await values('changing/')).toEqual(['changing/sub/', 'changing/two.txt']);
  });

  it('never trusts a listing taken while the directory was changing (same mtime tick)', async () => {
    const dir = join(root, 'racy');
    mkdirSync(dir);
    const now = new Date();
    writeFileSync(join(dir, 'a.txt'), 'a');
    utimesSync(dir, now, now);
    expect(await values('racy/')).toEqual(['racy/a.txt']);
    writeFileSync(join(dir, 'b.txt'), 'b');
    utimesSync(dir, now, now); // a change the mtime does not show
    expect(await values('racy/')).toEqual(['racy/a.txt', 'racy/b.txt']);
  });

  it('reclassifies when the ignore rules change, even if the directory did not', async () => {
    const dir = join(root, 'rules');
    mkdirSync(dir);
    writeFileSync(join(dir, 'keep.txt'), 'k');
    writeFileSync(join(dir, 'drop.txt'), 'd');
    writeFileSync(join(dir, '.gitignore'), '');
    utimesSync(dir, LONG_AGO, LONG_AGO);
    expect(await values('rules/')).toEqual(['rules/drop.txt', 'rules/keep.txt']);
    writeFileSync(join(dir, '.gitignore'), 'drop.txt\n');
    utimesSync(dir, LONG_AGO, LONG_AGO);
    expect(await values('rules/')).toEqual(['rules/keep.txt']);
  });

  it('resolves symlinks afresh: a retargeted link is reclassified', async () => {
    const dir = join(root, 'links');
    mkdirSync(dir);
    mkdirSync(join(dir, 'target-dir'));
    writeFileSync(join(dir, 'target-file'), 't');
    symlinkSync(join(dir, 'target-file'), join(dir, 'ln'));
    utimesSync(dir, LONG_AGO, LONG_AGO);
    expect(await values('links/l')).toEqual(['links/ln']);
    rmSync(join(dir, 'target-file'));
    utimesSync(dir, LONG_AGO, LONG_AGO);
    expect(await values('links/l')).toEqual([]); // dangling now
  });
});

// How fast is bench/sections/completion.mjs's to print (cold and warm, p50/p99).
describe('a wide directory', () => {
  it('completes in a 5,000-entry directory, each prefix with its own matches', async () => {
    const dir = join(base, 'wide');
    mkdirSync(dir);
    for (let i = 0; i < 5_000; i += 1)
      writeFileSync(join(dir, `f${String(i).padStart(4, '0')}.txt`), '');
    utimesSync(dir, LONG_AGO, LONG_AGO);
    const wide = new Registry({ templateEngine: sdkTemplateEngine }).mount(
      filesProvider({ root: dir }),
    );
    try {
      const template = `${fileUri(dir)}/{+path}`;
      const first = await wide.completeTemplate(template, 'path', 'f1', {}, ctx());
      expect(first).toMatchObject({ total: 1_000, hasMore: true });
      for (let i = 0; i < 50; i += 1) {
        const answer = await wide.completeTemplate(template, 'path', `f1${i % 10}`, {}, ctx());
        expect(answer).toMatchObject({ total: 100, hasMore: false });
        expect(answer.values[0]).toBe(`f1${i % 10}00.txt`);
      }
    } finally {
      await wide.close();
    }
  });
});
