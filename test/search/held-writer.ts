/**
 * An index writer for feeder tests that holds each write until the test lets it go, and remembers
 * each write's URIs (`writes`, one array a write; `written`, all of them in order). The index holds
 * nothing; the last document id it gave comes from `lastDocId` (0 by default).
 */
import type { IndexWriter } from '../../src/search/backend.js';
import type { NewDoc } from '../../src/search/store.js';

export interface HeldWriter {
  writer: IndexWriter;
  writes: string[][];
  written: string[];
  /** Whether a write is being held. */
  holding(): boolean;
  /** Lets the held write finish. */
  release(): void;
}

export function heldWriter(lastDocId: () => Promise<number> = async () => 0): HeldWriter {
  const writes: string[][] = [];
  const written: string[] = [];
  let held: (() => void) | undefined;
  const writer: IndexWriter = {
    stats: { blobsWritten: 0, docsWritten: 0 },
    stored: async (uris) => uris.map(() => null),
    lastDocId,
    storedPage: async () => ({ docs: [] }),
    hasText: async () => false,
    under: async () => [],
    keepMounts: async () => undefined,
    isWriteFailure: () => false,
    write: (docs: readonly NewDoc[]) =>
      new Promise<void>((resolve) => {
        held = () => {
          writes.push(docs.map((d) => d.uri));
          written.push(...docs.map((d) => d.uri));
          resolve();
        };
      }),
  };
  return {
    writer,
    writes,
    written,
    holding: () => held !== undefined,
    release: () => {
      const go = held;
      held = undefined;
      go?.();
    },
  };
}
