// Pins the SQL provider end to end, through the real SDK client over an in-process stdio pair
// (`createReservoir(...).serveStdio` on PassThrough streams), in both protocol eras, on a SQLite file
// the test creates: the listing, following a page's next link, the templates and their completion,
// a named query, the sql_query tool (a read, a refusal as an isError result), a bad limit as
// -32602 with the connection alive, and a committed write reaching a subscriber as `updated`.
import { join } from 'node:path';
import { ProtocolError } from '@modelcontextprotocol/client';
import { loadSqliteDriver } from '../../src/core/sqlite-driver.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERAS } from '../helpers/clients.js';
import { removeDir, tempDir } from '../providers/helpers.js';
import {
  connectInProcess,
  Recorder,
  waitFor,
  watchUris,
  type InProcessStdio,
} from '../subscriptions/harness.js';
import { sqlProvider } from '../../src/providers/sql/index.js';
import { sqlQueryTool } from '../../src/providers/sql/tool.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';

const Database = loadSqliteDriver();

describe.each(ERAS)('sql provider end to end (%s era)', (era) => {
  let dir: string;
  let path: string;
  let reservoir: Reservoir;
  let connection: InProcessStdio;

  beforeAll(async () => {
    dir = tempDir('reservoir-sql-e2e-');
    path = join(dir, 'shop.db');
    const db = new Database(path);
    db.exec(`CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT NOT NULL, price REAL);
      INSERT INTO items (label, price) VALUES ('apple', 1.5), ('banana', 0.25), ('cherry', 4), ('date', 3);`);
    db.close();
    const provider = sqlProvider({
      path,
      pageRows: 2,
      pollIntervalMs: 50,
      queries: {
        cheaper: {
          sql: 'SELECT label FROM items WHERE price < ? ORDER BY label',
          params: [{ name: 'max', type: 'number' }],
        },
      },
    });
    reservoir = createReservoir({ providers: [provider], tools: [sqlQueryTool(provider)] });
    connection = await connectInProcess(reservoir, era);
  });

  afterAll(async () => {
    await connection?.close();
    await reservoir?.close();
    removeDir(dir);
  });

  it('lists the schema and the table, and pages rows through next links', async () => {
    const { client } = connection;
    const listed = await client.listResources();
    expect(listed.resources.map((r) => r.uri)).toEqual([
      'db://shop/schema',
      'db://shop/tables/items/rows',
    ]);
    const labels: string[] = [];
    let uri: string | null = 'db://shop/tables/items/rows';
    while (uri !== null) {
      const read = await client.readResource({ uri });
      expect(read.contents[0]).toMatchObject({ uri, mimeType: 'application/json' });
      const page = JSON.parse((read.contents[0] as { text: string }).text) as {
        rows: { label: string }[];
        next: string | null;
      };
      labels.push(...page.rows.map((r) => r.label));
      uri = page.next;
    }
    expect(labels).toEqual(['apple', 'banana', 'cherry', 'date']);
  });

  it('serves templates with completion, and a named query with a typed parameter', async () => {
    const { client } = connection;
    const templates = (await client.listResourceTemplates()).resourceTemplates.map(
      (t) => t.uriTemplate,
    );
    expect(templates).toEqual([
      'db://shop/tables/{table}/rows{?after,limit,format}',
      'db://shop/tables/{table}/schema',
      'db://shop/queries/cheaper{?max}',
    ]);
    const tables = await client.complete({
      ref: { type: 'ref/resource', uri: 'db://shop/tables/{table}/schema' },
      argument: { name: 'table', value: 'it' },
    });
    expect(tables.completion.values).toEqual(['items']);
    const query = await client.readResource({ uri: 'db://shop/queries/cheaper?max=2' });
    expect(JSON.parse((query.contents[0] as { text: string }).text)).toMatchObject({
      columns: ['label'],
      rows: [['apple'], ['banana']],
      rowCount: 2,
    });
  });

  it('answers a limit over the row cap with -32602 and keeps the connection', async () => {
    const { client } = connection;
    const error = await client
      .readResource({ uri: 'db://shop/tables/items/rows?limit=100000' })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).code).toBe(-32602);
    expect(
      (await client.readResource({ uri: 'db://shop/tables/items/schema' })).contents,
    ).toHaveLength(1);
  });

  it('runs sql_query reads and answers refusals as isError results', async () => {
    const { client } = connection;
    const ok = await client.callTool({
      name: 'sql_query_shop',
      arguments: { sql: 'SELECT count(*) AS n FROM items WHERE price > ?', params: [1] },
    });
    expect(ok.isError).toBeFalsy();
    expect(ok.structuredContent).toMatchObject({ columns: ['n'], rows: [[3]], truncated: false });
    const refused = await client.callTool({
      name: 'sql_query_shop',
      arguments: { sql: 'DELETE FROM items' },
    });
    expect(refused.isError).toBe(true);
    expect((refused.content as { text: string }[])[0]!.text).toMatch(/refused/);
  });

  it('delivers a committed write to a subscriber of the table as updated', async () => {
    const { client } = connection;
    const recorder = new Recorder(client);
    const uri = 'db://shop/tables/items/rows';
    const watching = await watchUris(client, era, [uri]);
    const db = new Database(path);
    db.prepare('INSERT INTO items (label, price) VALUES (?, ?)').run(`fig-${era}`, 2);
    db.close();
    await waitFor(() => recorder.updates(uri) >= 1, 'the table update');
    await watching.stop();
    await waitFor(() => reservoir.subscriptions.stats().watches === 0, 'the watch to stop');
  });
});
