/**
 * What the feeder has queued for the index and not yet written, and the batches being written. A
 * batch is sent when it is full (MAX_BATCH documents and removals, or MAX_BATCH_BYTES of text) without waiting for
 * it to be written — the feeder reads the next one meanwhile. Two may be in flight: the writer
 * (its own thread) starts the second as soon as it has committed the first, instead of waiting for
 * the feeder to fill and send it, and the feeder goes on reading while both are written. A third
 * waits for the oldest, so memory stays bounded (three batches at most) and a failure is thrown to
 * the feeder soon after.
 */
import type { IndexWriter } from './backend.js';
import type { NewDoc } from './store.js';

const MAX_BATCH = 1000;
const MAX_BATCH_BYTES = 4 << 20;
/** Batches sent and not yet written, at most. */
const IN_FLIGHT = 2;

export class Batches {
  private docs: NewDoc[] = [];
  /** Keys of the texts in `docs`. */
  private readonly keys = new Set<string>();
  /** Bytes of text in `docs`. */
  private bytes = 0;
  private removals: string[] = [];
  /** The batches being written, oldest first (a failure is thrown by `settle`). */
  private writing: Promise<void>[] = [];

  constructor(
    private readonly writer: () => IndexWriter,
    private readonly inFlight = IN_FLIGHT,
  ) {}

  add(doc: NewDoc): void {
    this.docs.push(doc);
    if (doc.text?.body !== undefined) {
      this.keys.add(doc.text.key);
      this.bytes += doc.text.bytes;
    }
  }

  remove(uris: Iterable<string>): void {
    for (const uri of uris) this.removals.push(uri);
  }

  /** Whether a queued document holds the text `key`. */
  holds(key: string): boolean {
    return this.keys.has(key);
  }

  /** Full: MAX_BATCH documents and removals, or MAX_BATCH_BYTES of text. */
  get full(): boolean {
    return this.docs.length + this.removals.length >= MAX_BATCH || this.bytes >= MAX_BATCH_BYTES;
  }

  /**
   * Writes what is queued. `wait` false: returns once it is sent (after the oldest batch in flight
   * is written, when as many as allowed are), and the feeder goes on while it is written; true:
   * once it and every batch before it are written. `drop`: what is queued is dropped unwritten (the
   * feeder closed).
   */
  async flush(wait: boolean, drop = false): Promise<void> {
    if (wait) await this.settle();
    else while (this.writing.length >= this.inFlight) await this.settleOldest();
    if (this.docs.length === 0 && this.removals.length === 0) return;
    const docs = this.docs;
    const removals = this.removals;
    this.docs = [];
    this.removals = [];
    this.keys.clear();
    this.bytes = 0;
    if (drop) return;
    const writing = this.writer().write(docs, removals);
    if (wait) return writing;
    // Its failure is thrown by a later settle; until then it is not an unhandled rejection.
    writing.catch(() => undefined);
    this.writing.push(writing);
  }

  /** Waits for every batch in flight; throws the first failure. */
  async settle(): Promise<void> {
    while (this.writing.length > 0) await this.settleOldest();
  }

  /** Waits for the oldest batch in flight; throws its failure (the later ones are still awaited). */
  private async settleOldest(): Promise<void> {
    const oldest = this.writing.shift();
    try {
      await oldest;
    } catch (error) {
      // The writer answers in order: the batches after a failed one are settled too, so none is
      // left behind to fail a later, unrelated flush.
      const rest = this.writing;
      this.writing = [];
      await Promise.allSettled(rest);
      throw error;
    }
  }
}
