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
    writeTree(root, {
      'a.txt': 'a0\n',
      'b.txt': 'b0\n',
      'c.txt': 'c0\n',
      'sub/d.txt': 'd0\n',
      'm1.txt': 'marker of the first client\n',
      'm2.txt': 'marker of the second client\n',
    });
    roots.set(target, root);
  }
  // One HTTP server for both HTTP targets; each target has its own root, so no target hears another's writes.
  const httpRoots = TARGETS.filter((t) => t.transport === 'http').map((t) => roots.get(t)!);
  httpUrl = (await spawnHttpServer(httpRoots, [], cleanup)).url;
});

afterAll(() => cleanup.run());

/**
 * The change kinds, each one settled write (or one settled save) to `path`. A kind made of several
 * steps says how many states it passes through (`states`): they are one change when the steps
 * follow each other within the watcher's settle time (20 ms), and `apply` returns how long they
 * took; a writer held longer between them (descheduled on a loaded machine) rightly gets one
 * notification per settled state.
 */
const CHANGES: {
  name: string;
  states?: number;
  apply: (path: string, n: number) => number | void;
}[] = [
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
    states: 2,
    apply: (path, n) => {
      const start = performance.now();
      truncateSync(path, 0);
      appendFileSync(path, `after truncate ${n}\n`);
      return performance.now() - start;
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
    states: 3, // gone, empty, written
    apply: (path, n) => {
      const start = performance.now();
      unlinkSync(path);
      writeFileSync(path, `recreated ${n}\n`);
      return performance.now() - start;
    },
  },
  { name: 'append', apply: (path, n) => appendFileSync(path, `appended ${n}\n`) },
];

interface Side {
  target: Target;
  root: string;
  a: string;
  c: string;
  /** Each client's own marker file, which nobody else hears of. */
  m1: string;
  m2: string;
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
        c: fileUri(root, 'c.txt'),
        m1: fileUri(root, 'm1.txt'),
        m2: fileUri(root, 'm2.txt'),
      } as Side;
      const connect = (): Promise<Client> =>
        connectTarget(target, { roots: [root], httpUrl }, cleanup);
      const [firstClient, secondClient] = await Promise.all([connect(), connect()]);
      side.first = new Recorder(firstClient);
      side.second = new Recorder(secondClient);
      await watchUris(firstClient, target.era, [side.a, side.m1]);
      await watchUris(secondClient, target.era, [side.c, side.m2]);
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
 * Writes each client's marker file and waits for both updates. A server sends in the order its
 * watcher settles, so a notification still owed for an earlier write reaches its client before the
 * marker's — through each client's own server (on stdio, each client has one).
 */
async function markers({ target, root, m1, m2, first, second }: Side): Promise<void> {
  const before = [first.updates(m1), second.updates(m2)] as const;
  overwrite(join(root, 'm1.txt'), `marker ${before[0]}\n`);
  overwrite(join(root, 'm2.txt'), `marker ${before[1]}\n`);
  await waitFor(
    () => first.updates(m1) > before[0] && second.updates(m2) > before[1],
    () => `both marker updates (${label(target)})`,
  );
}

/** What `recorder` heard updated, its marker left out. */
function heard(recorder: Recorder, marker: string): string[] {
  return recorder.updatedUris().filter((uri) => uri !== marker);
}

/**
 * Applies one change to a.txt on every target; then exactly one `updated` for a.txt to the first
 * client, nothing else anywhere. A change of several steps (`states`) that took longer than half the
 * settle time may be heard once per state it passed through.
 */
async function expectExactlyOnce(
  change: (path: string) => number | void,
  states = 1,
): Promise<void> {
  await onEverySide(async (side) => {
    const { target, root, a, m1, m2, first, second } = side;
    first.clear();
    second.clear();
    const tookMs = change(join(root, 'a.txt')) ?? 0;
    await waitFor(
      () => first.updates(a) >= 1,
      () => `an update of a.txt (${label(target)})`,
    );
    await markers(side);
    // a.txt alone, once; for steps that took long, at most once per state they passed through
    const most = tookMs < 10 ? 1 : states;
    const firstHeard = heard(first, m1);
    const why = `${label(target)}, steps over ${tookMs.toFixed(1)} ms: ${firstHeard.join(', ')}`;
    expect(new Set(firstHeard), why).toEqual(new Set([a]));
    expect(firstHeard.length, why).toBeLessThanOrEqual(most);
    expect(heard(second, m2), label(target)).toEqual([]);
  });
}

describe('each change kind, on stdio and HTTP in both eras at once', () => {
  CHANGES.forEach((change, n) => {
    it(`${change.name}: one notification, to the subscriber of that URI only`, async () => {
      await expectExactlyOnce((path) => change.apply(path, n), change.states);
    });
  });

  it('delete, settle, recreate, settle: one notification for each settled state', async () => {
    await expectExactlyOnce((path) => unlinkSync(path));
    await expectExactlyOnce((path) => createWhole(path, 'back again\n'));
  });

  it('a write to a file nobody subscribed to (or to a file in a subdirectory) notifies no one', async () => {
    await onEverySide(async (side) => {
      const { target, root, m1, m2, first, second } = side;
      first.clear();
      second.clear();
      overwrite(join(root, 'b.txt'), 'b changed\n');
      appendFileSync(join(root, 'sub', 'd.txt'), 'd changed\n');
      await markers(side);
      expect(heard(first, m1), label(target)).toEqual([]);
      expect(heard(second, m2), label(target)).toEqual([]);
    });
  });

  it('the second client hears of its own file, once, and the first client does not', async () => {
    await onEverySide(async (side) => {
      const { target, root, c, m1, m2, first, second } = side;
      first.clear();
      second.clear();
      overwrite(join(root, 'c.txt'), 'c changed\n');
      await waitFor(() => second.updates(c) >= 1, `an update of c.txt (${label(target)})`);
      await markers(side);
      expect(heard(second, m2), label(target)).toEqual([c]);
      expect(heard(first, m1), label(target)).toEqual([]);
    });
  });
});
