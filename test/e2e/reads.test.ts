// Pins reads end to end through the real SDK client, over stdio and HTTP, in both eras: every
// listed URI — including names with spaces, '#', '%', '?', non-ASCII, and NFC/NFD twins — reads
// back the file's exact bytes (text as UTF-8, binary and invalid UTF-8 as a base64 blob), empty
// files read as empty, and a directory URI (with or without its trailing slash) reads as a JSON
// listing of its children.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client, ReadResourceResult } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import {
  Cleanup,
  connectTarget,
  eraFields,
  expectedEraFields,
  spawnHttpServer,
  TARGETS,
  type HttpServerProcess,
} from '../helpers/clients.js';
import { dirUri, fileUri, makeTempDir, removeTree, sha256, writeTree } from '../helpers/tree.js';

const NFC = 'caf\u00e9.txt';
const NFD = 'cafe\u0301.txt';

/** Every file the server must list and read, by relative path. */
const FILES: Record<string, string | Uint8Array> = {
  'plain.txt': 'hello, wörld\n',
  'notes.md': '# Notes\n\n- ünïcödé ✓ 日本語 🎉\n',
  'data.bin': randomBytes(100 * 1024 + 7), // over the 64 KiB synchronous-read threshold
  'image.png': randomBytes(1024),
  'no-extension': randomBytes(300),
  'bad-utf8.txt': Buffer.from([0x68, 0x69, 0xff, 0xfe, 0x0a]),
  'nul-bytes.dat': Buffer.from('text\0with\0nul'),
  'empty.txt': '',
  'empty-no-extension': '',
  'with space.txt': 'space\n',
  'hash#name.txt': 'hash\n',
  'pct%20name.txt': 'percent-twenty\n',
  '100%.txt': 'percent\n',
  'q?mark.txt': 'question\n',
  'semi;colon,comma&amp=eq.txt': 'punctuation\n',
  'ünïcödé.txt': 'unicode name\n',
  [NFC]: 'composed é\n',
  [NFD]: 'decomposed é\n',
  '日本語/ファイル.md': 'japanese\n',
  'sub dir/#nested?/file %41.txt': 'deep\n',
  'dir/a.txt': 'a\n',
  'dir/b/c.json': '{"c": true}\n',
  '.gitignore': 'ignored.log\nbuild/\n',
};
/** Present on disk but never listed or readable. */
const HIDDEN: Record<string, string> = {
  'ignored.log': 'ignored\n',
  'build/out.js': 'built\n',
  '.git/config': '[core]\n',
  '.git/HEAD': 'ref: refs/heads/main\n',
};

const cleanup = new Cleanup();
let root: string;
let http: HttpServerProcess;

beforeAll(async () => {
  await ensureBuilt();
  root = makeTempDir();
  cleanup.add(() => removeTree(root));
  writeTree(root, { ...FILES, ...HIDDEN });
  http = await spawnHttpServer([root], [], cleanup);
});

afterAll(() => cleanup.run());

function bytesOf(rel: string): Buffer {
  return readFileSync(join(root, ...rel.split('/')));
}

/** The bytes a read returned, decoded from text (UTF-8) or blob (base64). */
function contentBytes(result: ReadResourceResult): Buffer {
  expect(result.contents).toHaveLength(1);
  const content = result.contents[0]!;
  return 'blob' in content
    ? Buffer.from(content.blob, 'base64')
    : Buffer.from(content.text, 'utf8');
}

