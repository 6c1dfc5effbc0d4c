/**
 * The search service: the index file for the served sources, kept live by the feeder, and queries
 * over it. A caller whom access rules restrict is searched only inside the URI ranges its rules can
 * allow, and ranked without the index's global statistics (scope.ts, visible.ts), so documents
 * denied to it change neither its answer nor its time; a caller no rule restricts gets BM25 over
 * the whole index. Every hit is then judged for the caller by access control
 * (visibility.ts: the decision reads get, plus the list rules) before it is returned,
 * counted towards `hasMore`, or has a snippet cut from it; pages continue behind the registry's
 * sealed cursors, bound to the caller and to the query.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidArgumentError, isReservoirError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import type { Registry } from '../core/registry.js';
import type { Principal } from '../core/principal.js';
import type { CallContext, Provider } from '../core/types.js';
import { candidateRows, type Run } from './candidates.js';
import { partAt, snippetOf, type Snippet } from './document.js';
import { documentFilters } from './filters.js';
import { Feeder, type Progress } from './feeder.js';
import { parseQuery, QueryError, type ParsedQuery } from './query.js';
import { Segmenter, SEGMENTER_LANGUAGES, type SegmenterLanguage } from './segment.js';
import { indexedMounts, indexKey, sourceName } from './sources.js';
import { IndexReader, ReaderTimeout, type Statement } from './reader.js';
import { parseAfter, positionOf, type Position, type Row } from './rows.js';
import { scopeSql, type Scope } from './scope.js';
import { SearchVisibility } from './visibility.js';
import {
  MAX_VISIBLE_MATCHES,
  parseRuns,
  rankVisible,
  runStatements,
  visibleStatements,
  type VisibleRow,
} from './visible.js';
import { isBrokenIndex, Store, type StoreStats } from './store.js';

export const DEFAULT_MAX_FILE_BYTES = 1024 * 1024;
/** How long the index queries of one search may take in all, ms (see SearchSettings.queryBudgetMs). */
export const DEFAULT_QUERY_BUDGET_MS = 10_000;

export interface SearchSettings {
  /** Where index files live (one per set of sources). */
  stateDir: string;
  /** Sources to index, by name or root URI. @default every files and git source */
  sources?: string[] | undefined;
  /** Largest text indexed per resource, in bytes; larger ones are found by name only. @default 1 MiB */
  maxFileBytes?: number | undefined;
  /** Word segmenters for scripts without spaces. @default ['zh', 'ja'] */
  languages?: SegmenterLanguage[] | undefined;
  /**
   * How long the index queries of one search may run in all before it is stopped and answered with
   * an error asking for a narrower query (ranking a word or prefix found in most of a very large
   * tree takes seconds). @default 10,000 ms
   */
  queryBudgetMs?: number | undefined;
}

export interface SearchRequest {
  query: string;
  limit: number;
  cursor?: string | undefined;
  under?: string | undefined;
  mimeType?: string | undefined;
  source?: string | undefined;
}

export interface SearchHit {
  uri: string;
  name: string;
  title?: string;
  mimeType?: string;
  score: number;
  /** Plain text around the first match (no markup); empty when the resource cannot be read now. */
  snippet: string;
  /** Where the matches lie in `snippet`: `[start, end)` in UTF-16 code units; empty for a name or path match. */
  highlights: [number, number][];
  lastModified?: string;
  /** For a document (PDF, spreadsheet, slides): the page, sheet or slide the snippet is from, e.g. `page 3`. */
  part?: string;
}

export interface SearchPage {
  hits: SearchHit[];
  nextCursor?: string;
  /** Present while the first build runs: the answer covers what is indexed so far. */
  indexing?: { done: number; total: number };
  /** Present when the index could not be written (disk full, I/O error): it lacks some resources. */
  incomplete?: { reason: string };
}

