/**
 * A reconcile: what a mount (or one of its subtrees) lists, compared with what the index holds of
 * it — each resource whose signature differs is read (a few ahead) and indexed, each the index holds
 * that is no longer listed is removed, and what the provider adds beyond its list (search documents)
 * is indexed by its own text. Run by the feeder (feeder.ts) in its slices.
 */
import type { Provider } from '../core/types.js';
import type { IndexWriter } from './backend.js';
import type { Batches } from './batches.js';
import { buildDoc, contentSignature, isContainer, listedSignature } from './document.js';
import { ReadAhead, readForIndex, type AheadItem } from './feeder-read.js';
import type { FeederOptions, Progress } from './feeder-types.js';
import type { NewDoc } from './store.js';

const LIST_PAGE = 1000;

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
}

/** Reconciles a mount, or only what it lists under the container `under`. */
export async function reconcile(
  host: ReconcileHost,
  mount: Provider,
  under?: string,
): Promise<void> {
  // The stored signatures (asked once the batch in flight is written) come while the first page
  // is listed: a new directory's files are found without waiting for the writer first.
  const knownSoon = host
    .batches()
    .settle()
    .then(() =>
      under === undefined
        ? host.store().signatures(mount.root)
        : host.store().signaturesUnder(under),
    );
  // Awaited below; a listing that fails first leaves it no unhandled rejection.
  knownSoon.catch(() => undefined);
  // Content ids let a text shared by several resources (a git blob at several paths) be read once.
  const ctx = { signal: host.signal, contentIds: true };
  const listPage = (after: string | undefined) =>
    under === undefined
      ? mount.list(after, LIST_PAGE, ctx)
      : mount.listUnder!(under, after, LIST_PAGE, ctx);
  const extras = new Map(
    under === undefined
      ? ((await mount.searchDocuments?.(ctx)) ?? []).map((doc) => [doc.info.uri, doc] as const)
      : [],
  );
  let page = await listPage(undefined);
  const known = await knownSoon;
  let counted = 0;
  // Resources to index are read a few ahead (a document's conversion takes a worker of the
  // pool), and indexed in list order as their reads complete.
  const ahead = new ReadAhead((mount, info, listed, extra) =>
    info.contentId === undefined
      ? readForIndex(mount, info, listed, host.options, host.signal, extra)
      : undefined,
  );
  for (;;) {
    const documents = page.items.filter((item) => !isContainer(item));
    if (host.progress.building) host.progress.total += documents.length;
    counted += documents.length;
    for (const item of documents) {
      const stored = known.get(item.uri);
      known.delete(item.uri);
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
    if (page.last === undefined || host.isClosed()) break;
    page = await listPage(page.last);
  }
  if (host.isClosed()) return;
  while (!ahead.empty) await host.settle(ahead.next());
  if (host.isClosed()) return;
  // What the provider adds beyond its list (e.g. templated named queries): their own text alone.
  for (const { info, text } of extras.values()) {
    const stored = known.get(info.uri);
    known.delete(info.uri);
    const sig = `x:${contentSignature(text)}`;
    counted += 1;
    if (host.progress.building) host.progress.total += 1;
    if (stored?.sig !== sig)
      host.queue(
        buildDoc(info, mount.root, sig, host.options.segmenter, { key: `uri:${info.uri}`, text }),
      );
    host.progress.done += 1;
    await host.pace();
  }
  host.batches().remove(known.keys());
  host.options.logger.debug(
    { source: mount.root, under, resources: counted, removed: known.size },
    under === undefined ? 'search index: source reconciled' : 'search index: subtree reconciled',
  );
}
