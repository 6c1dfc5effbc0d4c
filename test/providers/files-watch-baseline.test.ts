// A subscription to a file whose last change is over a second old starts from its stat alone (no
// read, no digest: the larger part of a subscribe's cost). Its stat then proves its content: an
// event that finds it unchanged notifies nothing — where a baseline without a digest, compared with
// the digest the event takes, would notify a change that never happened — and a rewrite, which
// stamps a newer ctime, notifies once. Time is moved forward with a faked Date (only Date: timers
// stay real), so the files made here look settled without waiting; "nothing was notified" is read
// after a marker file's notification, whose event came later and settles later.
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { filesProvider } from '../../src/providers/files/index.js';
import type { TreeEvent, TreeWatcherBackend } from '../../src/providers/files/tree-backend.js';
import { eventually } from '../helpers/eventually.js';
import { fileUri, makeTempDir, removeTree } from '../helpers/tree.js';
import { MemoryLogger } from '../subscriptions/harness.js';

let root: string;
let emit: ((events: TreeEvent[]) => void) | undefined;
const backend: TreeWatcherBackend = {
  subscribe: async (_root, onEvents) => {
    emit = onEvents;
    return { unsubscribe: async () => undefined };
  },
};

beforeEach(async () => {
  root = makeTempDir('reservoir-watch-baseline-');
  writeFileSync(join(root, 'settled.txt'), 'settled\n');
  writeFileSync(join(root, 'marker.txt'), 'marker\n');
  // A kernel that stamps times at its clock tick (before Linux 6.13, 1–10 ms) gives a rewrite within
  // the same tick the same ctime: the rewrite below comes once the real clock is past the file's.
  const made = statSync(join(root, 'settled.txt')).ctimeMs;
  await eventually(() => Date.now() > made + 20, 'the clock to pass the files’ ctime');
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(Date.now() + 10_000);
});
afterEach(() => {
  vi.useRealTimers();
  removeTree(root);
});

/** Subscribes to settled.txt and marker.txt; counts each one's notifications. */
async function subscribed() {
  const provider = filesProvider({ root, logger: new MemoryLogger(), watch: { backend } });
  const heard = { settled: 0, marker: 0 };
  const stops = [
    await provider.watch!(fileUri(root, 'settled.txt'), () => (heard.settled += 1)),
    await provider.watch!(fileUri(root, 'marker.txt'), () => (heard.marker += 1)),
  ];
  return {
    heard,
    /** Changes marker.txt and waits for its notification: every event before it has settled. */
    async marker(n: number) {
      writeFileSync(join(root, 'marker.txt'), `marker ${n}, changed\n`);
      emit!([{ type: 'update', path: join(root, 'marker.txt') }]);
      await eventually(() => heard.marker >= n, `marker notification ${n}`);
    },
    async close() {
      for (const stop of stops) stop();
      await provider.close?.();
    },
  };
}

describe('a subscription to a file last changed over a second ago', () => {
  it('notifies nothing for an event that finds the file unchanged', async () => {
    const watch = await subscribed();
    try {
      emit!([{ type: 'update', path: join(root, 'settled.txt') }]);
      await watch.marker(1);
      expect(watch.heard.settled).toBe(0);
      // Once more, now that the first event took the digest.
      emit!([{ type: 'update', path: join(root, 'settled.txt') }]);
      await watch.marker(2);
      expect(watch.heard.settled).toBe(0);
    } finally {
      await watch.close();
    }
  });

  it('notifies a same-size rewrite once', async () => {
    const watch = await subscribed();
    try {
      writeFileSync(join(root, 'settled.txt'), 'SETTLED\n');
      emit!([{ type: 'update', path: join(root, 'settled.txt') }]);
      await eventually(() => watch.heard.settled === 1, 'the rewrite notified');
      await watch.marker(1);
      expect(watch.heard.settled).toBe(1);
    } finally {
      await watch.close();
    }
  });
});
