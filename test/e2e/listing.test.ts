// Pins what resources/list and resources/templates/list show across transports and eras: several
// roots merge, in the order given on the command line, behind one cursor (an empty root and a
// page boundary between roots included); nested .gitignore files (with '!' re-includes) and .git/
// are honoured; --no-gitignore, --include-git-dir and --exclude change that; and the templates list
// carries ttlMs 60000 / public in the 2026 era and no cache fields in 2025.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import {
  Cleanup,
  connectStdio,
  connectTarget,
  eraFields,
  expectedEraFields,
  listAllPages,
  spawnHttpServer,
  TARGETS,
  type HttpServerProcess,
} from '../helpers/clients.js';
import { fileUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';

const PAGE_SIZE = 4;
const cleanup = new Cleanup();
/** Served in this order: deliberately not the roots' name order. */
let roots: { path: string; files: string[] }[];
let http: HttpServerProcess;

beforeAll(async () => {
  await ensureBuilt();
  const parent = makeTempDir();
  cleanup.add(() => removeTree(parent));
  const make = (name: string, files: Record<string, string>): string => {
    const path = join(parent, name);
    mkdirSync(path);
    writeTree(path, files);
    return path;
  };
  const zeta = make('zeta', { 'one.txt': '1', 'two.txt': '2', 'three/four.txt': '4' });
  const empty = make('empty', {});
  const alpha = make('alpha', {
    '.gitignore': '*.log\nbuild/\n',
    'a.md': '# a\n',
    'x.log': 'ignored\n',
    'build/out.js': 'ignored\n',
    'sub/.gitignore': '!keep.log\n',
    'sub/keep.log': 're-included\n',
    'sub/drop.log': 'still ignored: the nested file re-includes keep.log only\n',
    '.git/HEAD': 'ref: refs/heads/main\n',
  });
  const mid = make('mid', { 'b.txt': 'b', 'c/d.txt': 'd', 'c/e.txt': 'e', 'f.txt': 'f' });
  roots = [
    { path: zeta, files: ['one.txt', 'three/four.txt', 'two.txt'] },
    { path: empty, files: [] },
    { path: alpha, files: ['.gitignore', 'a.md', 'sub/.gitignore', 'sub/keep.log'] },
    { path: mid, files: ['b.txt', 'c/d.txt', 'c/e.txt', 'f.txt'] },
  ];
  http = await spawnHttpServer(
    roots.map((r) => r.path),
    ['--page-size', String(PAGE_SIZE)],
    cleanup,
  );
});

afterAll(() => cleanup.run());

describe.each(TARGETS)('over $transport in the $era era', (target) => {
  let client: Client;

  beforeAll(async () => {
    client = await connectTarget(
      target,
      {
        roots: roots.map((r) => r.path),
        args: ['--page-size', String(PAGE_SIZE)],
        httpUrl: http.url,
      },
      cleanup,
    );
  });

  it('merges several roots in command-line order behind one cursor, each file once, pages full across root boundaries', async () => {
    const pages = await listAllPages(client);
    const expected = roots.flatMap((r) => r.files.map((rel) => fileUri(r.path, rel)));
    expect(pages.flatMap((p) => p.resources.map((r) => r.uri))).toEqual(expected);
    expect(pages.map((p) => p.resources.length)).toEqual([4, 4, 3]);
    for (const page of pages.slice(0, -1)) expect(typeof page.nextCursor).toBe('string');
    // Titles are relative to each file's own root.
    expect(pages[0]!.resources.map((r) => r.title)).toEqual([
      'one.txt',
      'three/four.txt',
      'two.txt',
      '.gitignore',
    ]);
  });

  it("honours nested .gitignore files with '!' re-includes, and leaves .git/ out", async () => {
    const { resources } = await client.listResources();
    const alpha = roots[2]!.path;
    const titles = resources
      .filter((r) => r.uri.startsWith(fileUri(alpha, '')))
      .map((r) => r.title);
    expect(titles).toContain('sub/keep.log');
    expect(titles).not.toContain('x.log');
    expect(titles).not.toContain('sub/drop.log');
    expect(titles).not.toContain('build/out.js');
    expect(titles.filter((t) => t?.startsWith('.git/'))).toEqual([]);
  });

  it('answers resources/templates/list with the era cache fields (ttlMs 60000 public in 2026, none in 2025)', async () => {
    const result = await client.request({ method: 'resources/templates/list', params: {} });
    // Which templates exist is the providers' business; each must at least be well-formed.
    for (const template of result.resourceTemplates)
      expect(template).toMatchObject({ name: expect.any(String), uriTemplate: expect.any(String) });
    expect(eraFields(target.era, result)).toEqual(expectedEraFields(target.era, 60_000));
  });
});

describe('source flags over stdio', () => {
  const titlesWith = async (args: string[]): Promise<string[]> => {
    const { client, close } = await connectStdio('2026', [roots[2]!.path], args, cleanup);
    const { resources } = await client.listResources();
    await close();
    return resources.map((r) => r.title!).sort();
  };

  it('lists .gitignore’d files with --no-gitignore (but still not .git/)', async () => {
    expect(await titlesWith(['--no-gitignore'])).toEqual([
      '.gitignore',
      'a.md',
      'build/out.js',
      'sub/.gitignore',
      'sub/drop.log',
      'sub/keep.log',
      'x.log',
    ]);
  });

  it('lists .git/ contents with --include-git-dir', async () => {
    expect(await titlesWith(['--include-git-dir'])).toEqual([
      '.git/HEAD',
      '.gitignore',
      'a.md',
      'sub/.gitignore',
      'sub/keep.log',
    ]);
  });

  it('leaves out paths matching --exclude patterns, listed and read alike', async () => {
    expect(await titlesWith(['--exclude', '*.md', '--exclude', 'sub/'])).toEqual(['.gitignore']);
    const { client } = await connectStdio('2025', [roots[2]!.path], ['--exclude', '*.md'], cleanup);
    await expect(
      client.readResource({ uri: fileUri(roots[2]!.path, 'a.md') }),
    ).rejects.toMatchObject({ code: -32602 });
  });
});