describe.each(TARGETS)('over $transport in the $era era', (target) => {
  let client: Client;

  beforeAll(async () => {
    client = await connectTarget(target, { roots: [root], httpUrl: http.url }, cleanup);
  });

  it("lists every file under its percent-encoded absolute file URL, and leaves out .git and .gitignore'd paths", async () => {
    const { resources } = await client.listResources();
    const byTitle = new Map(resources.map((r) => [r.title, r]));
    expect([...byTitle.keys()].sort()).toEqual(Object.keys(FILES).sort());
    for (const rel of Object.keys(FILES)) expect(byTitle.get(rel)?.uri).toBe(fileUri(root, rel));
    // NFC and NFD spellings of the same name are two files with two URIs.
    expect(byTitle.get(NFC)!.uri).not.toBe(byTitle.get(NFD)!.uri);
  });

  it('reads back the exact bytes of every listed file through its listed URI', async () => {
    const { resources } = await client.listResources();
    const mismatches: string[] = [];
    for (const resource of resources) {
      const result = await client.readResource({ uri: resource.uri });
      const content = result.contents[0]!;
      const expected = bytesOf(resource.title!);
      if (content.uri !== resource.uri)
        mismatches.push(`${resource.title}: content uri ${content.uri}`);
      if (!contentBytes(result).equals(expected))
        mismatches.push(`${resource.title}: bytes differ`);
      if (resource.mimeType !== undefined && content.mimeType !== resource.mimeType)
        mismatches.push(`${resource.title}: mimeType ${content.mimeType}`);
    }
    expect(mismatches).toEqual([]);
  });

  it('reads text files as UTF-8 text with the era cache fields (ttlMs 0 in 2026, none in 2025)', async () => {
    const result = await client.readResource({ uri: fileUri(root, 'notes.md') });
    expect(result.contents).toEqual([
      { uri: fileUri(root, 'notes.md'), mimeType: 'text/markdown', text: FILES['notes.md'] },
    ]);
    expect(eraFields(target.era, result)).toEqual(expectedEraFields(target.era, 0));
  });

  it('reads binary files as base64 blobs whose decoded SHA-256 equals the file’s', async () => {
    for (const rel of ['data.bin', 'image.png', 'no-extension', 'nul-bytes.dat']) {
      const result = await client.readResource({ uri: fileUri(root, rel) });
      const content = result.contents[0]!;
      expect(content, rel).toHaveProperty('blob');
      expect(sha256(contentBytes(result)), rel).toBe(sha256(bytesOf(rel)));
    }
    const png = await client.readResource({ uri: fileUri(root, 'image.png') });
    expect(png.contents[0]!.mimeType).toBe('image/png');
  });

  it('reads a .txt file that is not valid UTF-8 as a blob with the exact bytes', async () => {
    const result = await client.readResource({ uri: fileUri(root, 'bad-utf8.txt') });
    expect(result.contents[0]).toEqual({
      uri: fileUri(root, 'bad-utf8.txt'),
      mimeType: 'text/plain',
      blob: bytesOf('bad-utf8.txt').toString('base64'),
    });
  });

  it('reads empty files as one empty content', async () => {
    for (const rel of ['empty.txt', 'empty-no-extension']) {
      const result = await client.readResource({ uri: fileUri(root, rel) });
      expect(contentBytes(result).length, rel).toBe(0);
      expect(result.contents[0]!.uri, rel).toBe(fileUri(root, rel));
    }
  });

  it('reads the NFC and NFD spellings of a name as the two different files they are', async () => {
    const nfc = await client.readResource({ uri: fileUri(root, NFC) });
    const nfd = await client.readResource({ uri: fileUri(root, NFD) });
    expect(contentBytes(nfc).toString('utf8')).toBe(FILES[NFC]);
    expect(contentBytes(nfd).toString('utf8')).toBe(FILES[NFD]);
  });

  it("reads names with '#', '?' and '%' only through their encoded URIs, never as fragment or query", async () => {
    const result = await client.readResource({
      uri: fileUri(root, 'sub dir/#nested?/file %41.txt'),
    });
    expect(contentBytes(result).toString('utf8')).toBe('deep\n');
    expect(fileUri(root, 'sub dir/#nested?/file %41.txt')).toMatch(
      /\/sub%20dir\/%23nested%3F\/file%20%2541\.txt$/,
    );
    // '%20' in the name is literally "%20": its URI encodes the '%', and the decoded spelling is another (missing) file.
    const literal = await client.readResource({ uri: fileUri(root, 'pct%20name.txt') });
    expect(contentBytes(literal).toString('utf8')).toBe('percent-twenty\n');
    await expect(
      client.readResource({ uri: `${dirUri(root)}pct%20name.txt` }),
    ).rejects.toMatchObject({ code: -32602, data: { uri: `${dirUri(root)}pct%20name.txt` } });
  });

  it('reads a URI that spells non-ASCII characters unencoded as the same file', async () => {
    const result = await client.readResource({ uri: `${dirUri(root)}ünïcödé.txt` });
    expect(contentBytes(result).toString('utf8')).toBe('unicode name\n');
  });

  it('reads a directory, with or without its trailing slash, as a JSON listing of its children', async () => {
    const expected = [
      { name: 'a.txt', uri: fileUri(root, 'dir/a.txt'), kind: 'file', size: 2 },
      { name: 'b', uri: dirUri(root, 'dir/b'), kind: 'directory' },
    ];
    for (const uri of [dirUri(root, 'dir'), dirUri(root, 'dir').slice(0, -1)]) {
      const result = await client.readResource({ uri });
      expect(result.contents, uri).toHaveLength(1);
      const content = result.contents[0]!;
      expect(content, uri).toMatchObject({ uri: dirUri(root, 'dir'), mimeType: 'inode/directory' });
      expect(JSON.parse((content as { text: string }).text), uri).toEqual(expected);
    }
  });

  it("reads the root directory without .git or .gitignore'd entries, and every child URI it gives reads", async () => {
    const result = await client.readResource({ uri: dirUri(root) });
    const children = JSON.parse((result.contents[0] as { text: string }).text) as {
      name: string;
      uri: string;
      kind: string;
      size?: number;
    }[];
    const names = children.map((c) => c.name);
    expect(names).not.toContain('.git');
    expect(names).not.toContain('ignored.log');
    expect(names).not.toContain('build');
    expect(names).toEqual(
      expect.arrayContaining(['plain.txt', 'dir', 'sub dir', '日本語', NFC, NFD, '.gitignore']),
    );
    for (const child of children) {
      const read = await client.readResource({ uri: child.uri });
      if (child.kind === 'file') expect(contentBytes(read).length, child.name).toBe(child.size);
      else expect(read.contents[0]!.mimeType, child.name).toBe('inode/directory');
    }
  });

  it('answers not found for .git contents and .gitignore’d files even though they exist on disk', async () => {
    for (const rel of Object.keys(HIDDEN)) {
      await expect(client.readResource({ uri: fileUri(root, rel) }), rel).rejects.toMatchObject({
        code: -32602,
        data: { uri: fileUri(root, rel) },
      });
    }
  });
});
