// A files root whose last change listener stops and a new one starts at once (the search index
// re-subscribing, a client unsubscribing then subscribing again) must hear the next change.
// `@parcel/watcher` shares one native watcher among subscriptions of the same directory, so a
// subscribe made while the previous unsubscribe is still running joins the watcher that unsubscribe
// then tears down, and the new subscription stays deaf (4 of 20 quick re-subscriptions did, before
// watch.ts waited for the unsubscribe). Both tests fail without that wait: the first with the real
// watcher, the second deterministically, with a backend that records the order of its calls.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ResourceChange } from '../../src/core/types.js';
import { filesProvider } from '../../src/providers/files/index.js';
import type { TreeEvent, TreeWatcherBackend } from '../../src/providers/files/tree-backend.js';
import { eventually } from '../helpers/eventually.js';
import { fileUri, makeTempDir, removeTree } from '../helpers/tree.js';
import { MemoryLogger } from '../subscriptions/harness.js';

let root: string;
beforeEach(() => {
  root = makeTempDir('reservoir-resubscribe-');
});
afterEach(() => removeTree(root));

describe('a change listener that replaces the last one at once', () => {
  it('hears the next change, every time (the real tree watcher)', async () => {
    const provider = filesProvider({ root, logger: new MemoryLogger() });
    try {
      for (let i = 0; i < 20; i += 1) {
        const stopFirst = await provider.onChanges!(() => undefined);
        stopFirst();
        await new Promise((resolve) => setImmediate(resolve)); // one turn: the tree's unsubscribe is now running natively
        const seen: ResourceChange[] = [];
        const stop = await provider.onChanges!((changes) => void seen.push(...changes));
        try {
          writeFileSync(join(root, `f${i}.txt`), `${i}\n`);
          await eventually(
            () => seen.some((c) => c.uri === fileUri(root, `f${i}.txt`)),
            `round ${i}: the change to f${i}.txt`,
          );
        } finally {
          stop();
        }
      }
    } finally {
      await provider.close?.();
    }
  });

  it('subscribes the tree again only after the previous unsubscribe finished', async () => {
    const calls: string[] = [];
    let listener: ((events: TreeEvent[]) => void) | undefined;
    const backend: TreeWatcherBackend = {
      subscribe: async (_root, onEvents) => {
        calls.push('subscribe');
        listener = onEvents;
        return {
          unsubscribe: async () => {
            calls.push('unsubscribe started');
            await new Promise((resolve) => setImmediate(resolve)); // the native teardown takes a turn
            calls.push('unsubscribe finished');
          },
        };
      },
    };
    const provider = filesProvider({ root, logger: new MemoryLogger(), watch: { backend } });
    try {
      const stopFirst = await provider.onChanges!(() => undefined);
      stopFirst();
      const seen: ResourceChange[] = [];
      const stop = await provider.onChanges!((changes) => void seen.push(...changes));
      expect(calls).toEqual([
        'subscribe',
        'unsubscribe started',
        'unsubscribe finished',
        'subscribe',
      ]);
      writeFileSync(join(root, 'a.txt'), 'a\n');
      listener!([{ type: 'create', path: join(root, 'a.txt') }]);
      await eventually(
        () => seen.some((c) => c.uri === fileUri(root, 'a.txt')),
        'the change to a.txt',
      );
      stop();
    } finally {
      await provider.close?.();
    }
  });
});