export class SearchService {
  readonly file: string;
  private store: Store;
  private feeder: Feeder;
  private readonly segmenter: Segmenter;
  private readonly mounts: Provider[];
  /** What each caller may see of it (access control's decisions). */
  private readonly visibility: SearchVisibility;
  private readonly maxFileBytes: number;
  private readonly queryBudgetMs: number;
  /** Runs the index queries, off the server's thread. */
  private reader: IndexReader;
  /** Resolves when the start-up build (or catch-up) is done. */
  ready: Promise<void>;
  /** Whether the index held nothing when opened: its start-up build is the first one. */
  private fresh: boolean;
  constructor(
    private readonly registry: Registry,
    settings: SearchSettings,
    private readonly logger: Logger,
  ) {
    this.maxFileBytes = settings.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
    this.queryBudgetMs = settings.queryBudgetMs ?? DEFAULT_QUERY_BUDGET_MS;
    const languages = settings.languages ?? [...SEGMENTER_LANGUAGES];
    this.segmenter = new Segmenter(languages);
    this.mounts = indexedMounts(registry.providers(), settings.sources);
    this.visibility = new SearchVisibility(registry.access, this.mounts);
    this.file = join(
      settings.stateDir,
      'search',
      `index-${indexKey(this.mounts, [this.maxFileBytes, languages])}.sqlite`,
    );
    this.store = Store.open(this.file, logger);
    this.reader = new IndexReader(this.file);
    this.fresh = this.store.isEmpty();
    this.feeder = this.newFeeder();
    this.ready = this.startFeeder();
  }

  /** The sources covered, by name. */
  sources(): string[] {
    return this.mounts.map(sourceName);
  }

  /** Whether the first build of this index (not a catch-up of a reused one) is running. */
  firstBuildRunning(): boolean {
    return this.fresh && this.feeder.progress.building;
  }

  progress(): Progress {
    return this.feeder.progress;
  }

  onProgress(listener: () => void): () => void {
    return this.feeder.onProgress(listener);
  }

  /** Resolves when nothing is queued (the build done and every change so far applied). */
  idle(): Promise<void> {
    return this.feeder.idle();
  }

  totals(): { docs: number; bytes: number; blobs: number } {
    return this.store.totals();
  }

  /** What the index writer has done since the index file was opened (texts and documents written). */
  writes(): StoreStats {
    return { ...this.store.stats };
  }

  async search(request: SearchRequest, ctx: CallContext): Promise<SearchPage> {
    let parsed: ParsedQuery;
    try {
      parsed = parseQuery(request.query, this.segmenter);
    } catch (error) {
      if (error instanceof QueryError)
        throw new InvalidArgumentError('query', `${error.message} (at column ${error.column})`, {
          column: error.column,
        });
      throw error;
    }
    // A file deleted under a running server would otherwise go on living unlinked: start afresh.
    if (!existsSync(this.file))
      this.rebuild(new Error('the index file was deleted'), 'was deleted');
    const scope = this.visibility.scope(ctx.principal);
    const where = documentFilters(parsed, request, this.visibility.sources(ctx.principal));
    const list = `search:${createHash('sha256')
      .update(JSON.stringify([request.query, request.under, request.mimeType, request.source]))
      .digest('base64url')
      .slice(0, 16)}`;
    let after: Position | undefined;
    if (request.cursor !== undefined)
      after = parseAfter(this.registry.openPosition(request.cursor, list, ctx.principal));
    // An answer whose queries began while the build ran may lack what the build added since.
    const building = this.feeder.progress.building;
    const run: Run = {
      match: parsed.match,
      where,
      deadline: Date.now() + this.queryBudgetMs,
      signal: ctx.signal,
      query: request.query,
    };
    let visible: { rows: Row[]; docs: number } | undefined;
    if (scope.kind === 'ranges') visible = await this.visibleRows(run, scope, after, building);
    const rows =
      visible === undefined
        ? candidateRows((statements) => this.query(run, statements), run, after, request.limit + 1)
        : visible.rows;
    const hits: Row[] = [];
    let more = false;
    for await (const row of rows) {
      ctx.signal.throwIfAborted();
      // The access check of each candidate is bounded by the search's budget, as its queries are.
      if (Date.now() > run.deadline) throw this.tooBroad(run);
      if (!(await this.visibility.shows(row.uri, ctx))) continue;
      if (hits.length === request.limit) {
        more = true;
        break;
      }
      hits.push(row);
    }
    const page: SearchPage = {
      hits: await Promise.all(hits.map((row) => this.hit(row, parsed, ctx))),
    };
    if (more)
      page.nextCursor = this.registry.sealPosition(
        list,
        positionOf(hits[hits.length - 1]!),
        ctx.principal,
      );
    const progress = this.feeder.progress;
    if (building || progress.building) {
      // A restricted caller is told how many of the documents it may see are indexed, never the whole count.
      page.indexing =
        visible === undefined
          ? { done: progress.done, total: progress.total }
          : { done: visible.docs, total: visible.docs };
    }
    if (progress.partial !== undefined)
      page.incomplete = {
        reason: `the index could not be written (${progress.partial.code}: ${progress.partial.message})`,
      };
    return page;
  }

