// Pins paging through a large tree end to end: 10,000 nested files served with --page-size 500 come
// out over the real SDK client, over stdio and HTTP, in both eras, each exactly once, in the same
// stable order, in full pages, with their metadata and the era's cache fields on every page.
import { writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import {
  Cleanup,
  connectTarget,
  eraFields,
  expectedEraFields,
  listAllPages,
  spawnHttpServer,
  TARGETS,
  type HttpServerProcess,
} from '../helpers/clients.js';
import { buildNestedTree, fileUri, makeTempDir, removeTree } from '../helpers/tree.js';

const FILES = 10_000;
const PAGE_SIZE = 500;

const cleanup = new Cleanup();
let root: string;
let rels: string[];
let http: HttpServerProcess;
let args: string[];

beforeAll(async () => {
  await ensureBuilt();
  root = makeTempDir();
  cleanup.add(() => removeTree(root));
  // dNNN/sNN/fNNNNN.txt, zero-padded: name order is creation order, so `rels` is the expected order.
  rels = buildNestedTree(root, FILES);
  // A source slower than its share of a list page is skipped from that page (by design, pinned in
  // test/core/source-outage.test.ts); on a loaded 2-core machine a page of 500 can outrun the
  // default 2 s, so the share here is generous: this file pins paging, not the budget.
  const config = join(makeTempDir(), 'reservoir.yaml');
  writeFileSync(
    config,
    `sources:\n  - type: files\n    root: ${JSON.stringify(root)}\nserver:\n  sourceListTimeoutMs: 60000\n`,
  );
  cleanup.add(() => removeTree(dirname(config)));
  args = ['--page-size', String(PAGE_SIZE), '--config', config];
  http = await spawnHttpServer([], args, cleanup);
});

afterAll(() => cleanup.run());

describe.each(TARGETS)('over $transport in the $era era', (target) => {
  it('lists each of the 10,000 files exactly once, in name order, in full pages of 500 that carry the era cache fields', async () => {
    const client = await connectTarget(target, { roots: [], args, httpUrl: http.url }, cleanup);
    const pages = await listAllPages(client);

    expect(pages.map((p) => p.resources.length)).toEqual(
      Array<number>(FILES / PAGE_SIZE).fill(PAGE_SIZE),
    );
    expect(pages.map((p) => p.nextCursor === undefined)).toEqual([
      ...Array<boolean>(pages.length - 1).fill(false),
      true,
    ]);
    for (const page of pages)
      expect(eraFields(target.era, page)).toEqual(expectedEraFields(target.era, 0));

    const listed = pages.flatMap((p) => p.resources);
    const uris = listed.map((r) => r.uri);
    expect(new Set(uris).size).toBe(uris.length);
    expect(uris).toEqual(rels.map((rel) => fileUri(root, rel)));

    const wrong = listed.filter((r, i) => {
      const rel = rels[i]!;
      return (
        r.name !== basename(rel) ||
        r.title !== rel ||
        r.mimeType !== 'text/plain' ||
        r.size !== Buffer.byteLength(`${rel}\n`) ||
        !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(r.annotations?.lastModified ?? '')
      );
    });
    expect(wrong).toEqual([]);
  });

  // One era per transport is enough for the SDK's own aggregation loop over the same pages.
  if ((target.transport === 'stdio') !== (target.era === '2025')) return;
  it("returns the same 10,000 resources from the SDK client's auto-aggregating listResources()", async () => {
    const client = await connectTarget(target, { roots: [], args, httpUrl: http.url }, cleanup);
    const { resources, nextCursor } = await client.listResources();
    expect(nextCursor).toBeUndefined();
    expect(resources.map((r) => r.uri)).toEqual(rels.map((rel) => fileUri(root, rel)));
  });
});
