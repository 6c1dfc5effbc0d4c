// Access rules match what people type: a folder named café, résumé (NFD on disk), "my docs", a#b,
// 100%, [draft] or a*b is served under URIs that percent-encode those names, and a rule naming it in
// any spelling — as typed, percent-encoded in either case, in the other Unicode normal form, with
// a glob character escaped — hides (deny) or shows (allow) exactly that folder on every route: the
// resource list, reads, search and completion, through the real SDK client over HTTP in both eras.
// A list-only deny hides the folder from lists and search but leaves its files readable.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessPolicy, type AccessRule } from '../../src/core/access.js';
import { createAuthenticator } from '../../src/http/auth.js';
import type { HttpEndpoint } from '../../src/http/app.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { builtinTools } from '../../src/tools/index.js';
import { listAllPages, type Era } from '../helpers/clients.js';
import { dirUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { closeClient, connectWithToken, makeToken, settle, type Token } from './harness.js';

const ID = randomBytes(6).toString('hex');
const COMMON = `common${ID}`;
const NFD_RESUME = 're\u0301sume\u0301';

/** Folder names as they are on disk; `axb` and `plain` are decoys no rule below names. */
const FOLDERS = ['café', NFD_RESUME, 'my docs', 'a#b', '100%', '[draft]', 'a*b', 'axb', 'plain'];

/** Each folder a rule names, and the spellings of it a rule may use. */
const SPELLINGS: { folder: string; spellings: string[] }[] = [
  { folder: 'café', spellings: ['café', 'caf%C3%A9', 'caf%c3%a9', 'cafe\u0301', 'cafe%CC%81'] },
  {
    folder: NFD_RESUME,
    spellings: ['résumé', NFD_RESUME, 'r%C3%A9sum%C3%A9', 're%CC%81sume%CC%81'],
  },
  { folder: 'my docs', spellings: ['my docs', 'my%20docs'] },
  { folder: 'a#b', spellings: ['a#b', 'a%23b', 'a\\#b'] },
  { folder: '100%', spellings: ['100%', '100%25', '100\\%'] },
  { folder: '[draft]', spellings: ['%5Bdraft%5D', '%5bdraft%5d', '\\[draft\\]'] },
  { folder: 'a*b', spellings: ['a%2Ab', 'a\\*b'] },
];

interface Case {
  folder: string;
  spelling: string;
  pattern: string;
  deny: Token;
  allow: Token;
  era: Era;
}

let root: string;
let state: string;
let base: string;
let reservoir: Reservoir;
let endpoint: HttpEndpoint;
const cases: Case[] = [];
const listOnly = makeToken('list-only', ['list-only']);

const fileOf = (folder: string): string => pathToFileURL(join(root, folder, 'note.md')).href;
const nfc = (text: string): string => text.normalize('NFC');

beforeAll(async () => {
  root = makeTempDir('reservoir-rule-spellings-');
  state = makeTempDir('reservoir-rule-spellings-state-');
  writeTree(
    root,
    Object.fromEntries(FOLDERS.map((folder) => [`${folder}/note.md`, `${COMMON} in ${folder}\n`])),
  );
  base = dirUri(root);
  const rules: AccessRule[] = [
    { scopes: ['list-only'], allow: ['**'] },
    { scopes: ['list-only'], operations: ['list'], deny: [`${base}café/**`] },
  ];
  let n = 0;
  for (const { folder, spellings } of SPELLINGS) {
    for (const spelling of [...spellings, ...(folder === 'café' ? ['file:///**/café/**'] : [])]) {
      const pattern = spelling.startsWith('file:') ? spelling : `${base}${spelling}/**`;
      const c: Case = {
        folder,
        spelling,
        pattern,
        deny: makeToken(`deny-${n}`, [`deny-${n}`]),
        allow: makeToken(`allow-${n}`, [`allow-${n}`]),
        era: n % 2 === 0 ? '2025' : '2026',
      };
      rules.push(
        { scopes: [`deny-${n}`], allow: ['**'], deny: [pattern] },
        { scopes: [`allow-${n}`], allow: [pattern, 'tool:*'] },
      );
      cases.push(c);
      n += 1;
    }
  }
  reservoir = createReservoir({
    providers: [filesProvider({ root })],
    access: new AccessPolicy({ rules }),
    search: { stateDir: state },
  });
  const search = reservoir.search!;
  for (const tool of builtinTools(reservoir.registry, { search: { open: () => search.open() } }))
    reservoir.tools.add(tool);
  const tokens = [listOnly, ...cases.flatMap((c) => [c.deny, c.allow])];
  endpoint = await reservoir.listen({
    host: '127.0.0.1',
    port: 0,
    auth: createAuthenticator({
      tokens: tokens.map(({ name, sha256, scopes }) => ({ name, sha256, scopes })),
    }),
  });
  await (
    await search.open()
  ).ready;
});

afterAll(async () => {
  await reservoir?.close();
  removeTree(root);
  removeTree(state);
});

/** What one client sees of the tree: listed files, readable files, search hits, and root completions (folder names, NFC). */
async function view(
  client: Client,
): Promise<{ listed: string[]; readable: string[]; found: string[]; completed: string[] }> {
  const listed = (await listAllPages(client))
    .flatMap((page) => page.resources.map((r) => r.uri))
    .sort();
  const readable: string[] = [];
  for (const folder of FOLDERS) {
    const read = await settle(client.readResource({ uri: fileOf(folder) }));
    if (read.ok) readable.push(fileOf(folder));
  }
  const result = (await client.callTool({
    name: 'search_resources',
    arguments: { query: COMMON, limit: 50 },
  })) as CallToolResult;
  expect(result.isError ?? false).toBe(false);
  const found = (result.structuredContent as { hits: { uri: string }[] }).hits
    .map((h) => h.uri)
    .sort();
  const completion = await client.complete({
    ref: { type: 'ref/resource', uri: `${base}{+path}` },
    argument: { name: 'path', value: '' },
  });
  const completed = completion.completion.values.map((v) => nfc(v).replace(/\/$/, '')).sort();
  return { listed, readable: readable.sort(), found, completed };
}

describe('access rules in every spelling of a name', () => {
  it('hide exactly the folder a deny names, in every spelling, on list, read, search and completion', async () => {
    for (const c of cases) {
      const client = await connectWithToken(c.era, endpoint.url, c.deny.token);
      try {
        const seen = await view(client);
        const expected = FOLDERS.filter((f) => f !== c.folder)
          .map(fileOf)
          .sort();
        const label = `deny ${JSON.stringify(c.pattern)}`;
        expect(seen.listed, label).toEqual(expected);
        expect(seen.readable, label).toEqual(expected);
        expect(seen.found, label).toEqual(expected);
        expect(seen.completed, label).toEqual(
          FOLDERS.filter((f) => f !== c.folder)
            .map(nfc)
            .sort(),
        );
      } finally {
        await closeClient(client);
      }
    }
  });

  it('show exactly the folder an allow names, in every spelling, on list, read, search and completion', async () => {
    for (const c of cases) {
      const client = await connectWithToken(c.era, endpoint.url, c.allow.token);
      try {
        const seen = await view(client);
        const label = `allow ${JSON.stringify(c.pattern)}`;
        expect(seen.listed, label).toEqual([fileOf(c.folder)]);
        expect(seen.readable, label).toEqual([fileOf(c.folder)]);
        expect(seen.found, label).toEqual([fileOf(c.folder)]);
        // `file:///**/café/**` may match below any folder (plain/café/…): completion offers them all.
        expect(seen.completed, label).toEqual(
          c.pattern.startsWith('file:///**/') ? FOLDERS.map(nfc).sort() : [nfc(c.folder)],
        );
      } finally {
        await closeClient(client);
      }
    }
  });

  it('hides a folder denied for list only from lists and search, and leaves its files readable', async () => {
    for (const era of ['2025', '2026'] as const) {
      const client = await connectWithToken(era, endpoint.url, listOnly.token);
      try {
        const seen = await view(client);
        const others = FOLDERS.filter((f) => f !== 'café')
          .map(fileOf)
          .sort();
        expect(seen.listed).toEqual(others);
        expect(seen.found).toEqual(others);
        expect(seen.readable).toEqual(FOLDERS.map(fileOf).sort());
      } finally {
        await closeClient(client);
      }
    }
  });
});
