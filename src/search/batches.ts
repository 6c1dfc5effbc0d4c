/**
 * What the feeder has queued for the index and not yet written, and the batch being written. A batch
 * is sent when it is full (MAX_BATCH documents or MAX_BATCH_BYTES of text) without waiting for it to
 * be written — the feeder reads the next one meanwhile — but only once the batch before is written:
 * one in flight at most, so memory stays bounded and a failure is thrown to the feeder soon after.
 */
import type { IndexWriter } from './backend.js';
import type { NewDoc } from './store.js';

const MAX_BATCH = 1000;
const MAX_BATCH_BYTES = 4 << 20;

export class Batches {
  private docs: NewDoc[] = [];
  /** Keys of the texts in `docs`. */
  private readonly keys = new Set<string>();
  /** Bytes of text in `docs`. */
  private bytes = 0;
  private removals: string[] = [];
  /** The batch being written (its failure is thrown by `settle`). */
  private writing: Promise<void> | undefined;

  constructor(private readonly writer: () => IndexWriter) {}

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

  get full(): boolean {
    return this.docs.length >= MAX_BATCH || this.bytes >= MAX_BATCH_BYTES;
  }

  /**
   * Writes what is queued, once the batch in flight is written. `wait` false: returns once it is
   * sent, and the feeder goes on while it is written. `drop`: what is queued is dropped unwritten
   * (the feeder closed).
   */
  async flush(wait: boolean, drop = false): Promise<void> {
    await this.settle();
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
    // Its failure is thrown by the next settle; until then it is not an unhandled rejection.
    writing.catch(() => undefined);
    this.writing = writing;
  }

  /** Waits for the batch in flight; throws its failure. */
  async settle(): Promise<void> {
    const writing = this.writing;
    this.writing = undefined;
    await writing;
  }
}
