// A git blob shared by several paths is indexed once: its text is stored one time, yet a search
// for a word in it returns every path holding it (each judged by the caller's access rules), and
// a ref move where one of N files changed writes one text. Through the real SDK client over HTTP,
// both eras.
import { randomBytes } from 'node:crypto';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpEndpoint } from '../../src/http/app.js';
import { gitProvider } from '../../src/providers/git/index.js';
import type { SearchService } from '../../src/search/service.js';
import type { Reservoir } from '../../src/server/index.js';
import { ERAS } from '../helpers/clients.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';
import { commit, makeRepo, repoName } from '../providers/git-helpers.js';
import { closeClient, connectWithToken, makeToken } from '../security/harness.js';
import { backends, dropBackends } from './backends.js';
import { serveSearch } from './served.js';

const ID = randomBytes(6).toString('hex');
const SHARED = `quokka${ID}`;
const OTHERS = 20;
const docs = makeToken('docs-bot', ['docs']);
const admin = makeToken('admin', ['admin']);

const BACKENDS = backends();
afterAll(() => dropBackends(BACKENDS));

describe.each(BACKENDS)('on $name', (backend) => {
  let repo: string;
  let state: string;
  let reservoir: Reservoir;
  let endpoint: HttpEndpoint;
  let service: SearchService;
  let base: string;

  const files: Record<string, string> = {
    'docs/a.md': `the ${SHARED} text\n`,
    'docs/b.md': `the ${SHARED} text\n`,
    'secret/c.md': `the ${SHARED} text\n`,
  };
  for (let i = 0; i < OTHERS; i += 1) files[`other/f${i}.txt`] = `file ${i} says wombat${i}\n`;

  beforeAll(async () => {
    repo = makeRepo(files);
    state = makeTempDir('reservoir-search-state-');
    base = `git://${repoName(repo)}/main/`;
    ({ reservoir, endpoint } = await serveSearch({
      providers: [gitProvider({ path: repo, pollIntervalMs: 50 })],
      rules: [
        { scopes: ['docs'], allow: [`${base}docs/**`, `${base}other/**`, 'tool:*'] },
        { scopes: ['admin'], allow: ['git://**', 'tool:*'] },
      ],
      tokens: [docs, admin],
      stateDir: state,
      backend,
    }));
    service = await reservoir.search!.open();
    await service.ready;
  });

  afterAll(async () => {
    await reservoir?.close();
    removeTree(repo);
    removeTree(state);
  });

  async function uris(client: Client, query: string): Promise<string[]> {
    const result = (await client.callTool({
      name: 'search_resources',
      arguments: { query },
    })) as CallToolResult;
    expect(result.isError ?? false).toBe(false);
    return (result.structuredContent as { hits: { uri: string }[] }).hits.map((h) => h.uri).sort();
  }

  describe('a blob shared by several paths', () => {
    it('is stored once: one text for the three paths, one for each other file', async () => {
      const totals = await service.totals();
      expect(totals.docs).toBe(OTHERS + 3);
      expect(totals.blobs).toBe(OTHERS + 1);
      expect(service.writes().blobsWritten).toBe(OTHERS + 1);
    });

    describe.each(ERAS)('searched in the %s era', (era) => {
      let scoped: Client;
      let full: Client;
      beforeAll(async () => {
        scoped = await connectWithToken(era, endpoint.url, docs.token);
        full = await connectWithToken(era, endpoint.url, admin.token);
      });
      afterAll(async () => {
        await closeClient(scoped);
        await closeClient(full);
      });

      it('returns every path holding it, each judged by the access rules', async () => {
        expect(await uris(full, SHARED)).toEqual([
          `${base}docs/a.md`,
          `${base}docs/b.md`,
          `${base}secret/c.md`,
        ]);
        expect(await uris(scoped, SHARED)).toEqual([`${base}docs/a.md`, `${base}docs/b.md`]);
      });
    });
  });

  describe('a ref move where one of N files changed', () => {
    it('writes that one text and nothing else', async () => {
      const client = await connectWithToken(ERAS[0]!, endpoint.url, admin.token);
      try {
        const before = service.writes();
        const word = `platypus${ID}`;
        commit(repo, { 'other/f7.txt': `file 7 now says ${word}\n` }, 'change one file');
        // The watcher polls every 50 ms; wait for the index to report the change, then settle.
        // The listener is armed before each check: progress reported while a check runs wakes it.
        for (;;) {
          let off = (): void => undefined;
          const progressed = new Promise<void>((resolve) => {
            off = service.onProgress(() => resolve());
          });
          try {
            if ((await uris(client, word)).length > 0) break;
            await progressed;
          } finally {
            off();
          }
          await service.idle();
        }
        expect(await uris(client, word)).toEqual([`${base}other/f7.txt`]);
        expect(await uris(client, 'wombat7')).toEqual([]);
        const after = service.writes();
        expect(after.blobsWritten - before.blobsWritten).toBe(1);
        expect(after.docsWritten - before.docsWritten).toBe(1);
        expect((await service.totals()).blobs).toBe(OTHERS + 1);
      } finally {
        await closeClient(client);
      }
    });
  });
});
