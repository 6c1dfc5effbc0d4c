// Search tells a restricted caller nothing about what it cannot see: over a real HTTP socket (real
// SDK client), a word only denied files hold answers exactly as an unknown word does; the scores and
// order of its visible hits do not move when more denied files come to hold the word; a `source:`
// it may not see gets the error a source that does not exist gets, naming only what it may see.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpEndpoint } from '../../src/http/app.js';
import { filesProvider } from '../../src/providers/files/index.js';
import type { SearchService } from '../../src/search/service.js';
import type { Reservoir } from '../../src/server/index.js';
import { dirUri, fileUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { closeClient, connectWithToken, makeToken } from '../security/harness.js';
import { eventually } from '../helpers/eventually.js';
import { backends, dropBackends } from './backends.js';
import { serveSearch } from './served.js';

const ID = randomBytes(6).toString('hex');
const HUSHED = `hushword${ID}`;
const UNKNOWN = `nowhere${ID}`;
const docs = makeToken('docs-bot', ['docs']);
const careful = makeToken('careful', ['careful']);
const admin = makeToken('admin', ['admin']);

const BACKENDS = backends();
afterAll(() => dropBackends(BACKENDS));

describe.each(BACKENDS)('on $name', (backend) => {
  let handbook: string;
  let vault: string;
  let state: string;
  let reservoir: Reservoir;
  let endpoint: HttpEndpoint;
  let service: SearchService;
  let scoped: Client;
  let partial: Client;
  let full: Client;

  interface Answer {
    isError: boolean;
    text: string;
    structured: unknown;
  }

  async function call(client: Client, args: Record<string, unknown>): Promise<Answer> {
    const result = (await client.callTool({
      name: 'search_resources',
      arguments: args,
    })) as CallToolResult;
    const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
    return { isError: result.isError ?? false, text, structured: result.structuredContent };
  }

  /** An answer with the word asked for spelled the same, so two queries' answers can be compared. */
  function asked(answer: Answer, word: string): Answer {
    return JSON.parse(JSON.stringify(answer).replaceAll(word, 'WORD')) as Answer;
  }

  function hitsOf(answer: Answer): { uri: string; score: number }[] {
    return ((answer.structured as { hits: { uri: string; score: number }[] }).hits ?? []).map(
      ({ uri, score }) => ({ uri, score }),
    );
  }

  beforeAll(async () => {
    handbook = makeTempDir('reservoir-handbook-');
    vault = makeTempDir('reservoir-vault-');
    state = makeTempDir('reservoir-search-state-');
    const secrets: Record<string, string> = {};
    for (let i = 0; i < 40; i += 1)
      secrets[`secrets/s${i}.md`] = `${HUSHED} marmalade ${'filler '.repeat(i)}\n`;
    writeTree(handbook, {
      'docs/a.md': 'The shared word is marmalade.\n',
      'docs/b.md': `marmalade ${'and a much longer text around it '.repeat(20)}\n`,
      'docs/c.txt': 'marmalade in a text file\n',
      ...secrets,
    });
    writeTree(vault, { 'v.md': `${HUSHED} marmalade\n` });
    const base = dirUri(handbook);
    ({ reservoir, endpoint } = await serveSearch({
      providers: [filesProvider({ root: handbook }), filesProvider({ root: vault })],
      rules: [
        { scopes: ['docs'], allow: [`${base}docs/**`, 'tool:*'] },
        {
          scopes: ['careful'],
          allow: [`${base}**`, 'tool:*'],
          deny: ['**/*.txt', `${base}secrets/**`],
        },
        { scopes: ['admin'], allow: ['file:///**', 'tool:*'] },
      ],
      tokens: [docs, careful, admin],
      stateDir: state,
      backend,
    }));
    service = await reservoir.search!.open();
    await service.ready;
    scoped = await connectWithToken('2026', endpoint.url, docs.token);
    partial = await connectWithToken('2026', endpoint.url, careful.token);
    full = await connectWithToken('2025', endpoint.url, admin.token);
  });

  afterAll(async () => {
    await closeClient(scoped);
    await closeClient(partial);
    await closeClient(full);
    await reservoir?.close();
    removeTree(handbook);
    removeTree(vault);
    removeTree(state);
  });

  describe('search by a caller that access rules restrict', () => {
    it('answers a word only denied files hold exactly as it answers an unknown word', async () => {
      expect((await call(full, { query: HUSHED })).isError).toBe(false);
      expect(hitsOf(await call(full, { query: HUSHED, limit: 100 }))).toHaveLength(41);
      for (const client of [scoped, partial]) {
        for (const args of [
          {},
          { limit: 1 },
          { under: dirUri(handbook) },
          { mimeType: 'text/markdown' },
          { source: handbook.split('/').pop() },
        ]) {
          const hushed = await call(client, { query: HUSHED, ...args });
          const unknown = await call(client, { query: UNKNOWN, ...args });
          expect(hushed.isError).toBe(false);
          expect(asked(hushed, HUSHED)).toEqual(asked(unknown, UNKNOWN));
        }
        expect(asked(await call(client, { query: `${HUSHED}*` }), HUSHED)).toEqual(
          asked(await call(client, { query: `${UNKNOWN}*` }), UNKNOWN),
        );
        expect(asked(await call(client, { query: `${HUSHED} OR zzz${ID}` }), HUSHED)).toEqual(
          asked(await call(client, { query: `${UNKNOWN} OR zzz${ID}` }), UNKNOWN),
        );
      }
    });

    it('gives only visible hits, in the same order with the same scores however many denied files hold the word', async () => {
      const before = hitsOf(await call(scoped, { query: 'marmalade' }));
      expect(before.map((h) => h.uri)).toEqual([
        fileUri(handbook, 'docs/c.txt'),
        fileUri(handbook, 'docs/a.md'),
        fileUri(handbook, 'docs/b.md'),
      ]);
      const partialBefore = hitsOf(await call(partial, { query: 'marmalade' }));
      expect(partialBefore.map((h) => h.uri).sort()).toEqual([
        fileUri(handbook, 'docs/a.md'),
        fileUri(handbook, 'docs/b.md'),
      ]);
      const adminBefore = hitsOf(await call(full, { query: 'marmalade', limit: 100 }));

      for (let i = 0; i < 30; i += 1)
        writeFileSync(join(handbook, 'secrets', `more${i}.md`), `marmalade marmalade ${i}\n`);
      for (let i = 0; i < 10; i += 1) writeFileSync(join(vault, `more${i}.md`), `marmalade ${i}\n`);
      await waitFor(
        async () =>
          hitsOf(await call(full, { query: 'marmalade', limit: 100 })).length ===
          adminBefore.length + 40,
      );

      expect(hitsOf(await call(scoped, { query: 'marmalade' }))).toEqual(before);
      expect(hitsOf(await call(partial, { query: 'marmalade' }))).toEqual(partialBefore);
    });

    it('pages a restricted caller through its visible hits only, each once', async () => {
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const answer = await call(scoped, {
          query: 'marmalade',
          limit: 1,
          ...(cursor === undefined ? {} : { cursor }),
        });
        const structured = answer.structured as { hits: { uri: string }[]; nextCursor?: string };
        seen.push(...structured.hits.map((h) => h.uri));
        cursor = structured.nextCursor;
      } while (cursor !== undefined);
      expect(seen).toEqual(hitsOf(await call(scoped, { query: 'marmalade' })).map((h) => h.uri));
    });

    it('answers a source: it may not see as one that does not exist, naming only sources it may see', async () => {
      const vaultName = vault.split('/').pop()!;
      const handbookName = handbook.split('/').pop()!;
      const hidden = await call(scoped, { query: 'marmalade', source: vaultName });
      const missing = await call(scoped, { query: 'marmalade', source: `nosuch${ID}` });
      expect(hidden.isError).toBe(true);
      expect(hidden.text.replace(vaultName, 'NAME')).toBe(
        missing.text.replace(`nosuch${ID}`, 'NAME'),
      );
      expect(missing.text).toContain(handbookName);
      expect(missing.text).not.toContain(vaultName);
      const inQuery = await call(scoped, { query: `marmalade source:${vaultName}` });
      expect(inQuery.text.replace(vaultName, 'NAME')).toBe(
        (await call(scoped, { query: `marmalade source:nosuch${ID}` })).text.replace(
          `nosuch${ID}`,
          'NAME',
        ),
      );
      expect((await call(full, { query: 'marmalade', source: vaultName })).isError).toBe(false);
    });
  });

  /** Waits for `check` to hold, re-checking once the index is idle again (a generous deadline, never a measure). */
  async function waitFor(check: () => Promise<boolean>): Promise<void> {
    await eventually(
      async () => {
        await service.idle();
        return check();
      },
      'the index to take the change',
      { deadlineMs: 20_000, stepMs: 50 },
    );
  }
});
