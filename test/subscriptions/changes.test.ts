// Issue 3, live resources: each kind of change to a subscribed file reaches exactly the
// subscribers of that URI, exactly once per settled write, through the real SDK client, over stdio
// (spawned CLI) and Streamable HTTP, in both protocol eras. Nobody else hears of it: not a URI
// nobody subscribed to, not a second client subscribed to another file.
import { appendFileSync, renameSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import {
  Cleanup,
  connectTarget,
  label,
  spawnHttpServer,
  TARGETS,
  type Target,
} from '../helpers/clients.js';
import {
  createWhole,
  fileUri,
  makeTempDir,
  overwrite,
  removeTree,
  writeTree,
} from '../helpers/tree.js';
import { Recorder, waitFor, watchUris } from './harness.js';

const cleanup = new Cleanup();
const roots = new Map<Target, string>();
let httpUrl: string;

beforeAll(async () => {
  await ensureBuilt();
  for (const target of TARGETS) {
    const root = makeTempDir('reservoir-sub-changes-');
    cleanup.add(() => removeTree(root));
    writeTree(root, { 'a.txt': 'a0\n', 'b.txt': 'b0\n', 'c.txt': 'c0\n', 'sub/d.txt': 'd0\n' });
    roots.set(target, root);
  }
  // One HTTP server for both HTTP targets; each target has its own root, so no target hears another's writes.
  const httpRoots = TARGETS.filter((t) => t.transport === 'http').map((t) => roots.get(t)!);
  httpUrl = (await spawnHttpServer(httpRoots, [], cleanup)).url;
});

afterAll(() => cleanup.run());

/** The change kinds, each one settled write (or one settled save) to `path`. */
const CHANGES: { name: string; apply: (path: string, n: number) => void }[] = [
  {
    name: 'content change (one write)',
    apply: (path, n) => overwrite(path, `rewritten ${n}, longer than before\n`),
  },
  {
    name: 'same-size rewrite',
    apply: (path, n) => overwrite(path, `same-size ${String(n).padStart(4, '0')}\n`),
  },
  {
    name: 'same-size rewrite again (only the content digest tells)',
    apply: (path, n) => overwrite(path, `SAME-SIZE ${String(n).padStart(4, '0')}\n`),
  },
  {
    name: 'truncate, then write',
    apply: (path, n) => {
      truncateSync(path, 0);
      appendFileSync(path, `after truncate ${n}\n`);
    },
  },
  {
    name: 'editor-style save (temp file renamed over)',
    apply: (path, n) => {
      const temp = join(path, '..', `.a.txt.${n}.swp`);
      writeFileSync(temp, `saved by an editor ${n}\n`);
      renameSync(temp, path);
    },
  },
  {
    name: 'delete, then recreate at once',
    apply: (path, n) => {
      unlinkSync(path);
      writeFileSync(path, `recreated ${n}\n`);
    },
  },
  { name: 'append', apply: (path, n) => appendFileSync(path, `appended ${n}\n`) },
];

interface Side {
  target: Target;
  root: string;
  a: string;
  b: string;
  c: string;
  first: Recorder;
  second: Recorder;
}

// The four targets have separate roots, so each check runs on all four at once (one quiet period, not four).
const sides: Side[] = [];

beforeAll(async () => {
  await Promise.all(
    TARGETS.map(async (target) => {
      const root = roots.get(target)!;
      const side: Side = {
        target,
        root,
        a: fileUri(root, 'a.txt'),
        b: fileUri(root, 'b.txt'),
        c: fileUri(root, 'c.txt'),
      } as Side;
      const connect = (): Promise<Client> =>
        connectTarget(target, { roots: [root], httpUrl }, cleanup);
      const [firstClient, secondClient] = await Promise.all([connect(), connect()]);
      side.first = new Recorder(firstClient);
      side.second = new Recorder(secondClient);
      await watchUris(firstClient, target.era, [side.a]);
      await watchUris(secondClient, target.era, [side.c]);
      sides.push(side);
    }),
  );
});

/**
 * Runs `check` on every side at once and waits for all of them before failing with the first
 * failure, so a side that failed early leaves no sibling still writing into the next test.
 */
async function onEverySide(check: (side: Side) => Promise<void>): Promise<void> {
  const outcomes = await Promise.allSettled(sides.map(check));
  const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
}

/**
 * Writes `file` (a.txt, heard by the first client, or c.txt, by the second) and waits for its
 * update: the marker. The server sends in the order its watcher settles, so a notification still
 * owed for an earlier write reaches its client before the marker's.
 */
async function marker(
  { target, root, a, c, first, second }: Side,
  file: 'a.txt' | 'c.txt',
): Promise<void> {
  const [recorder, uri] = file === 'a.txt' ? [first, a] : [second, c];
  const before = recorder.updates(uri);
  overwrite(join(root, file), `marker ${before}\n`);
  await waitFor(
    () => recorder.updates(uri) > before,
    () => `the marker update of ${file} (${label(target)})`,
  );
}

/** Applies one change to a.txt on every target; then exactly one `updated` for a.txt to the first client, nothing else anywhere. */
async function expectExactlyOnce(change: (path: string) => void): Promise<void> {
  await onEverySide(async (side) => {
    const { target, root, a, c, first, second } = side;
    first.clear();
    second.clear();
    change(join(root, 'a.txt'));
    await waitFor(
      () => first.updates(a) >= 1,
      () => `an update of a.txt (${label(target)})`,
    );
    await marker(side, 'c.txt');
    expect(first.updatedUris(), label(target)).toEqual([a]);
    expect(second.updatedUris(), label(target)).toEqual([c]);
  });
}

describe('each change kind, on stdio and HTTP in both eras at once', () => {
  CHANGES.forEach((change, n) => {
    it(`${change.name}: one notification, to the subscriber of that URI only`, async () => {
      await expectExactlyOnce((path) => change.apply(path, n));
    });
  });

  it('delete, settle, recreate, settle: one notification for each settled state', async () => {
    await expectExactlyOnce((path) => unlinkSync(path));
    await expectExactlyOnce((path) => createWhole(path, 'back again\n'));
  });

  it('a write to a file nobody subscribed to (or to a file in a subdirectory) notifies no one', async () => {
    await onEverySide(async (side) => {
      const { target, root, c, first, second } = side;
      first.clear();
      second.clear();
      overwrite(join(root, 'b.txt'), 'b changed\n');
      appendFileSync(join(root, 'sub', 'd.txt'), 'd changed\n');
      await marker(side, 'c.txt');
      expect(first.updates(), label(target)).toBe(0);
      expect(second.updatedUris(), label(target)).toEqual([c]);
    });
  });

  it('the second client hears of its own file, once, and the first client does not', async () => {
    await onEverySide(async (side) => {
      const { target, root, a, c, first, second } = side;
      first.clear();
      second.clear();
      overwrite(join(root, 'c.txt'), 'c changed\n');
      await waitFor(() => second.updates(c) >= 1, `an update of c.txt (${label(target)})`);
      await marker(side, 'a.txt');
      expect(second.updatedUris(), label(target)).toEqual([c]);
      expect(first.updatedUris(), label(target)).toEqual([a]);
    });
  });
});