  /** Whether `principal` sees every indexed document (no access rule restricts it anywhere in them). */
  seesEverything(principal: Principal | undefined): boolean {
    return this.visibility.scope(principal).kind === 'all';
  }

  async close(): Promise<void> {
    this.feeder.close();
    await this.feeder.idle().catch(() => undefined);
    this.reader.close();
    this.store.close();
  }

  private newFeeder(): Feeder {
    const registry = this.registry;
    return new Feeder(this.store, this.mounts, {
      maxFileBytes: this.maxFileBytes,
      segmenter: this.segmenter,
      logger: this.logger,
      read: (mount, uri, ctx) => registry.indexRead(mount, uri, ctx),
      renderedMaxBytes: (info) =>
        registry.rendersAsText(info.mimeType, info.uri) ? registry.maxResponseBytes : undefined,
    });
  }

  /**
   * Runs index queries in a reader process, within what is left of the search's budget. A corrupt
   * index found doing so is rebuilt (and the error thrown); a query that outruns the budget is
   * stopped and answered with an error asking for a narrower query.
   */
  private async query(run: Run, statements: readonly Statement[]): Promise<unknown[][]> {
    try {
      return await this.reader.run(statements, { deadline: run.deadline, signal: run.signal });
    } catch (error) {
      if (error instanceof ReaderTimeout) throw this.tooBroad(run);
      if (isBrokenIndex(error)) this.rebuild(error);
      throw error;
    }
  }

  /** The error of a search that outran its budget. */
  private tooBroad(run: Run): InvalidArgumentError {
    return new InvalidArgumentError(
      'query',
      `${JSON.stringify(run.query)} matches too much to be ranked within the search's ${this.queryBudgetMs} ms budget: narrow it (longer prefixes, fewer OR terms, or a path:, mime: or source: filter)`,
      { budgetMs: this.queryBudgetMs },
    );
  }

