/**
 * What the search service and its feeder need of an index, whichever engine holds it: the SQLite
 * file of one instance (sqlite-backend.ts) or PostgreSQL full-text search shared by a cluster
 * (pg/backend.ts). The feeder writes through an `IndexWriter`; the service asks a `SearchBackend`
 * for ranked candidate rows, then judges access, pages and cuts snippets itself — so access
 * filtering, paging and snippets are the same code over both engines.
 */
import type { QueryNode } from './query.js';
import type { Position, Row } from './rows.js';
import type { Scope } from './scope.js';
import type { NewDoc, StoreStats } from './store.js';

/** Documents, bytes of text indexed and texts stored (a shared text counted once). */
export interface Totals {
  docs: number;
  bytes: number;
  blobs: number;
}

/** A stored document's id and signature (what change detection compares). */
export interface Stored {
  id: number;
  sig: string;
}

/**
 * The URIs under the container `uri`, [from, to): every URI that starts with `uri/` (`/` + 1 is
 * `0`) — a range of the URI index on both engines.
 */
export function containerSpan(uri: string): [from: string, to: string] {
  const prefix = uri.endsWith('/') ? uri : `${uri}/`;
  return [prefix, `${prefix.slice(0, -1)}0`];
}

/** The stored documents a reconcile covers: a mount's, or those under the container `under`. */
export type DocRange = { mount: string } | { under: string };

/** A page of a range's stored documents in URI order; `last` is where the next begins (absent: none). */
export interface StoredPage {
  docs: { id: number; uri: string }[];
  last?: string;
}

/**
 * What the feeder keeps the index up to date through. A reconcile asks what is stored page by page
 * (`stored` for each page listed, then `storedPage` for what was not listed), so its memory does not
 * grow with the number of documents.
 */
export interface IndexWriter {
  /** What this writer has written since it was opened. */
  readonly stats: StoreStats;
  /** The id and signature stored for each of `uris`, in order (null where none is stored). */
  stored(uris: readonly string[]): Promise<(Stored | null)[]>;
  /**
   * The highest document id given so far. Ids are never given twice: a document written later
   * (a new one, or a new version of one) has a higher id.
   */
  lastDocId(): Promise<number>;
  /** Up to `limit` of the stored documents of `range` with ids up to `upTo`, in URI order after `after`. */
  storedPage(
    range: DocRange,
    upTo: number,
    after: string | undefined,
    limit: number,
  ): Promise<StoredPage>;
  /** Whether a text is stored under `key` (a shared text need not be read again). */
  hasText(key: string): Promise<boolean>;
  /** Writes documents and removals at once (one transaction). */
  write(docs: readonly NewDoc[], removals: readonly string[]): Promise<void>;
  /** The URIs of documents at `uri` or under `uri/`. */
  under(uri: string): Promise<string[]>;
  /** Removes every document of mounts not in `mounts`. */
  keepMounts(mounts: readonly string[]): Promise<void>;
  /** Whether an error means the index could not be written (disk full, I/O, read-only): it is then partial. */
  isWriteFailure(error: unknown): boolean;
}

/** One search's index queries: what they match, and the budget and signal they run under. */
export interface Run {
  /** The FTS5 MATCH expression. */
  match: string;
  /** The parsed query, for engines that compile it themselves. */
  tree: QueryNode;
  /** The search's filters as SQL over `docs d` (`?` placeholders). */
  where: { sql: string; params: unknown[] };
  /** When the search's queries are stopped (`Date.now()` ms). */
  deadline: number;
  signal: AbortSignal;
  /** The query as the caller wrote it, for errors. */
  query: string;
}

/** The candidate rows of a search, best first, and (for a restricted caller, while building) how many documents it may see. */
export interface Matches {
  rows: AsyncIterable<Row>;
  docs?: number;
}

export interface SearchBackend {
  /** Where the index lives, for logs and `reservoir index` (a file, or a PostgreSQL table). */
  readonly location: string;
  /** What the feeder writes through (replaced when the index is rebuilt). */
  readonly writer: IndexWriter;
  isEmpty(): Promise<boolean>;
  totals(): Promise<Totals>;
  /**
   * Candidate rows best first after `after`, for a caller of scope `scope` (only rows in it). May
   * throw `QueryTooBroad` (the budget ran out) or `IndexBroken` (rebuild it), also while iterating.
   */
  matches(
    run: Run,
    scope: Scope,
    after: Position | undefined,
    want: number,
    building: boolean,
  ): Promise<Matches>;
  /** Why the index is gone (its file deleted under a running server), when it is. */
  lost(): string | undefined;
  /** Replaces a corrupt or lost index with an empty one (the feeder is then restarted); where the index can be neither, absent. */
  reset?(): void;
  /** Which sources this instance feeds, where the index is shared (absent: it feeds every one). */
  readonly leases?: MountLeases;
  close(): Promise<void>;
}

/**
 * Who feeds each source of a shared index: the holder of its lease, one instance at a time. The
 * others only query; one that takes a lease over (its holder gone) catches the source up.
 */
export interface MountLeases {
  /** Whether this instance holds the lease of the source rooted at `root` now. */
  holds(root: string): boolean;
  /** Calls `listener` when this instance takes (`true`) or loses (`false`) a source's lease. */
  onChange(listener: (root: string, held: boolean) => void): () => void;
}

/** The index queries of a search ran past its budget and were stopped. */
export class QueryTooBroad extends Error {
  constructor() {
    super('the index queries ran past the search budget');
    this.name = 'QueryTooBroad';
  }
}

/** The index was found corrupt while querying it: it is to be rebuilt (the cause is what the caller sees). */
export class IndexBroken extends Error {
  constructor(readonly reason: unknown) {
    super('the search index is corrupt');
    this.name = 'IndexBroken';
  }
}
