// A plain tools/call on a 2025-era stdio connection is answered without the SDK's dispatch
// (mcp/direct/stdio.ts, mcp/direct/tools.ts, mcp/direct-tools.ts). Over the CLI's real pipes, at
// every 2025-era revision, its answer line must be byte for byte the line the SDK writes for the
// same call — one with an empty `_meta` is not plain, so the SDK answers it and gives the reference
// — for sql_query on SQLite (rows, parameters, a refused write, an unknown argument, a wrong type),
// the resource tools (a listing and its next page, a read, a missing file, a find), an unknown tool
// and a call without arguments. (The same comparison in-process, with log records, audit, blob
// caps and the rate limit: test/mcp/direct/tools-parity.test.ts.)
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSqliteDriver } from '../../src/core/sqlite-driver.js';
import { ensureBuilt } from '../helpers/build.js';
import { Cleanup } from '../helpers/clients.js';
import { eventually } from '../helpers/eventually.js';
import { fileUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { RawStdio } from '../helpers/wire.js';

const REVISIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'];
const cleanup = new Cleanup();
let dir: string;
let root: string;

beforeAll(async () => {
  await ensureBuilt();
  dir = makeTempDir('reservoir-direct-tools-');
  cleanup.add(() => removeTree(dir));
  root = join(dir, 'docs');
  writeTree(root, { 'note.txt': 'hello\n', 'a.md': '# A\n', 'sub/inner.txt': 'inner\n' });
  const Database = loadSqliteDriver();
  const db = new Database(join(dir, 'shop.db'));
  db.exec(`CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT NOT NULL, price REAL);
    INSERT INTO items (label, price) VALUES ('apple', 1.5), ('banana', 0.25), ('cherry', 4);`);
  db.close();
  writeFileSync(
    join(dir, 'reservoir.yaml'),
    [
      'sources:',
      '  - { type: files, root: docs }',
      '  - { type: sql, path: shop.db, name: shop, queryTool: true }',
      '',
    ].join('\n'),
  );
});

afterAll(() => cleanup.run());

/** What differs between two runs of one query: its elapsed time. */
function steady(line: string): string {
  return line.replace(/"elapsedMs":[\d.]+/g, '"elapsedMs":0').replace(/, [\d.]+ ms\./g, ', 0 ms.');
}

describe.each(REVISIONS)('stdio at %s: a plain tools/call answered directly', (revision) => {
  it('writes the same line as the SDK for every kind of call', async () => {
    const server = new RawStdio([
      'serve',
      '--config',
      join(dir, 'reservoir.yaml'),
      '--log-level',
      'warn',
    ]);
    cleanup.add(() => server.kill());
    await server.initializeAt(revision);
    // A listing reads the files' heads (their descriptions) for a short budget and leaves the rest to
    // a later one: on a loaded machine the first listing may lack them where the next has them. The
    // heads are read first, so the two answers compared describe the files alike.
    const described = async (name: string, args: Record<string, unknown>): Promise<boolean> => {
      const line = await server.requestLine('tools/call', `warm-${name}`, {
        name,
        arguments: args,
      });
      const listed =
        (
          JSON.parse(line) as {
            result: {
              structuredContent?: { resources?: { size?: number; description?: string }[] };
            };
          }
        ).result.structuredContent?.resources ?? [];
      return listed.length > 0 && listed.every((r) => !r.size || r.description !== undefined);
    };
    await eventually(
      async () =>
        (await described('list_resources', {})) &&
        (await described('find_resources', { name: '*.txt' })),
      'every listed file described',
    );
    const calls: Array<[string, Record<string, unknown> | undefined]> = [
      ['sql_query_shop', { sql: 'SELECT label, price FROM items ORDER BY id' }],
      ['sql_query_shop', { sql: 'SELECT count(*) AS n FROM items WHERE price > ?', params: [1] }],
      ['sql_query_shop', { sql: 'DELETE FROM items' }],
      ['sql_query_shop', { sql: 'SELECT 1', bogus: 1 }],
      ['sql_query_shop', { sql: 7 }],
      ['list_resources', { limit: 2 }],
      ['list_resources', undefined],
      ['read_resource', { uri: fileUri(root, 'note.txt') }],
      ['read_resource', { uri: fileUri(root, 'missing.txt') }],
      ['find_resources', { name: '*.txt' }],
      ['no_such_tool', {}],
    ];
    for (const [i, [name, args]] of calls.entries()) {
      const id = `call-${i}`;
      const params = args === undefined ? { name } : { name, arguments: args };
      const direct = await server.requestLine('tools/call', id, params);
      const sdk = await server.requestLine('tools/call', id, { ...params, _meta: {} });
      expect(steady(direct), `${name} ${JSON.stringify(args)}`).toBe(steady(sdk));
    }
    // The next page's cursor from a direct listing works on the next direct call.
    const first = JSON.parse(
      await server.requestLine('tools/call', 'page-1', {
        name: 'list_resources',
        arguments: { limit: 1 },
      }),
    ) as { result: { structuredContent: { nextCursor?: string } } };
    const cursor = first.result.structuredContent.nextCursor;
    expect(cursor).toBeTypeOf('string');
    const next = JSON.parse(
      await server.requestLine('tools/call', 'page-2', {
        name: 'list_resources',
        arguments: { limit: 1, cursor },
      }),
    ) as { result: { isError?: boolean } };
    expect(next.result.isError).toBeUndefined();
    const unknown = JSON.parse(
      await server.requestLine('tools/call', 'unknown', { name: 'no_such_tool' }),
    ) as { error: { code: number } };
    expect(unknown.error.code).toBe(-32602);
    await server.end();
  });
});
