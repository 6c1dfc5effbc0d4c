// Progress notifications from the built-in tools whose work can take long, through the real SDK
// client over in-memory stdio, in both eras: a call with a progress token (the client's
// `onprogress`) hears find_resources advance page by page, and list_resources, read_resource and
// a SQL query say they are running before their result arrives; `progress` always increases. A
// call without a token hears nothing.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Provider } from '../../src/core/types.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { sqlProvider } from '../../src/providers/sql/index.js';
import { sqlQueryTool } from '../../src/providers/sql/tool.js';
import { loadSqliteDriver } from '../../src/core/sqlite-driver.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { builtinTools } from '../../src/tools/index.js';
import { ERAS, type Era } from '../helpers/clients.js';
import { removeDir, tempDir, writeTree } from '../providers/helpers.js';
import { connectInProcess, type InProcessStdio } from '../subscriptions/harness.js';

/** More files than one scan page (500) holds twice over. */
const FILES = 1_100;

interface Progress {
  progress: number;
  total?: number | undefined;
  message?: string | undefined;
}

let dir: string;
let reservoir: Reservoir;

beforeAll(async () => {
  dir = tempDir('reservoir-progress-');
  const tree: Record<string, string> = {};
  for (let i = 0; i < FILES; i += 1) tree[`docs/f${String(i).padStart(4, '0')}.md`] = `# ${i}\n`;
  writeTree(dir, tree);
  const Database = await loadSqliteDriver();
  const db = new Database(join(dir, 'shop.db'));
  db.exec(`CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT);
    INSERT INTO items (label) VALUES ('apple'), ('banana');`);
  db.close();
  const files = filesProvider({ root: join(dir, 'docs') }) as Provider;
  const shop = sqlProvider({ path: join(dir, 'shop.db') });
  reservoir = createReservoir({ providers: [files, shop], tools: [sqlQueryTool(shop)] });
  // No time budget for a find call: on a loaded machine it would stop after its first page.
  for (const tool of builtinTools(reservoir.registry, { find: { scanTimeMs: 600_000 } }))
    reservoir.tools.add(tool);
});

afterAll(async () => {
  await reservoir?.close();
  removeDir(dir);
});

describe.each(ERAS)('progress from the built-in tools (%s era)', (era: Era) => {
  let connection: InProcessStdio;

  beforeAll(async () => {
    connection = await connectInProcess(reservoir, era);
  });

  afterAll(() => connection?.close());

  const call = async (
    name: string,
    args: Record<string, unknown>,
  ): Promise<{ progress: Progress[]; isError: boolean }> => {
    const progress: Progress[] = [];
    const result = await connection.client.callTool(
      { name, arguments: args },
      { onprogress: (p) => void progress.push(p) },
    );
    return { progress, isError: result.isError === true };
  };

  const increasing = (progress: readonly Progress[]): boolean =>
    progress.every((p, i) => i === 0 || p.progress > progress[i - 1]!.progress);

  it('find_resources reports each page it scans', async () => {
    const { progress, isError } = await call('find_resources', { name: '*.none' });
    expect(isError).toBe(false);
    // 1,100 files and the SQL source's resources: at least three pages of 500.
    expect(progress.length).toBeGreaterThanOrEqual(3);
    expect(increasing(progress)).toBe(true);
    expect(progress[1]?.message).toBe('scanning: examined 500 resources, 0 matches so far');
  });

  it.each([
    ['list_resources', { limit: 1000 }, 'listing resources'],
    ['read_resource', { uri: 'READ_URI' }, 'reading '],
    ['SQL_TOOL', { sql: 'SELECT label FROM items ORDER BY id' }, 'querying '],
  ])('%s says it is running before its result', async (name, args, says) => {
    const tools = (await connection.client.listTools()).tools.map((t) => t.name);
    const tool = name === 'SQL_TOOL' ? tools.find((t) => t.startsWith('sql_query_'))! : name;
    const given =
      'uri' in args ? { uri: `${reservoir.registry.providers()[0]!.root}f0001.md` } : args;
    const { progress, isError } = await call(tool, given);
    expect(isError).toBe(false);
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress[0]).toMatchObject({ progress: 0 });
    expect(progress[0]?.message).toContain(says);
    expect(increasing(progress)).toBe(true);
  });

  it('sends nothing to a call without a progress token', async () => {
    let heard = 0;
    connection.client.setNotificationHandler('notifications/progress', () => void (heard += 1));
    const result = await connection.client.callTool({
      name: 'find_resources',
      arguments: { name: '*.none' },
    });
    expect(result.isError ?? false).toBe(false);
    expect(heard).toBe(0);
  });
});
