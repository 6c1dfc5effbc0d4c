/**
 * `resources/directory/read` for every source, through the real SDK client in both eras, in
 * process over stdio pipes and over HTTP: files folders and git trees answer with their children,
 * paged behind sealed cursors, with symlinks described by where they lead and special files left
 * out; a file, a missing folder and a forged or foreign cursor get the errors reads get.
 */
import { execFileSync } from 'node:child_process';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Client } from '@modelcontextprotocol/client';
import { filesProvider } from '../../src/providers/files/index.js';
import { gitProvider } from '../../src/providers/git/index.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { Cleanup, connectHttp, TARGETS, type Target } from '../helpers/clients.js';
import { makeRepo, repoName } from '../providers/git-helpers.js';
import { tempDir, writeTree } from '../providers/helpers.js';
import { connectInProcess } from '../subscriptions/harness.js';

const Page = z.looseObject({
  resources: z.array(
    z.looseObject({
      uri: z.string(),
      name: z.string(),
      mimeType: z.string().optional(),
      size: z.number().optional(),
    }),
  ),
  nextCursor: z.string().optional(),
});
type DirectoryPage = z.infer<typeof Page>;

const cleanup = new Cleanup();
let reservoir: Reservoir;
let url: string;
let folder: string;
let base: string;
let repoRoot: string;

beforeAll(async () => {
  folder = tempDir('reservoir-dirread-');
  writeTree(folder, {
    'a.md': '# a\n',
    'b.txt': 'b\n',
    'c/d.md': 'd\n',
    'e.bin': Buffer.from([0, 1, 2]),
  });
  symlinkSync(join(folder, 'c'), join(folder, 'link-to-c'));
  execFileSync('mkfifo', [join(folder, 'fifo')]);
  base = `${pathToFileURL(folder).href}/`;
  const repo = makeRepo({
    'README.md': '# r\n',
    'docs/one.md': '1\n',
    'docs/two.md': '2\n',
    'docs/deep/three.md': '3\n',
  });
  repoRoot = `git://${repoName(repo)}/`;
  reservoir = createReservoir({
    providers: [filesProvider({ root: folder }), gitProvider({ path: repo })],
    pageSize: 2,
  });
  url = (await reservoir.listen({ host: '127.0.0.1', port: 0 })).url;
});

afterAll(async () => {
  await cleanup.run();
  await reservoir.close();
});

async function connect(target: Target): Promise<Client> {
  if (target.transport === 'http') return (await connectHttp(target.era, url, cleanup)).client;
  const connection = await connectInProcess(reservoir, target.era);
  cleanup.add(() => connection.close());
  return connection.client;
}

function read(client: Client, uri: string, cursor?: string): Promise<DirectoryPage> {
  return client.request(
    {
      method: 'resources/directory/read',
      params: { uri, ...(cursor === undefined ? {} : { cursor }) },
    },
    Page,
  );
}

async function readAll(
  client: Client,
  uri: string,
): Promise<{ pages: number; children: DirectoryPage['resources'] }> {
  const children: DirectoryPage['resources'] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await read(client, uri, cursor);
    pages += 1;
    children.push(...page.resources);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return { pages, children };
}

describe.each(TARGETS)('resources/directory/read, $transport $era era', (target) => {
  it('pages through a files folder: symlinks as where they lead, no special files', async () => {
    const client = await connect(target);
    const { pages, children } = await readAll(client, base);
    expect(pages).toBe(3);
    expect(children.map((c) => [c.name, c.mimeType, c.size])).toEqual([
      ['a.md', 'text/markdown', 4],
      ['b.txt', 'text/plain', 2],
      ['c', 'inode/directory', undefined],
      ['e.bin', 'application/octet-stream', 3],
      ['link-to-c', 'inode/directory', undefined],
    ]);
    expect(children[2]!.uri).toBe(`${base}c/`);
  });

  it('pages through a git tree at a ref, and reads a folder inside it', async () => {
    const client = await connect(target);
    const top = await readAll(client, `${repoRoot}main/`);
    expect(top.children.map((c) => [c.name, c.uri])).toEqual([
      ['README.md', `${repoRoot}main/README.md`],
      ['docs', `${repoRoot}main/docs/`],
    ]);
    const docs = await readAll(client, `${repoRoot}main/docs/`);
    expect(docs.children.map((c) => [c.name, c.mimeType, c.size])).toEqual([
      ['deep', 'inode/directory', undefined],
      ['one.md', 'text/markdown', 2],
      ['two.md', 'text/markdown', 2],
    ]);
    expect(docs.pages).toBe(2);
  });

  it('answers a file, a missing folder and a missing ref as not found', async () => {
    const client = await connect(target);
    for (const uri of [
      `${base}a.md`,
      `${base}nope/`,
      `${repoRoot}main/README.md/`,
      `${repoRoot}no-such-branch/`,
    ]) {
      await expect(read(client, uri), uri).rejects.toMatchObject({ code: -32602, data: { uri } });
    }
  });

  it('refuses a forged cursor and a cursor minted for another folder', async () => {
    const client = await connect(target);
    const first = await read(client, base);
    await expect(read(client, base, `${first.nextCursor!}x`)).rejects.toMatchObject({
      code: -32602,
    });
    await expect(read(client, `${base}c/`, first.nextCursor)).rejects.toMatchObject({
      code: -32602,
      message: expect.stringMatching(/another list/),
    });
  });
});
