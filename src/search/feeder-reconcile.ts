/**
 * A reconcile: what a mount (or one of its subtrees) lists, compared with what the index holds of
 * it — each resource whose signature differs is read (a few ahead) and indexed, each the index holds
 * that is no longer listed is removed, and what the provider adds beyond its list (search documents)
 * is indexed by its own text. Run by the feeder (feeder.ts) in its slices.
 *
 * Its memory does not grow with the mount: the index is asked for the signatures of each page as it
 * is listed (the next page is listed and asked for while this one is indexed), the ids of the stored
 * documents listed are kept as bits, and what the index holds that was not listed is then found by
 * going through the stored documents a page at a time. A document written after the reconcile began
 * has a higher id than any it looked at (ids are never given twice), so it is left alone.
 */
import type { Provider, ResourceInfo } from '../core/types.js';
import type { DocRange, IndexWriter, Stored } from './backend.js';
import type { Batches } from './batches.js';
import { buildDoc, contentSignature, isContainer, listedSignature } from './document.js';
import { ReadAhead, readForIndex, type AheadItem } from './feeder-read.js';
import type { FeederOptions, Progress } from './feeder-types.js';
import type { NewDoc } from './store.js';

const LIST_PAGE = 1000;
/** Stored documents looked at per call when finding those no longer listed. */
const SWEEP_PAGE = 2000;

/** What a reconcile needs of the feeder running it. */
export interface ReconcileHost {
  /** Where documents are queued now (the build's batches, or those of changes run ahead of it). */
  batches(): Batches;
  store(): IndexWriter;
  readonly signal: AbortSignal;
  readonly options: FeederOptions;
  readonly progress: Progress;
  isClosed(): boolean;
  /** Indexes one resource read ahead, then counts it and paces. */
  settle(next: AheadItem): Promise<void>;
  /** Counts time, yields the event loop when the slice is spent, runs changes ahead of a build. */
  pace(): Promise<void>;
  queue(doc: NewDoc): void;
  /** Queues the removal of documents, and sends the batch once it is full. */
  remove(uris: readonly string[]): Promise<void>;
}

/** Ids of stored documents, one bit each. */
class IdSet {
  private bits = new Uint8Array(1024);

  add(id: number): void {
    const at = Math.floor(id / 8);
    if (at >= this.bits.length) {
      const grown = new Uint8Array(Math.max(at + 1, this.bits.length * 2));
      grown.set(this.bits);
      this.bits = grown;
    }
    this.bits[at]! |= 1 << (id % 8);
  }

  has(id: number): boolean {
    const at = Math.floor(id / 8);
    return at < this.bits.length && (this.bits[at]! & (1 << (id % 8))) !== 0;
  }
}

