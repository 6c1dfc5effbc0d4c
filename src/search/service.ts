/**
 * The search service: the index of the served sources — a SQLite file of this instance, or
 * PostgreSQL shared by a cluster (backend.ts) — kept live by the feeder, and queries over it. A
 * caller whom access rules restrict is searched only inside the URI ranges its rules can allow
 * (scope.ts), so documents denied to it change neither its answer nor its time; the backend ranks
 * the candidates. Every hit is then judged for the caller by access control (visibility.ts: the
 * decision reads get, plus the list rules) before it is returned, counted towards `hasMore`, or has
 * a snippet cut from it (hits.ts); pages continue behind the registry's sealed cursors, bound to
 * the caller and to the query.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { InvalidArgumentError, UnavailableError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import type { Registry } from '../core/registry.js';
import type { Principal } from '../core/principal.js';
import type { CallContext, Provider } from '../core/types.js';
import {
  IndexBroken,
  QueryTooBroad,
  type Run,
  type SearchBackend,
  type Totals,
} from './backend.js';
import { documentFilters } from './filters.js';
import { Feeder, type Progress } from './feeder.js';
import { hitOf, type SearchHit } from './hits.js';
import { pgLocation, type PostgresIndexSettings } from './pg/settings.js';
import { parseQuery, QueryError, type ParsedQuery } from './query.js';
import { Segmenter, SEGMENTER_LANGUAGES, type SegmenterLanguage } from './segment.js';
import { indexedMounts, indexKey, sourceName } from './sources.js';
import { parseAfter, positionOf, type Position, type Row } from './rows.js';
import { SqliteBackend } from './sqlite-backend.js';
import { SearchVisibility } from './visibility.js';
import type { StoreStats } from './store.js';

export type { SearchHit } from './hits.js';

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
  /**
   * Keep the index in PostgreSQL full-text search, shared by every instance given the same
   * sources (each source fed by the holder of its lease), instead of a SQLite file of this one.
   */
  postgres?: PostgresIndexSettings | undefined;
}

export interface SearchRequest {
  query: string;
  limit: number;
  cursor?: string | undefined;
  under?: string | undefined;
  mimeType?: string | undefined;
  source?: string | undefined;
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
  /** Where the index lives: its file, or its PostgreSQL tables. */
  readonly file: string;
  /** The index, once open (a SQLite file opens at once; PostgreSQL when its connection is made). */
  private backend: SearchBackend | undefined;
  private opening: Promise<SearchBackend>;
  /** Opens the PostgreSQL index (again, after a failure). */
  private readonly openShared: (() => Promise<SearchBackend>) | undefined;
  private feeder: Feeder;
  private readonly segmenter: Segmenter;
  private readonly mounts: Provider[];
  /** What each caller may see of it (access control's decisions). */
  private readonly visibility: SearchVisibility;
  private readonly maxFileBytes: number;
  private readonly queryBudgetMs: number;
  /** Resolves when the start-up build (or catch-up) is done. */
  ready: Promise<void>;
  /** Whether the index held nothing when opened: its start-up build is the first one. */
  private fresh = false;
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
    const key = indexKey(this.mounts, [this.maxFileBytes, languages]);
    const postgres = settings.postgres;
    if (postgres === undefined) {
      const backend = new SqliteBackend(
        join(settings.stateDir, 'search', `index-${key}.sqlite`),
        logger,
      );
      this.file = backend.file;
      this.backend = backend;
      this.fresh = backend.isEmptyNow();
      this.opening = Promise.resolve(backend);
    } else {
      this.file = pgLocation(postgres, key);
      const roots = this.mounts.map((m) => m.root);
      this.openShared = () => {
        const opening = import('./pg/backend.js').then(({ PgBackend }) =>
          PgBackend.open(postgres, key, roots, logger),
        );
        opening.catch(() => undefined);
        return opening;
      };
      this.opening = this.openShared();
    }
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
  async idle(): Promise<void> {
    await this.ready;
    return this.feeder.idle();
  }

  /** Documents, bytes of text and texts in the index (all instances' writes, where it is shared). */
  async totals(): Promise<Totals> {
    return (this.backend ?? (await this.opening)).totals();
  }

