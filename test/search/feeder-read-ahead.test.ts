// A build reads several resources ahead of the one it indexes, so the document pool's workers
// convert side by side rather than one at a time; the resources are still indexed in list order,
// whatever order their reads complete in.
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/log.js';
import type { Provider, ReadResult, ResourceInfo } from '../../src/core/types.js';
import type { IndexWriter } from '../../src/search/backend.js';
import type { NewDoc } from '../../src/search/store.js';
import { Feeder } from '../../src/search/feeder.js';
import { Segmenter } from '../../src/search/segment.js';

const ROOT = 'mem://ahead/';
const COUNT = 12;

function info(i: number): ResourceInfo {
  return {
    uri: `${ROOT}${String(i).padStart(2, '0')}.txt`,
    name: `${i}.txt`,
    mimeType: 'text/plain',
    size: 5,
    annotations: { lastModified: '2026-11-27T00:00:00.000Z' },
  };
}

/** A source whose reads wait until the test answers them; it says when `n` are waiting at once. */
function heldSource(): {
  mount: Provider;
  waiting: (n: number) => Promise<void>;
  answerAll(order: 'reverse'): void;
  answerRest(): void;
} {
  const held = new Map<string, () => void>();
  let watcher: { n: number; resolve(): void } | undefined;
  let answering = false;
  const mount = {
    root: ROOT,
    list: async () => ({ items: Array.from({ length: COUNT }, (_, i) => info(i)) }),
    read: (uri: string) =>
      new Promise<ReadResult>((resolve) => {
        const answer = (): void =>
          resolve({ contents: [{ uri, mimeType: 'text/plain', text: `words of ${uri}` }] });
        if (answering) return answer();
        held.set(uri, answer);
        if (watcher !== undefined && held.size >= watcher.n) watcher.resolve();
      }),
  } as unknown as Provider;
  return {
    mount,
    waiting: (n) =>
      new Promise<void>((resolve) => {
        if (held.size >= n) resolve();
        else watcher = { n, resolve };
      }),
    answerAll: () => {
      for (const uri of [...held.keys()].reverse()) {
        held.get(uri)!();
        held.delete(uri);
      }
    },
    answerRest: () => {
      answering = true;
      for (const answer of held.values()) answer();
      held.clear();
    },
  };
}

function memoryWriter(): { writer: IndexWriter; written: string[] } {
  const written: string[] = [];
  const writer: IndexWriter = {
    stats: { blobsWritten: 0, docsWritten: 0 },
    stored: async (uris) => uris.map(() => null),
    lastDocId: async () => 0,
    storedPage: async () => ({ docs: [] }),
    hasText: async () => false,
    under: async () => [],
    keepMounts: async () => undefined,
    isWriteFailure: () => false,
    write: async (docs: readonly NewDoc[]) => void written.push(...docs.map((d) => d.uri)),
  };
  return { writer, written };
}

describe('the search feeder', () => {
  it('reads several resources at once while building, and indexes them in list order', async () => {
    const source = heldSource();
    const { writer, written } = memoryWriter();
    const feeder = new Feeder(() => writer, [source.mount], {
      maxFileBytes: 1024 * 1024,
      segmenter: new Segmenter(),
      logger: silentLogger,
    });
    try {
      const built = feeder.start();
      // Several reads are waiting at once: the build did not wait for the first to index the next.
      await source.waiting(4);
      source.answerAll('reverse');
      source.answerRest();
      await built;
      await feeder.idle();
      expect(written).toEqual(Array.from({ length: COUNT }, (_, i) => info(i).uri));
    } finally {
      feeder.close();
    }
  });
});