/** Reconciles a mount, or only what it lists under the container `under`. */
export async function reconcile(
  host: ReconcileHost,
  mount: Provider,
  under?: string,
): Promise<void> {
  const range: DocRange = under === undefined ? { mount: mount.root } : { under };
  // The last id given once the batch in flight is written: documents written later (this
  // reconcile's own, changes run ahead of it) are not looked at when finding what went.
  const lastIdSoon = host
    .batches()
    .settle()
    .then(() => host.store().lastDocId());
  // Awaited below; a listing that fails first leaves it no unhandled rejection.
  lastIdSoon.catch(() => undefined);
  // Content ids let a text shared by several resources (a git blob at several paths) be read once.
  const ctx = { signal: host.signal, contentIds: true };
  const listPage = (after: string | undefined) =>
    under === undefined
      ? mount.list(after, LIST_PAGE, ctx)
      : mount.listUnder!(under, after, LIST_PAGE, ctx);
  /** A page listed, its documents, and what the index holds of each. */
  const fetchPage = async (after: string | undefined) => {
    const page = await listPage(after);
    const documents = page.items.filter((item) => !isContainer(item));
    // An index that held nothing when the reconcile began (a first build) is not asked.
    const stored =
      (await lastIdSoon) === 0
        ? documents.map(() => null)
        : await host.store().stored(documents.map((d) => d.uri));
    return { last: page.last, documents, stored };
  };
  const extras = new Map(
    under === undefined
      ? ((await mount.searchDocuments?.(ctx)) ?? []).map((doc) => [doc.info.uri, doc] as const)
      : [],
  );
  let page = await fetchPage(undefined);
  const lastId = await lastIdSoon;
  /** The stored documents listed (or added beyond the list): not to be removed. */
  const listed = new IdSet();
  let counted = 0;
  // Resources to index are read a few ahead (a document's conversion takes a worker of the
  // pool), and indexed in list order as their reads complete.
  const ahead = new ReadAhead((mount, info, listed, extra) =>
    info.contentId === undefined
      ? readForIndex(mount, info, listed, host.options, host.signal, extra)
      : undefined,
  );
  for (;;) {
    const { documents } = page;
    // The next page is listed, and asked for, while this one is indexed.
    const next = page.last === undefined || host.isClosed() ? undefined : fetchPage(page.last);
    next?.catch(() => undefined);
    if (host.progress.building) host.progress.total += documents.length;
    counted += documents.length;
    for (const [i, item] of documents.entries()) {
      const stored = page.stored[i] ?? undefined;
      if (stored !== undefined) listed.add(stored.id);
      const extra = extras.get(item.uri)?.text;
      extras.delete(item.uri);
      let sig = listedSignature(item);
      if (sig !== undefined && extra !== undefined) sig = `${sig}:${contentSignature(extra)}`;
      if (stored === undefined || sig === undefined || stored.sig !== sig) {
        ahead.add(mount, item, sig, stored?.sig, extra);
        while (ahead.full) await host.settle(ahead.next());
      } else {
        host.progress.done += 1;
        await host.pace();
      }
    }
    if (next === undefined || host.isClosed()) break;
    page = await next;
  }
  if (host.isClosed()) return;
  while (!ahead.empty) await host.settle(ahead.next());
  if (host.isClosed()) return;
  counted += await indexExtras(host, mount, [...extras.values()], listed);
  const removed = await removeUnlisted(host, range, lastId, listed);
  host.options.logger.debug(
    { source: mount.root, under, resources: counted, removed },
    under === undefined ? 'search index: source reconciled' : 'search index: subtree reconciled',
  );
}

/** What the provider adds beyond its list (e.g. templated named queries): their own text alone. */
async function indexExtras(
  host: ReconcileHost,
  mount: Provider,
  extras: readonly { info: ResourceInfo; text: string }[],
  listed: IdSet,
): Promise<number> {
  for (let from = 0; from < extras.length; from += LIST_PAGE) {
    const some = extras.slice(from, from + LIST_PAGE);
    const stored = await host.store().stored(some.map((e) => e.info.uri));
    for (const [i, { info, text }] of some.entries()) {
      const found: Stored | null | undefined = stored[i];
      if (found != null) listed.add(found.id);
      const sig = `x:${contentSignature(text)}`;
      if (host.progress.building) host.progress.total += 1;
      if (found?.sig !== sig)
        host.queue(
          buildDoc(info, mount.root, sig, host.options.segmenter, { key: `uri:${info.uri}`, text }),
        );
      host.progress.done += 1;
      await host.pace();
    }
  }
  return extras.length;
}

/** Removes the documents of `range` stored before the reconcile began that it did not list. */
async function removeUnlisted(
  host: ReconcileHost,
  range: DocRange,
  lastId: number,
  listed: IdSet,
): Promise<number> {
  let removed = 0;
  let after: string | undefined;
  if (lastId === 0) return 0;
  do {
    const page = await host.store().storedPage(range, lastId, after, SWEEP_PAGE);
    const gone = page.docs.filter((doc) => !listed.has(doc.id)).map((doc) => doc.uri);
    if (gone.length > 0) await host.remove(gone);
    removed += gone.length;
    after = page.last;
  } while (after !== undefined && !host.isClosed());
  return removed;
}