  /** What this instance's index writer has done since the index was opened (texts and documents written). */
  writes(): StoreStats {
    return { ...(this.backend?.writer.stats ?? { blobsWritten: 0, docsWritten: 0 }) };
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
    const backend = this.backend ?? (await this.openedOrRetried());
    const lost = backend.lost();
    if (lost !== undefined) this.rebuild(new Error(`the index ${lost}`), lost);
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
      tree: parsed.tree,
      where,
      deadline: Date.now() + this.queryBudgetMs,
      signal: ctx.signal,
      query: request.query,
    };
    const hits: Row[] = [];
    let more = false;
    let visibleDocs: number | undefined;
    try {
      const matches = await backend.matches(run, scope, after, request.limit + 1, building);
      visibleDocs = scope.kind === 'ranges' ? (matches.docs ?? 0) : undefined;
      for await (const row of matches.rows) {
        ctx.signal.throwIfAborted();
        // The access check of each candidate is bounded by the search's budget, as its queries are.
        if (Date.now() > run.deadline) throw new QueryTooBroad();
        if (!(await this.visibility.shows(row.uri, ctx))) continue;
        if (hits.length === request.limit) {
          more = true;
          break;
        }
        hits.push(row);
      }
    } catch (error) {
      if (error instanceof QueryTooBroad) throw this.tooBroad(run);
      if (error instanceof IndexBroken) {
        this.rebuild(error.reason);
        throw error.reason;
      }
      throw error;
    }
    const page: SearchPage = {
      hits: (
        await Promise.all(hits.map((row) => hitOf(this.registry, this.mounts, row, parsed, ctx)))
      ).filter((hit) => hit !== undefined),
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
        visibleDocs === undefined
          ? { done: progress.done, total: progress.total }
          : { done: visibleDocs, total: visibleDocs };
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
    const backend = this.backend ?? (await this.opening.catch(() => undefined));
    await backend?.close();
  }

  private newFeeder(): Feeder {
    const registry = this.registry;
    return new Feeder(() => this.backend!.writer, this.mounts, {
      maxFileBytes: this.maxFileBytes,
      segmenter: this.segmenter,
      logger: this.logger,
      read: (mount, uri, ctx) => registry.indexRead(mount, uri, ctx),
      renderedMaxBytes: (info) =>
        registry.rendersAsText(info.mimeType, info.uri) ? registry.maxResponseBytes : undefined,
    });
  }

  /**
   * The shared index once open; while it cannot be opened (PostgreSQL down or refusing), an error
   * saying so — and the next search tries again.
   */
  private async openedOrRetried(): Promise<SearchBackend> {
    try {
      return await this.opening;
    } catch (error) {
      if (this.openShared !== undefined) {
        this.opening = this.openShared();
        this.ready = this.startFeeder();
      }
      throw new UnavailableError(
        this.file,
        `the search index cannot be opened in PostgreSQL (${error instanceof Error ? error.message : String(error)}); try again later`,
        { cause: error },
      );
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

  /** A corrupt or lost index: replaced by a fresh one (with one log line), rebuilt from the sources. */
  private rebuild(error: unknown, what = 'is corrupt'): void {
    this.logger.warn(
      { file: this.file, err: error },
      `search index ${this.file} ${what}; rebuilding it`,
    );
    this.feeder.close();
    this.backend!.reset?.();
    this.fresh = true;
    this.feeder = this.newFeeder();
    this.ready = this.startFeeder();
  }

  /**
   * Starts the feeder once the index is open (feeding only the sources whose lease this instance
   * holds, where the index is shared); a failure is logged (the index then answers from what it holds).
   */
  private startFeeder(): Promise<void> {
    const feeder = this.feeder;
    const started =
      this.backend !== undefined
        ? feeder.start(this.backend.leases)
        : this.opening.then(async (backend) => {
            this.backend = backend;
            this.fresh = await backend.isEmpty();
            return feeder.start(backend.leases);
          });
    return started.catch((error: unknown) =>
      this.logger.warn({ err: error }, 'search index: the build failed'),
    );
  }
}
