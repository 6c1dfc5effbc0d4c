// SQLite through the built CLI (`reservoir serve --config`, the bundled dist/cli), with the real SDK
// client over a real stdio pipe: named queries and `sql_query` run in a child process that is handed
// a function's source text (providers/sql/sqlite-child.ts), so they prove the bundle left that text
// runnable on its own — a bundler helper inside it (`__name`, say) would break every query.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadSqliteDriver } from '../../src/core/sqlite-driver.js';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_PATH, ensureBuilt } from '../helpers/build.js';
import { Cleanup, CLIENT_INFO } from '../helpers/clients.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';

const Database = loadSqliteDriver();

const cleanup = new Cleanup();
let client: Client;
let stderr = '';

beforeAll(async () => {
  await ensureBuilt();
  const dir = makeTempDir('reservoir-sql-cli-');
  cleanup.add(() => removeTree(dir));
  const db = new Database(join(dir, 'shop.db'));
  db.exec(`CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT NOT NULL, price REAL);
    INSERT INTO items (label, price) VALUES ('apple', 1.5), ('banana', 0.25), ('cherry', 4);`);
  db.close();
  writeFileSync(
    join(dir, 'reservoir.yaml'),
    [
      'sources:',
      '  - type: sql',
      '    path: shop.db',
      '    name: shop',
      '    queryTool: true',
      '    queries:',
      '      cheaper:',
      '        sql: SELECT label FROM items WHERE price < ? ORDER BY label',
      '        params: [{ name: max, type: number }]',
      '',
    ].join('\n'),
  );
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI_PATH, 'serve', '--config', join(dir, 'reservoir.yaml')],
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  client = new Client(CLIENT_INFO);
  cleanup.add(() => client.close());
  await client.connect(transport);
});

afterAll(() => cleanup.run());

describe('a SQLite source served by the built CLI', () => {
  it('answers a named query with its rows', async () => {
    const result = await client.readResource({ uri: 'db://shop/queries/cheaper?max=2' });
    expect(JSON.parse((result.contents[0] as { text: string }).text), stderr).toMatchObject({
      columns: ['label'],
      rows: [['apple'], ['banana']],
      rowCount: 2,
    });
  });

  it('runs a read through sql_query', async () => {
    const result = await client.callTool({
      name: 'sql_query_shop',
      arguments: { sql: 'SELECT count(*) AS n FROM items WHERE price > ?', params: [1] },
    });
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    expect(JSON.stringify(result.structuredContent ?? result.content)).toContain('2');
  });
});
