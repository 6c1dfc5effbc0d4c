/**
 * `resources/directory/read` on s3:// prefixes, through the real SDK client in both eras (in
 * process over stdio pipes and over HTTP) against a real S3 API server (s3rver): a prefix's
 * children in S3's key order — odd keys (space, '#', unicode), a child prefix beside keys that sort
 * around it — paged behind sealed cursors; an object or a missing prefix answered as not found;
 * access rules leave denied children out; an old cursor whose continuation token is forgotten
 * resumes after the same child. (s3rver names a prefix only when it holds an object directly:
 * `deep/` holds one beside `deep/x/`.)
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Client } from '@modelcontextprotocol/client';
import { AccessPolicy } from '../../src/core/access.js';
import { createAuthenticator } from '../../src/http/auth.js';
import { s3Provider } from '../../src/providers/s3/index.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { Cleanup, connectHttp, ERAS, TARGETS, type Target } from '../helpers/clients.js';
import { LocalS3 } from '../providers/s3-server.js';
import { closeClient, connectWithToken, makeToken } from '../security/harness.js';
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

const BUCKET = 'dirread-bucket';
const ROOT = `s3://${BUCKET}/docs/`;
const team = makeToken('team', ['team']);
const cleanup = new Cleanup();
let s3: LocalS3;
let open: Reservoir;
let openUrl: string;
let guarded: Reservoir;
let guardedUrl: string;

beforeAll(async () => {
  s3 = await LocalS3.start();
  await s3.bucket(BUCKET);
  await s3.putMany(BUCKET, [
    ['docs/a b#1.md', '# spaced and hashed\n'],
    ['docs/a-b.txt', 'dash\n'],
    ['docs/a/inner.md', 'inner\n'],
    ['docs/deep/top.md', 'top\n'],
    ['docs/deep/x/y.md', 'y\n'],
    ['docs/secret/keys.txt', 'k\n'],
    ['docs/z.bin', randomBytes(7)],
    ['docs/ünï.txt', 'unicode\n'],
    ['outside.txt', 'not under the prefix\n'],
  ]);
  open = createReservoir({
    providers: [s3Provider(s3.source(BUCKET, { prefix: 'docs/' }))],
    pageSize: 2,
  });
  openUrl = (await open.listen({ host: '127.0.0.1', port: 0 })).url;
  guarded = createReservoir({
    providers: [s3Provider(s3.source(BUCKET, { prefix: 'docs/' }))],
    access: new AccessPolicy({
      rules: [
        { scopes: ['team'], allow: [`${ROOT}**`], deny: [`${ROOT}secret/**`, `${ROOT}a-b.txt`] },
      ],
    }),
  });
  guardedUrl = (
    await guarded.listen({
      host: '127.0.0.1',
      port: 0,
      auth: createAuthenticator({
        tokens: [{ name: team.name, sha256: team.sha256, scopes: team.scopes }],
      }),
    })
  ).url;
}, 60_000);

afterAll(async () => {
  await cleanup.run();
  await open?.close();
  await guarded?.close();
  await s3?.close();
});

async function connect(target: Target): Promise<Client> {
  if (target.transport === 'http') return (await connectHttp(target.era, openUrl, cleanup)).client;
  const connection = await connectInProcess(open, target.era);
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

describe.each(TARGETS)('resources/directory/read on S3, $transport $era era', (target) => {
  it("pages through a prefix's children in key order, odd keys and child prefixes included", async () => {
    const client = await connect(target);
    const { pages, children } = await readAll(client, ROOT);
    expect(pages).toBe(4);
    expect(children.map((c) => [c.name, c.uri, c.mimeType, c.size])).toEqual([
      ['a b#1.md', `${ROOT}a%20b%231.md`, 'text/markdown', 20],
      ['a-b.txt', `${ROOT}a-b.txt`, 'text/plain', 5],
      ['a', `${ROOT}a/`, 'inode/directory', undefined],
      ['deep', `${ROOT}deep/`, 'inode/directory', undefined],
      ['secret', `${ROOT}secret/`, 'inode/directory', undefined],
      ['z.bin', `${ROOT}z.bin`, 'application/octet-stream', 7],
      ['ünï.txt', `${ROOT}%C3%BCn%C3%AF.txt`, 'text/plain', 8],
    ]);
    const deep = await readAll(client, `${ROOT}deep/`);
    expect(deep.children.map((c) => [c.name, c.uri])).toEqual([
      ['top.md', `${ROOT}deep/top.md`],
      ['x', `${ROOT}deep/x/`],
    ]);
    const x = await readAll(client, deep.children[1]!.uri);
    expect(x.children.map((c) => [c.name, c.uri, c.size])).toEqual([
      ['y.md', `${ROOT}deep/x/y.md`, 2],
    ]);
  });

  it('answers an object, a missing prefix and a prefix outside the source as not found', async () => {
    const client = await connect(target);
    for (const uri of [`${ROOT}z.bin`, `${ROOT}nope/`, `s3://${BUCKET}/`, `${ROOT}a-b.txt/`]) {
      await expect(read(client, uri), uri).rejects.toMatchObject({ code: -32602 });
    }
  });

  it('refuses a forged cursor and a cursor minted for another prefix', async () => {
    const client = await connect(target);
    const first = await read(client, ROOT);
    await expect(read(client, ROOT, `${first.nextCursor!}x`)).rejects.toMatchObject({
      code: -32602,
    });
    await expect(read(client, `${ROOT}deep/`, first.nextCursor)).rejects.toMatchObject({
      code: -32602,
      message: expect.stringMatching(/another list/),
    });
  });
});

describe.each(ERAS)('resources/directory/read on S3 under access rules, %s era', (era) => {
  it('names no child the principal may not see, and refuses a denied prefix', async () => {
    const client = await connectWithToken(era, guardedUrl, team.token);
    try {
      const root = await readAll(client, ROOT);
      expect(root.children.map((c) => c.name)).toEqual([
        'a b#1.md',
        'a',
        'deep',
        'z.bin',
        'ünï.txt',
      ]);
      await expect(read(client, `${ROOT}secret/`)).rejects.toMatchObject({ code: -32602 });
    } finally {
      await closeClient(client);
    }
  });
});

describe('S3 directory pages', () => {
  it('resume after a child prefix from its position alone (no remembered continuation token)', async () => {
    const provider = s3Provider(s3.source(BUCKET, { prefix: 'docs/' }));
    try {
      const ctx = { signal: AbortSignal.timeout(10_000) };
      const first = await provider.readDirectory(ROOT, undefined, 3, ctx);
      expect(first.items.map((c) => c.name)).toEqual(['a b#1.md', 'a-b.txt', 'a']);
      expect(first.last).toBe('a/');
      // A fresh provider has no token for this position: it resumes with StartAfter.
      const fresh = s3Provider(s3.source(BUCKET, { prefix: 'docs/' }));
      try {
        const next = await fresh.readDirectory(ROOT, first.last, 3, ctx);
        expect(next.items.map((c) => c.name)).toEqual(['deep', 'secret', 'z.bin']);
      } finally {
        await fresh.close();
      }
    } finally {
      await provider.close();
    }
  });
});
