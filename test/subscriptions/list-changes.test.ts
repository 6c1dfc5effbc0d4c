// Issue 3, live resources: changes to the set of resources under a root reach list listeners as
// `notifications/resources/list_changed` — files added, removed, renamed; a directory moved in or
// out of the root (and `updated` for a subscribed file that left with it). Changes under `.git/`
// or under `.gitignore`d paths send nothing. A burst of 5,000 creations is coalesced into a handful.
// Real SDK clients over stdio and HTTP in both eras; every target has its own server process and
// root, because list changes are server-wide (a listener hears of every root its server serves).
import { mkdirSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import {
  Cleanup,
  connectHttp,
  connectStdio,
  label,
  spawnHttpServer,
  TARGETS,
  type Target,
} from '../helpers/clients.js';
import { fileUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { afterMarker, listChangesSettle, Recorder, waitFor, watchUris } from './harness.js';

/** Coalescing sends at most one list_changed per second; a change may wait this long to be told. */
const LIST_WAIT_MS = 4_000;

interface Side {
  target: Target;
  root: string;
  outside: string;
  recorder: Recorder;
}

const cleanup = new Cleanup();
const sides: Side[] = [];

beforeAll(async () => {
  await ensureBuilt();
  await Promise.all(
    TARGETS.map(async (target) => {
      const root = makeTempDir('reservoir-sub-list-');
      const outside = makeTempDir('reservoir-sub-outside-');
      cleanup.add(() => removeTree(root));
      cleanup.add(() => removeTree(outside));
      writeTree(root, {
        '.gitignore': '*.log\nbuild/\n',
        '.git/config': '[core]\n',
        '.git/HEAD': 'ref: refs/heads/main\n',
        'keep.txt': 'keep\n',
        'doomed.txt': 'doomed\n',
        'old-name.txt': 'renamed soon\n',
        'moving/inner.txt': 'leaves with its directory\n',
        'build/out.js': '// ignored\n',
      });
      writeTree(outside, { 'incoming/one.txt': '1\n', 'incoming/deep/two.txt': '2\n' });
      const client =
        target.transport === 'stdio'
          ? (await connectStdio(target.era, [root], [], cleanup)).client
          : (
              await connectHttp(
                target.era,
                (await spawnHttpServer([root], [], cleanup)).url,
                cleanup,
              )
            ).client;
      const recorder = new Recorder(client);
      await watchUris(
        client,
        target.era,
        [fileUri(root, 'moving/inner.txt'), fileUri(root, 'keep.txt')],
        true,
      );
      sides.push({ target, root, outside, recorder });
    }),
  );
  // A 2025 client listens for list changes from `initialized` on, without a reply to wait for:
  // prove every listener is live (and let the coalescing interval run out) before counting.
  for (const side of sides) writeFileSync(join(side.root, 'probe.txt'), 'probe\n');
  await Promise.all(
    sides.map((s) =>
      waitFor(
        () => s.recorder.listChanges() >= 1,
        `a first list_changed (${label(s.target)})`,
        LIST_WAIT_MS,
      ),
    ),
  );
  await listChangesSettle();
});

afterAll(() => cleanup.run());

/** Applies `change` to every target's root and waits for at least one list_changed on each. */
async function expectListChanged(change: (side: Side) => void): Promise<void> {
  for (const side of sides) side.recorder.clear();
  for (const side of sides) change(side);
  await Promise.all(
    sides.map((s) =>
      waitFor(
        () => s.recorder.listChanges() >= 1,
        `list_changed (${label(s.target)})`,
        LIST_WAIT_MS,
      ),
    ),
  );
}

describe('list_changed, on stdio and HTTP in both eras at once', () => {
  it('a file added', async () => {
    await expectListChanged(({ root }) => writeFileSync(join(root, 'added.txt'), 'new\n'));
  });

  it('a file removed', async () => {
    await expectListChanged(({ root }) => unlinkSync(join(root, 'doomed.txt')));
  });

  it('a file renamed', async () => {
    await expectListChanged(({ root }) =>
      renameSync(join(root, 'old-name.txt'), join(root, 'new-name.txt')),
    );
  });

  it('a directory moved into the root', async () => {
    await expectListChanged(({ root, outside }) =>
      renameSync(join(outside, 'incoming'), join(root, 'incoming')),
    );
  });

  it('a directory moved out of the root: list_changed, and `updated` for the subscribed file that left with it', async () => {
    await expectListChanged(({ root, outside }) =>
      renameSync(join(root, 'moving'), join(outside, 'moved')),
    );
    await Promise.all(
      sides.map(({ target, root, recorder }) =>
        waitFor(
          () => recorder.updates(fileUri(root, 'moving/inner.txt')) >= 1,
          `updated for moving/inner.txt (${label(target)})`,
        ),
      ),
    );
    // keep.txt changed after: a second `updated` for the file that left would have come before it.
    await Promise.all(
      sides.map(({ root, recorder }) =>
        afterMarker([recorder], fileUri(root, 'keep.txt'), () =>
          writeFileSync(join(root, 'keep.txt'), 'kept, changed\n'),
        ),
      ),
    );
    for (const { target, root, recorder } of sides)
      expect(recorder.updatedUris(), label(target)).toEqual([
        fileUri(root, 'moving/inner.txt'),
        fileUri(root, 'keep.txt'),
      ]);
  });

  it('changes under .git/ and under .gitignored paths send nothing (and a served change right after still does)', async () => {
    // Let any earlier notification's interval run out, so silence below means silence.
    await listChangesSettle();
    for (const side of sides) side.recorder.clear();
    for (const { root } of sides) {
      writeFileSync(join(root, '.git', 'config'), '[core]\n\tbare = false\n');
      writeFileSync(join(root, '.git', 'index.lock'), 'lock\n');
      unlinkSync(join(root, '.git', 'index.lock'));
      mkdirSync(join(root, '.git', 'objects', 'ab'), { recursive: true });
      writeFileSync(join(root, '.git', 'objects', 'ab', 'cdef'), 'object\n');
      writeFileSync(join(root, 'debug.log'), 'ignored\n');
      writeFileSync(join(root, 'build', 'out.js'), '// rebuilt\n');
      writeFileSync(join(root, 'build', 'more.js'), '// new, ignored\n');
      mkdirSync(join(root, 'build', 'nested'));
      writeFileSync(join(root, 'build', 'nested', 'x.js'), '// ignored\n');
      unlinkSync(join(root, 'debug.log'));
      rmSync(join(root, 'build', 'nested'), { recursive: true });
    }
    await listChangesSettle();
    for (const { target, recorder } of sides) expect(recorder.events, label(target)).toEqual([]);
    await expectListChanged(({ root }) => writeFileSync(join(root, 'served.txt'), 'served\n'));
  });

  it('a burst of 5,000 file creations sends at most 5 list_changed to each listener', async () => {
    await listChangesSettle();
    for (const side of sides) side.recorder.clear();
    for (const { root } of sides) {
      const dir = join(root, 'burst');
      mkdirSync(dir);
      for (let i = 0; i < 5_000; i += 1) writeFileSync(join(dir, `f${i}.txt`), `${i}\n`);
    }
    await Promise.all(
      sides.map((s) =>
        waitFor(
          () => s.recorder.listChanges() >= 1,
          `list_changed (${label(s.target)})`,
          LIST_WAIT_MS,
        ),
      ),
    );
    // Wait until every listener has been quiet for a full interval and more (bounded).
    await listChangesSettle(sides.map((s) => s.recorder));
    for (const { target, recorder } of sides) {
      expect(recorder.listChanges(), label(target)).toBeGreaterThanOrEqual(1);
      expect(recorder.listChanges(), label(target)).toBeLessThanOrEqual(5);
    }
  }, 60_000);
});
