// Search only shows what the caller may read: a token scoped to docs/ searching over a real HTTP
// socket (real SDK client, both eras) for a word only a denied file holds gets nothing; for a word
// both hold, only the allowed hit — and no nextCursor pointing at the denied one, no snippet of it,
// its content nowhere in any response body.
import { randomBytes } from 'node:crypto';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpEndpoint } from '../../src/http/app.js';
import { filesProvider } from '../../src/providers/files/index.js';
import type { Reservoir } from '../../src/server/index.js';
import { ERAS } from '../helpers/clients.js';
import { dirUri, fileUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { closeClient, connectWithToken, makeToken, WireLog } from '../security/harness.js';
import { backends, dropBackends } from './backends.js';
import { serveSearch } from './served.js';

const ID = randomBytes(6).toString('hex');
const SECRET_WORD = `zanzibar${ID}`;
const docs = makeToken('docs-bot', ['docs']);
const admin = makeToken('admin', ['admin']);

const BACKENDS = backends();
afterAll(() => dropBackends(BACKENDS));

describe.each(BACKENDS)('on $name', (backend) => {
  const log = new WireLog();
  let root: string;
  let state: string;
  let reservoir: Reservoir;
  let endpoint: HttpEndpoint;

  beforeAll(async () => {
    root = makeTempDir('reservoir-search-access-');
    state = makeTempDir('reservoir-search-state-');
    writeTree(root, {
      'docs/a.md': 'The shared word is marmalade.\n',
      'secrets/plan.md': `marmalade and ${SECRET_WORD} are secret\n`,
      'secrets/more.md': `marmalade marmalade marmalade ${SECRET_WORD}\n`,
    });
    const base = dirUri(root);
    ({ reservoir, endpoint } = await serveSearch({
      providers: [filesProvider({ root })],
      rules: [
        { scopes: ['docs'], allow: [`${base}docs/**`, 'tool:*'] },
        { scopes: ['admin'], allow: ['file:///**', 'tool:*'] },
      ],
      tokens: [docs, admin],
      stateDir: state,
      backend,
    }));
    await (
      await reservoir.search!.open()
    ).ready;
  });

  afterAll(async () => {
    await reservoir?.close();
    removeTree(root);
    removeTree(state);
  });

  describe.each(ERAS)('search under access rules, %s era', (era) => {
    let scoped: Client;
    let full: Client;
    const search = async (
      client: Client,
      args: Record<string, unknown>,
    ): Promise<{ hits: { uri: string; snippet: string }[]; nextCursor?: string }> => {
      const result = (await client.callTool({
        name: 'search_resources',
        arguments: args,
      })) as CallToolResult;
      expect(result.isError ?? false).toBe(false);
      return result.structuredContent as {
        hits: { uri: string; snippet: string }[];
        nextCursor?: string;
      };
    };

    beforeAll(async () => {
      scoped = await connectWithToken(era, endpoint.url, docs.token, log);
      full = await connectWithToken(era, endpoint.url, admin.token);
    });

    afterAll(async () => {
      await closeClient(scoped);
      await closeClient(full);
    });

    it('gives a scoped token nothing for a word only denied files hold, where the admin finds both', async () => {
      expect((await search(scoped, { query: SECRET_WORD })).hits).toEqual([]);
      expect((await search(full, { query: SECRET_WORD })).hits).toHaveLength(2);
    });

    it('gives a scoped token only its hit for a shared word, with no cursor to the denied ones, even one hit per page', async () => {
      const page = await search(scoped, { query: 'marmalade', limit: 1 });
      expect(page.hits.map((h) => h.uri)).toEqual([fileUri(root, 'docs/a.md')]);
      expect(page.nextCursor).toBeUndefined();
      const admin = await search(full, { query: 'marmalade', limit: 1 });
      expect(admin.nextCursor).toEqual(expect.any(String));
    });

    it('refuses the admin cursor to the scoped token (cursors are bound to the principal)', async () => {
      const admin = await search(full, { query: 'marmalade', limit: 1 });
      const result = (await scoped.callTool({
        name: 'search_resources',
        arguments: { query: 'marmalade', limit: 1, cursor: admin.nextCursor },
      })) as CallToolResult;
      expect(result.isError).toBe(true);
    });

    it('never sends the scoped client a denied file name or its content', async () => {
      await log.settle();
      for (const exchange of log.exchanges) {
        if (exchange.request.includes(SECRET_WORD)) {
          expect(exchange.response).not.toContain('secrets/');
          continue;
        }
        expect(exchange.response).not.toContain(SECRET_WORD);
        expect(exchange.response).not.toContain('secrets/');
      }
    });
  });
});