  /**
   * The matches a restricted caller may see, ranked (see visible.ts), in two round trips to a reader
   * (the runs of visible rows, then the matches inside them) — and, while the build runs, how many
   * documents it may see are indexed so far.
   */
  private async visibleRows(
    run: Run,
    scope: Scope,
    after: Position | undefined,
    building: boolean,
  ): Promise<{ rows: Row[]; docs: number }> {
    const bounds = scopeSql(scope);
    const [docRuns, blobRuns] = (await this.query(run, runStatements(bounds, run.where))) as [
      string[],
      string[],
    ];
    const statements: Statement[] = visibleStatements(
      run.match,
      bounds,
      run.where,
      parseRuns(docRuns),
      parseRuns(blobRuns),
    );
    if (building)
      statements.push({
        sql: `SELECT count(*) FROM docs d WHERE 1 ${bounds.sql}`,
        params: bounds.params,
        pluck: true,
      });
    const [names, texts, count] = (await this.query(run, statements)) as [
      VisibleRow[],
      VisibleRow[],
      number[] | undefined,
    ];
    if (names.length > MAX_VISIBLE_MATCHES || texts.length > MAX_VISIBLE_MATCHES) {
      throw new InvalidArgumentError(
        'query',
        `${JSON.stringify(run.query)} matches more than ${MAX_VISIBLE_MATCHES} of the resources you may read, too many to rank at once: narrow it (longer prefixes, fewer OR terms, or a path:, mime: or source: filter)`,
        { maxMatches: MAX_VISIBLE_MATCHES },
      );
    }
    return { rows: rankVisible(names, texts, after), docs: count?.[0] ?? 0 };
  }

  /** A corrupt index found mid-query: replaced by a fresh one (with one log line), rebuilt from the sources. */
  private rebuild(error: unknown, what = 'is corrupt'): void {
    this.logger.warn(
      { file: this.file, err: error },
      `search index ${this.file} ${what}; rebuilding it`,
    );
    this.feeder.close();
    this.reader.stop();
    this.store.close();
    Store.remove(this.file);
    this.store = Store.open(this.file, this.logger);
    this.fresh = true;
    this.feeder = this.newFeeder();
    this.ready = this.startFeeder();
  }

  /** Starts the feeder; a failure is logged (the index then answers from what it holds). */
  private startFeeder(): Promise<void> {
    return this.feeder
      .start()
      .catch((error: unknown) =>
        this.logger.warn({ err: error }, 'search index: the build failed'),
      );
  }

  /** The text a mount's `searchDocuments` gives for `uri`, if it gives one. */
  private async searchText(uri: string, ctx: CallContext): Promise<string | undefined> {
    const mount = this.mounts.find((m) => uri.startsWith(m.root));
    if (mount?.searchDocuments === undefined) return undefined;
    return (await mount.searchDocuments({ signal: ctx.signal })).find((doc) => doc.info.uri === uri)
      ?.text;
  }

  private async hit(row: Row, parsed: ParsedQuery, ctx: CallContext): Promise<SearchHit> {
    let snippet: Snippet = { text: '', highlights: [] };
    let part: string | undefined;
    try {
      const result = await this.registry.read(row.uri, ctx);
      const first = result.contents[0];
      if (first !== undefined && 'text' in first && first.mimeType !== 'inode/directory') {
        snippet = snippetOf(first.text, parsed.terms);
        // A document's snippet is cut from its rendition, whose markers say where it lies.
        if (snippet.at !== undefined && this.registry.rendersAsText(row.mime ?? undefined, row.uri))
          part = partAt(first.text, snippet.at);
      }
    } catch (error) {
      if (!isReservoirError(error)) throw error;
      // Unreadable as such (a templated named query needs its parameters) or gone since it was indexed.
    }
    // Where the match lies in the provider's own search text (a named query's description or SQL,
    // not its result), the snippet is cut from that text.
    if (snippet.highlights.length === 0) {
      const own = await this.searchText(row.uri, ctx);
      const marked = own === undefined ? undefined : snippetOf(own, parsed.terms);
      if (
        marked !== undefined &&
        (marked.highlights.length > 0 || (snippet.text === '' && marked.text !== ''))
      ) {
        snippet = marked;
        part = undefined;
      }
    }
    const hit: SearchHit = {
      uri: row.uri,
      name: row.name,
      score: Number((-row.score).toPrecision(6)),
      snippet: snippet.text,
      highlights: snippet.highlights,
    };
    if (row.title !== null) hit.title = row.title;
    if (row.mime !== null) hit.mimeType = row.mime;
    if (row.modified !== null) hit.lastModified = row.modified;
    if (part !== undefined) hit.part = part;
    return hit;
  }
}
