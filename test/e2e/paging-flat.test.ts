// One large flat directory, paged through the real SDK client while files come and go between pages:
// the directory is large enough to keep a sorted snapshot (providers/files/sorted-dirs.ts), and it
// is left unmodified long enough for that snapshot to be trusted before the first page, so pages
// resume from the snapshot until a change makes it stale. Every name there throughout is listed
// exactly once and the listing stays in name order; a forged or edited cursor is refused with a
// clear error. Over stdio and HTTP.
import { statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ProtocolError } from '@modelcontextprotocol/client';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { eventually } from '../helpers/eventually.js';
import {
  Cleanup,
  connectTarget,
  listPage,
  spawnHttpServer,
  type Target,
} from '../helpers/clients.js';
import { fileUri, makeTempDir, pad, removeTree, seededRandom } from '../helpers/tree.js';
import { MIN_CACHED } from '../../src/providers/files/sorted-dirs.js';

const FILES = 1_500;
const PAGE_SIZE = 100;
const FLAT_TARGETS: readonly Target[] = [
  { transport: 'stdio', era: '2025' },
  { transport: 'http', era: '2026' },
];

const cleanup = new Cleanup();

beforeAll(() => ensureBuilt());
afterEach(() => cleanup.run());

/** A flat directory of FILES files, untouched since long enough for its snapshot to be kept. */
async function flatDirectory(): Promise<{ root: string; names: Set<string> }> {
  const root = makeTempDir('reservoir-flat-');
  cleanup.add(() => removeTree(root));
  const names = new Set<string>();
  for (let i = 0; i < FILES; i += 1) {
    const name = `f${pad(i * 2, 5)}.txt`;
    writeFileSync(join(root, name), `${name}\n`);
    names.add(name);
  }
  await eventually(() => {
    const stats = statSync(root);
    return Date.now() - Math.max(stats.mtimeMs, stats.ctimeMs) > 1_500;
  }, 'the directory to be older than the timestamp-tick window');
  return { root, names };
}

async function connect(target: Target, root: string): ReturnType<typeof connectTarget> {
  const args = ['--page-size', String(PAGE_SIZE), '--no-search'];
  const httpUrl =
    target.transport === 'http' ? (await spawnHttpServer([root], args, cleanup)).url : undefined;
  return connectTarget(
    target,
    { roots: [root], args, ...(httpUrl === undefined ? {} : { httpUrl }) },
    cleanup,
  );
}

describe.each(FLAT_TARGETS)('a flat directory over $transport in the $era era', (target) => {
  it('lists every name there throughout exactly once, in name order, while files are added and removed between pages', async () => {
    expect(FILES).toBeGreaterThan(MIN_CACHED * 2);
    const { root, names } = await flatDirectory();
    const initial = new Set(names);
    const removed = new Set<string>();
    const client = await connect(target, root);
    const random = seededRandom(target.transport === 'stdio' ? 7 : 11);
    const nameOf = (uri: string): string => uri.slice(uri.lastIndexOf('/') + 1);

    const listed: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    let serial = 0;
    do {
      const page = await listPage(client, cursor);
      pages += 1;
      for (const r of page.resources) {
        expect(r.uri).toBe(fileUri(root, nameOf(r.uri)));
        listed.push(nameOf(r.uri));
      }
      cursor = page.nextCursor;
      if (cursor === undefined) break;
      const anchor = listed.at(-1)!;
      const n = Number(anchor.slice(1, 6));
      // Added just after the cursor (odd numbers sit between the originals), just before it, at
      // both ends; removed: the cursor's own file every third page, and others seen and unseen.
      for (const added of [n + 1, n - 1, 0, 99_999].map((k) => `f${pad(k, 5)}-${serial++}.txt`)) {
        writeFileSync(join(root, added), 'new\n');
        names.add(added);
      }
      const gone = [...names].filter(() => random() < 0.01);
      if (pages % 3 === 0) gone.push(anchor);
      for (const name of gone) {
        if (!names.delete(name)) continue;
        unlinkSync(join(root, name));
        if (initial.has(name)) removed.add(name);
      }
    } while (pages < 1_000);

    expect(pages).toBeGreaterThanOrEqual(FILES / PAGE_SIZE);
    // In order, and so no name twice.
    for (let i = 1; i < listed.length; i += 1) expect(listed[i - 1]! < listed[i]!).toBe(true);
    const seen = new Set(listed);
    // Every file there throughout, exactly once.
    for (const name of initial) if (!removed.has(name)) expect(seen.has(name), name).toBe(true);
    // Nothing that never existed.
    for (const name of seen) expect(initial.has(name) || name.includes('-'), name).toBe(true);
  });

  it('refuses a forged cursor, an edited one and one for another list with a clear invalid-params error', async () => {
    const { root } = await flatDirectory();
    const client = await connect(target, root);
    const first = await listPage(client);
    const cursor = first.nextCursor!;
    expect(cursor).toBeDefined();
    const [body, mac] = cursor.split('.') as [string, string];
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as unknown[];
    payload[payload.length - 1] = 'f99999.txt';
    const edited = `${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${mac}`;
    const refused = async (bad: string, reason: RegExp): Promise<void> => {
      const error = await listPage(client, bad).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ProtocolError);
      expect((error as ProtocolError).code).toBe(-32602);
      expect((error as ProtocolError).message).toMatch(reason);
    };
    await refused(edited, /not a cursor this server issued, or it was altered/);
    await refused('bm90LWEtY3Vyc29y', /not a cursor this server issued/);
    await refused(`${cursor}x`, /not a cursor this server issued/);
    const templates = await client
      .request({ method: 'resources/templates/list', params: { cursor } })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect((templates as ProtocolError).code).toBe(-32602);
    expect((templates as ProtocolError).message).toMatch(/another list/);
    // The genuine cursor still works after all that.
    expect((await listPage(client, cursor)).resources[0]!.uri).toBe(
      fileUri(root, `f${pad(PAGE_SIZE * 2, 5)}.txt`),
    );
  });
});
