// Pins a config reload of every source type as a user sees it: `reservoir serve --config` over
// stdio and Streamable HTTP, the real SDK client in both eras. Adding an s3 source (on a local S3 API server) and a
// sql source with its query tool mounts both, with `resources/list_changed` and
// `tools/list_changed`; an edit the s3 source cannot start with (a bucket that does not exist)
// keeps the running one and logs why; removing them unmounts both and takes the tool away.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadSqliteDriver } from '../../src/core/sqlite-driver.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Cleanup,
  connectHttp,
  connectStdio,
  label,
  spawnHttpServer,
  TARGETS,
  type Target,
} from '../helpers/clients.js';
import { removeDir, tempDir, writeTree } from '../providers/helpers.js';
import { LocalS3, S3_KEY, S3_SECRET } from '../providers/s3-server.js';
import { waitFor } from '../subscriptions/harness.js';

const Database = loadSqliteDriver();

let s3: LocalS3;
let dir: string;
const cleanup = new Cleanup();

beforeAll(async () => {
  s3 = await LocalS3.start();
  await s3.bucket('reload-bucket');
  await s3.put('reload-bucket', 'hello.txt', 'from s3');
  dir = tempDir('reservoir-reload-sources-');
  writeTree(dir, { 'docs/readme.md': 'local' });
  const db = new Database(join(dir, 'shop.db'));
  db.exec(
    "CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT); INSERT INTO items (label) VALUES ('apple');",
  );
  db.close();
}, 60_000);
afterAll(async () => {
  await cleanup.run();
  await s3?.close();
  removeDir(dir);
});

const FILES = ['sources:', '  - { type: files, root: docs }'];
const s3Source = (bucket: string): string[] => [
  '  - type: s3',
  `    bucket: ${bucket}`,
  `    endpoint: ${s3.endpoint}`,
  '    forcePathStyle: true',
  `    accessKeyId: ${S3_KEY}`,
  `    secretAccessKey: ${S3_SECRET}`,
  '    allowPrivateNetworks: true',
];
const SQL = ['  - { type: sql, path: shop.db, queryTool: true }'];

/** Serves `file` over the target's transport; the client, and the server's stderr so far. */
async function serve(target: Target, file: string) {
  const args = ['--config', file, '--no-tools'];
  if (target.transport === 'stdio') {
    const connection = await connectStdio(target.era, [], args, cleanup);
    return { client: connection.client, stderr: connection.stderr, close: connection.close };
  }
  const server = await spawnHttpServer([], args, cleanup);
  const connection = await connectHttp(target.era, server.url, cleanup);
  return {
    client: connection.client,
    stderr: server.stderr,
    close: async () => (await connection.close(), await server.stop()),
  };
}

describe.each(TARGETS)('a config reload of s3 and sql sources, $transport $era', (target) => {
  const era = target.era;
  it(`mounts added sources with their tools, keeps a source its edit cannot start, and unmounts removed ones (${label(target)})`, async () => {
    const file = join(dir, `reservoir-${target.transport}-${era}.yaml`);
    writeFileSync(file, [...FILES, ''].join('\n'));
    const connection = await serve(target, file);
    const { client } = connection;
    const counts = { resources: 0, tools: 0 };
    client.setNotificationHandler(
      'notifications/resources/list_changed',
      () => void (counts.resources += 1),
    );
    client.setNotificationHandler(
      'notifications/tools/list_changed',
      () => void (counts.tools += 1),
    );
    if (era === '2026') await client.listen({ resourcesListChanged: true, toolsListChanged: true });
    const uris = async (): Promise<string[]> =>
      (await client.listResources()).resources.map((r) => r.uri);
    // Over HTTP the explorer's who_am_i is served whatever the sources are; only the sources' tools come and go.
    const tools = async (): Promise<string[]> =>
      (await client.listTools()).tools.map((t) => t.name).filter((name) => name !== 'who_am_i');
    expect(await tools()).toEqual([]);

    writeFileSync(file, [...FILES, ...s3Source('reload-bucket'), ...SQL, ''].join('\n'));
    await waitFor(
      () => counts.resources >= 1 && counts.tools >= 1,
      'resources/list_changed and tools/list_changed after adding sources',
      15_000,
    );
    expect(await uris()).toEqual(
      expect.arrayContaining(['s3://reload-bucket/hello.txt', 'db://shop/tables/items/rows']),
    );
    expect(await tools()).toEqual(['sql_query_shop']);
    expect(
      (await client.readResource({ uri: 's3://reload-bucket/hello.txt' })).contents[0],
    ).toMatchObject({ text: 'from s3' });

    writeFileSync(file, [...FILES, ...s3Source('no-such-bucket'), ...SQL, ''].join('\n'));
    await waitFor(
      () =>
        connection
          .stderr()
          .includes('changed source could not be started; still serving its previous version'),
      'the log of the kept source',
      15_000,
    );
    expect(connection.stderr()).toContain('the bucket does not exist');
    expect(connection.stderr()).not.toContain(`"${S3_SECRET}"`);
    expect(await uris()).toContain('s3://reload-bucket/hello.txt');

    const before = { ...counts };
    writeFileSync(file, [...FILES, ''].join('\n'));
    await waitFor(
      () => counts.resources > before.resources && counts.tools > before.tools,
      'list changes after removing sources',
      15_000,
    );
    const after = await uris();
    expect(after.some((uri) => uri.startsWith('s3://') || uri.startsWith('db://'))).toBe(false);
    expect(after.some((uri) => uri.endsWith('/docs/readme.md'))).toBe(true);
    expect(await tools()).toEqual([]);
    await connection.close();
  }, 60_000);
});
