/**
 * An index writer for feeder tests that holds each write until the test lets it go, and remembers
 * each write's URIs (`writes`, one array a write; `written`, all of them in order). What the index
 * holds under a directory comes from `under` (nothing by default).
 */
import type { IndexWriter, Signatures } from '../../src/search/backend.js';
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

export function heldWriter(under: () => Promise<Signatures> = async () => new Map()): HeldWriter {
  const writes: string[][] = [];
  const written: string[] = [];
  let held: (() => void) | undefined;
  const writer: IndexWriter = {
    stats: { blobsWritten: 0, docsWritten: 0 },
    signatures: async () => new Map(),
    signaturesUnder: under,
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
