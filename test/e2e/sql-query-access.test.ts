// A table denied by the access rules cannot be read through `sql_query_<name>`: the tool can query
// every table of its source whatever the rules say of their resources, so it is offered only to a
// principal that may read everything there. Through `reservoir serve --config` over HTTP and the
// real SDK client in both eras: a principal with one table denied, and one allowed only part of the
// source, neither see the tool in tools/list nor can call it (the unknown-tool error, as for a tool
// denied by name); a principal that may read the whole source queries it; a deny under another
// source changes nothing.
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StreamableHTTPClientTransport, type Client } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadSqliteDriver } from '../../src/core/sqlite-driver.js';
import { Cleanup, ERAS, newClient, spawnHttpServer, type Era } from '../helpers/clients.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';

const TOKENS = {
  full: 'full-0123456789-abcdefghijklmnopqrstuvwxyz',
  table: 'table-0123456789-abcdefghijklmnopqrstuvwxyz',
  narrow: 'narrow-0123456789-abcdefghijklmnopqrstuvwxyz',
  other: 'other-0123456789-abcdefghijklmnopqrstuvwxyz',
};
type Who = keyof typeof TOKENS;

let dir: string;
let config: string;
const cleanup = new Cleanup();
afterEach(() => cleanup.run());

beforeAll(() => {
  dir = makeTempDir('reservoir-sql-access-');
  const Database = loadSqliteDriver();
  for (const name of ['app', 'logs']) {
    const db = new Database(join(dir, `${name}.db`));
    db.exec(`CREATE TABLE pub (id INTEGER PRIMARY KEY, v TEXT);
      INSERT INTO pub (v) VALUES ('public row');
      CREATE TABLE salaries (name TEXT, amount INTEGER);
      INSERT INTO salaries VALUES ('ceo', 999999);`);
    db.close();
  }
  const sha = (token: string): string => createHash('sha256').update(token).digest('hex');
  config = join(dir, 'reservoir.yaml');
  writeFileSync(
    config,
    [
      'sources:',
      ...['app', 'logs'].flatMap((name) => [
        '  - type: sql',
        `    name: ${name}`,
        `    path: ${join(dir, `${name}.db`)}`,
        '    queryTool: true',
      ]),
      'server:',
      '  http:',
      '    auth:',
      '      tokens:',
      ...Object.entries(TOKENS).map(
        ([name, token]) => `        - { name: ${name}, sha256: "${sha(token)}" }`,
      ),
      'access:',
      '  rules:',
      "    - principals: ['token:full']",
      "      allow: ['db://app/**', 'db://logs/**', 'tool:*']",
      "    - principals: ['token:table']",
      "      allow: ['db://app/**', 'tool:*']",
      "      deny: ['db://app/tables/salaries/**']",
      "    - principals: ['token:narrow']",
      "      allow: ['db://app/tables/pub/**', 'tool:*']",
      "    - principals: ['token:other']",
      "      allow: ['db://app/**', 'db://logs/**', 'tool:*']",
      "      deny: ['db://logs/tables/salaries/**']",
      '',
    ].join('\n'),
  );
});

afterAll(() => removeTree(dir));

async function connectAs(url: string, era: Era, who: Who): Promise<Client> {
  const client = newClient(era);
  cleanup.add(() => client.close());
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${TOKENS[who]}` } },
    }),
  );
  return client;
}

async function toolNames(client: Client): Promise<string[]> {
  return (await client.listTools()).tools.map((tool) => tool.name);
}

const SALARIES = { name: 'sql_query_app', arguments: { sql: 'SELECT * FROM salaries' } };

describe.each(ERAS)('sql_query under access rules (%s era, over HTTP)', (era) => {
  it('offers the query tool only to a principal that may read every table of its source', async () => {
    const server = await spawnHttpServer([], ['--config', config], cleanup);

    const full = await connectAs(server.url, era, 'full');
    expect(await toolNames(full)).toEqual(
      expect.arrayContaining(['sql_query_app', 'sql_query_logs']),
    );
    const rows = await full.callTool(SALARIES);
    expect(rows.isError).not.toBe(true);
    expect(rows.structuredContent).toMatchObject({ rows: [['ceo', 999999]] });

    // One table denied: the table's resources are refused, and so is the tool that could query it.
    const table = await connectAs(server.url, era, 'table');
    await expect(table.readResource({ uri: 'db://app/tables/salaries/rows' })).rejects.toThrow(
      /not found/i,
    );
    expect(await toolNames(table)).not.toContain('sql_query_app');
    await expect(table.callTool(SALARIES)).rejects.toThrow(/unknown tool 'sql_query_app'/);
    await expect(
      table.callTool({ name: 'sql_query_app', arguments: { sql: 'SELECT v FROM pub' } }),
    ).rejects.toThrow(/unknown tool 'sql_query_app'/);
    // What it may read is still read as resources.
    const pub = await table.readResource({ uri: 'db://app/tables/pub/rows' });
    expect(JSON.stringify(pub.contents)).toContain('public row');

    // Part of the source allowed, the rest by the default deny: the same.
    const narrow = await connectAs(server.url, era, 'narrow');
    expect(await toolNames(narrow)).not.toContain('sql_query_app');
    await expect(narrow.callTool(SALARIES)).rejects.toThrow(/unknown tool 'sql_query_app'/);

    // A deny under another source keeps that source's tool only.
    const other = await connectAs(server.url, era, 'other');
    const names = await toolNames(other);
    expect(names).toContain('sql_query_app');
    expect(names).not.toContain('sql_query_logs');
    expect((await other.callTool(SALARIES)).structuredContent).toMatchObject({
      rows: [['ceo', 999999]],
    });
    await expect(
      other.callTool({ name: 'sql_query_logs', arguments: { sql: 'SELECT * FROM salaries' } }),
    ).rejects.toThrow(/unknown tool 'sql_query_logs'/);
  }, 60_000);
});
