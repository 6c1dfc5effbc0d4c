// Sources opted in by `search.sources`: a sql source's named queries are searchable by their name,
// description and SQL — a listed query (no required parameter) beside its result, a templated one by
// its definition alone, each under its db://NAME/queries/QUERY URI with a snippet marking the word —
// and an http source's endpoints by what the upstream answers (a local upstream). Through the real
// SDK client over the stdio wire and an HTTP socket, in both eras.
import { drawn } from '../helpers/snippet.js';
import { join } from 'node:path';
import { loadSqliteDriver } from '../../src/core/sqlite-driver.js';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpEndpoint } from '../../src/http/app.js';
import { sqlProvider } from '../../src/providers/sql/index.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { builtinTools } from '../../src/tools/index.js';
import { connectHttp, ERAS } from '../helpers/clients.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';
import { json, providerFor, Upstream } from '../providers/http-upstream.js';
import { connectInProcess } from '../subscriptions/harness.js';
import { textOf } from '../tools/helpers.js';

const Database = loadSqliteDriver();

let dir: string;
let upstream: Upstream;
let reservoir: Reservoir;
let endpoint: HttpEndpoint;

beforeAll(async () => {
  dir = makeTempDir('reservoir-search-optin-');
  const path = join(dir, 'notes.db');
  const db = new Database(path);
  db.exec(
    "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('the axolotl hides'), ('a plain row')",
  );
  db.close();
  upstream = await Upstream.start();
  upstream.route('/status', json({ state: 'the pangolin is green', checked: '2026-11-23' }));
  reservoir = createReservoir({
    providers: [
      sqlProvider({
        path,
        queries: {
          newest: {
            sql: 'SELECT body FROM notes ORDER BY id DESC',
            description: 'The newest quokka sightings',
          },
          mentioning: {
            sql: "SELECT body FROM notes WHERE body LIKE '%' || ? || '%' ORDER BY id",
            description: 'Notes that mention a wombat, or any other word',
            params: [{ name: 'needle', type: 'string' }],
          },
        },
      }),
      providerFor(upstream),
    ],
    search: { stateDir: join(dir, 'state'), sources: ['notes', 'test'] },
  });
  const search = reservoir.search!;
  for (const tool of builtinTools(reservoir.registry, { search: { open: () => search.open() } }))
    reservoir.tools.add(tool);
  endpoint = await reservoir.listen({ host: '127.0.0.1', port: 0 });
  await (
    await search.open()
  ).ready;
});

afterAll(async () => {
  await reservoir?.close();
  await upstream?.close();
  if (dir !== undefined) removeTree(dir);
});

type Hits = {
  hits: { uri: string; name: string; snippet: string; highlights: [number, number][] }[];
};

describe.each(
  ERAS.flatMap((era) => [
    { era, transport: 'stdio' as const },
    { era, transport: 'http' as const },
  ]),
)('opted-in sql and http sources over $transport in the $era era', ({ era, transport }) => {
  let client: Client;
  const search = async (query: string): Promise<Hits['hits']> => {
    const result = (await client.callTool({
      name: 'search_resources',
      arguments: { query },
    })) as CallToolResult;
    expect(result.isError ?? false, textOf(result)).toBe(false);
    return (result.structuredContent as Hits).hits;
  };

  beforeAll(async () => {
    client =
      transport === 'stdio'
        ? (await connectInProcess(reservoir, era)).client
        : (await connectHttp(era, endpoint.url)).client;
  });

  afterAll(async () => {
    await client?.close();
  });

  it('finds a listed named query by a word of its description, with the word marked in the snippet', async () => {
    // The schema document lists the queries too, so it may match as well; the query itself is a hit.
    const hits = await search('quokka');
    expect(hits.map((h) => ({ uri: h.uri, name: h.name, snippet: drawn(h) }))).toContainEqual({
      uri: 'db://notes/queries/newest',
      name: 'newest',
      snippet: expect.stringContaining('⟦quokka⟧') as unknown,
    });
    expect(hits.map((h) => h.uri).filter((uri) => uri !== 'db://notes/schema')).toEqual([
      'db://notes/queries/newest',
    ]);
  });

  it('finds a named query that needs parameters by its description, its SQL and its parameter name, under its query URI', async () => {
    for (const query of ['wombat', 'LIKE', 'needle']) {
      const hits = (await search(query)).filter((h) => h.uri !== 'db://notes/schema');
      expect(
        hits.map((h) => h.uri),
        query,
      ).toEqual(['db://notes/queries/mentioning']);
      expect(drawn(hits[0]!), query).toMatch(/⟦(wombat|LIKE|needle)⟧/);
    }
  });

  it('finds a named query by its name, and by its result as before, like table rows', async () => {
    expect((await search('newest')).map((h) => h.uri)).toContain('db://notes/queries/newest');
    expect((await search('axolotl')).map((h) => h.uri).sort()).toEqual([
      'db://notes/queries/newest',
      'db://notes/tables/notes/rows',
    ]);
  });

  it('finds an http endpoint by what the upstream answered', async () => {
    const hits = await search('pangolin');
    expect(hits.map((h) => ({ uri: h.uri, snippet: drawn(h) }))).toEqual([
      { uri: 'api://test/status', snippet: expect.stringContaining('⟦pangolin⟧') as unknown },
    ]);
  });
});
