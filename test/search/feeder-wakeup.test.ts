// The feeder drains its queue one task after another and ends with a last flush of what it queued.
// A change heard while that flush is being written (a slow index write: PostgreSQL over a socket)
// must still be indexed: the drain that was about to end starts again for it, rather than leaving
// it queued until some later change comes by (it was lost that way in the shared PostgreSQL index).
import { describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../src/core/log.js';
import type { Provider, ResourceChange, ResourceInfo } from '../../src/core/types.js';
import { Feeder } from '../../src/search/feeder.js';
import { Segmenter } from '../../src/search/segment.js';
import { heldWriter } from './held-writer.js';

const ROOT = 'mem://wakeup/';

function info(name: string): ResourceInfo {
  return {
    uri: `${ROOT}${name}`,
    name,
    mimeType: 'text/plain',
    size: 5,
    annotations: { lastModified: '2026-11-27T00:00:00.000Z' },
  };
}

/** A source of text files whose changes the test announces. */
function source(): { mount: Provider; announce(changes: ResourceChange[]): void } {
  let listener: ((changes: ResourceChange[]) => void) | undefined;
  const mount = {
    root: ROOT,
    list: async () => ({ items: [] }),
    read: async (uri: string) => ({ contents: [{ uri, mimeType: 'text/plain', text: 'words' }] }),
    onChanges: async (heard: (changes: ResourceChange[]) => void) => {
      listener = heard;
      return () => (listener = undefined);
    },
  } as unknown as Provider;
  return { mount, announce: (changes) => listener?.(changes) };
}

describe('the search feeder', () => {
  it('indexes a change heard while its last write is still being made', async () => {
    const { mount, announce } = source();
    const store = heldWriter();
    const feeder = new Feeder(() => store.writer, [mount], {
      maxFileBytes: 1024,
      segmenter: new Segmenter(),
      logger: silentLogger,
    });
    await feeder.start();
    announce([{ uri: `${ROOT}a.txt`, info: info('a.txt') }]);
    await vi.waitFor(() => expect(store.holding()).toBe(true), { timeout: 10_000 }); // the drain's last flush, held
    announce([{ uri: `${ROOT}b.txt`, info: info('b.txt') }]);
    store.release();
    await vi.waitFor(() => expect(store.holding()).toBe(true), { timeout: 10_000 });
    store.release();
    await feeder.idle();
    expect(store.written).toEqual([`${ROOT}a.txt`, `${ROOT}b.txt`]);
    feeder.close();
  });
});
