/**
 * The search service: the index file for the served sources, kept live by the feeder, and queries
 * over it. Every hit is judged by the registry's access decision for the caller before it is
 * returned, counted towards `hasMore`, or has a snippet cut from it; pages continue behind the
 * registry's sealed cursors, bound to the caller and to the query.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidArgumentError, InvalidCursorError, isReservoirError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import type { Registry } from '../core/registry.js';
import type { CallContext, Provider } from '../core/types.js';
import { snippetOf } from './document.js';
import { documentFilters } from './filters.js';
import { Feeder, type Progress } from './feeder.js';
import { parseQuery, QueryError, type ParsedQuery } from './query.js';
import { Segmenter, SEGMENTER_LANGUAGES, type SegmenterLanguage } from './segment.js';
import { indexedMounts, indexKey, sourceName } from './sources.js';
import type Database from 'better-sqlite3';
import { isBrokenIndex, Store, type StoreStats } from './store.js';

export const DEFAULT_MAX_FILE_BYTES = 1024 * 1024;
/** BM25 over names and paths, a name match weighing twice a path match (a text match weighs 1). */
const NAME_RANKING = 'bm25(4.0, 2.0)';

/** Where a page ends: the last row's score, stored text (0 for a name match) and document. */
type Position = [number, number, number];

/** The order of rows: score, then text (name matches first), then document. */
function compare(a: { score: number; blob: number; id: number }, b: { score: number; blob: number; id: number }): number {
  return a.score - b.score || a.blob - b.blob || a.id - b.id;
}

/**
 * The size of the next page of candidate rows: doubling (up to a bound), since a page is asked for
 * only when the one before was used up by rows that access or the name stream took out — each page
 * re-ranks every match, so fixed small pages would rank them once per page.
 */
function nextPage(page: number): number {
  return Math.min(Math.max(page * 2, 64), 65_536);
}

export interface SearchSettings {
  /** Where index files live (one per set of sources). */
  stateDir: string;
  /** Sources to index, by name or root URI. @default every files and git source */
  sources?: string[];
  /** Largest text indexed per resource, in bytes; larger ones are found by name only. @default 1 MiB */
  maxFileBytes?: number;
  /** Word segmenters for scripts without spaces. @default ['zh', 'ja'] */
  languages?: SegmenterLanguage[];
}

export interface SearchRequest {
  query: string;
  limit: number;
  cursor?: string;
  under?: string;
  mimeType?: string;
  source?: string;
}

export interface SearchHit {
  uri: string;
  name: string;
  title?: string;
  mimeType?: string;
  score: number;
  snippet: string;
  lastModified?: string;
}

export interface SearchPage {
  hits: SearchHit[];
  nextCursor?: string;
  /** Present while the first build runs: the answer covers what is indexed so far. */
  indexing?: { done: number; total: number };
}

interface Row {
  id: number;
  /** The stored text the match came from; 0 for a name or path match. */
  blob: number;
  uri: string;
  name: string;
  title: string | null;
  mime: string | null;
  modified: string | null;
  score: number;
}

export class SearchService {
  readonly file: string;
  private store: Store;
  private feeder: Feeder;
  private readonly segmenter: Segmenter;
  private readonly mounts: Provider[];
  private readonly maxFileBytes: number;
  /** Resolves when the start-up build (or catch-up) is done. */
  ready: Promise<void>;
  /** Whether the index held nothing when opened: its start-up build is the first one. */
  private fresh: boolean;
  /** Prepared statements of `store`, by SQL text (cleared when the store is replaced). */
  private readonly statements = new Map<string, Database.Statement>();

  constructor(
    private readonly registry: Registry,
    settings: SearchSettings,
    private readonly logger: Logger,
  ) {
    this.maxFileBytes = settings.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
    const languages = settings.languages ?? [...SEGMENTER_LANGUAGES];
    this.segmenter = new Segmenter(languages);
    this.mounts = indexedMounts(registry.providers(), settings.sources);
    this.file = join(settings.stateDir, 'search', `index-${indexKey(this.mounts, [this.maxFileBytes, languages])}.sqlite`);
    this.store = Store.open(this.file, logger);
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
      if (error instanceof QueryError) throw new InvalidArgumentError('query', `${error.message} (at column ${error.column})`, { column: error.column });
      throw error;
    }
    // A file deleted under a running server would otherwise go on living unlinked: start afresh.
    if (!existsSync(this.file)) this.rebuild(new Error('the index file was deleted'), 'was deleted');
    const where = documentFilters(parsed, request, this.mounts);
    const list = `search:${createHash('sha256').update(JSON.stringify([request.query, request.under, request.mimeType, request.source])).digest('base64url').slice(0, 16)}`;
    let after: Position | undefined;
    if (request.cursor !== undefined) after = parseAfter(this.registry.openPosition(request.cursor, list, ctx.principal));
    const rows = this.rows(parsed.match, where, after, request.limit + 1);
    const hits: Row[] = [];
    let more = false;
    for (const row of rows) {
      ctx.signal.throwIfAborted();
      if (!(await this.admitted(row.uri, ctx))) continue;
      if (hits.length === request.limit) {
        more = true;
        break;
      }
      hits.push(row);
    }
    const page: SearchPage = { hits: await Promise.all(hits.map((row) => this.hit(row, parsed, ctx))) };
    if (more) page.nextCursor = this.registry.sealPosition(list, JSON.stringify([hits[hits.length - 1]!.score, hits[hits.length - 1]!.blob, hits[hits.length - 1]!.id]), ctx.principal);
    const progress = this.feeder.progress;
    if (progress.building) page.indexing = { done: progress.done, total: progress.total };
    return page;
  }

  async close(): Promise<void> {
    this.feeder.close();
    await this.feeder.idle().catch(() => undefined);
    this.store.close();
  }

  private newFeeder(): Feeder {
    return new Feeder(this.store, this.mounts, { maxFileBytes: this.maxFileBytes, segmenter: this.segmenter, logger: this.logger });
  }

  /**
   * Candidate rows, best first, resuming after `after`. Two ranked streams, merged: documents whose
   * name or path matches (`names`), and documents whose text matches (`texts`, one row per stored
   * text, fanned out to every document holding it) unless their name or path matched too — so each
   * document comes from exactly one stream, and a page boundary (score, text, document) is a total
   * order across both.
   */
  private *rows(match: string, where: { sql: string; params: unknown[] }, after: Position | undefined, want: number): Generator<Row> {
    const names = this.nameRows(match, where, after, want);
    const texts = this.textRows(match, where, after, want);
    let a = names.next();
    let b = texts.next();
    while (!a.done || !b.done) {
      if (b.done || (!a.done && compare(a.value, b.value) < 0)) {
        yield a.value as Row;
        a = names.next();
      } else {
        yield b.value;
        b = texts.next();
      }
    }
  }

  /** Documents whose name or path matches, best first (their `blob` is 0: they sort before text rows of equal score). */
  private *nameRows(match: string, where: { sql: string; params: unknown[] }, after: Position | undefined, want: number): Generator<Row> {
    let position = after;
    let page = want;
    for (;;) {
      // After (s, b, d): a greater score, or the same score with b = 0 and a greater document.
      const keyset = position === undefined ? '' : 'AND (n.rank > ? OR (n.rank = ? AND ? = 0 AND n.rowid > ?))';
      const params = [match, ...where.params, ...(position === undefined ? [] : [position[0], position[0], position[1], position[2]])];
      const rows = this.query(() =>
        where.sql === ''
          ? (this.statement(`SELECT n.rowid AS id, n.rank AS score FROM names n WHERE names MATCH ? AND n.rank MATCH '${NAME_RANKING}' ${keyset} ORDER BY n.rank, n.rowid LIMIT ?`).all(...params, page) as Row[])
          : (this.statement(
              'SELECT n.rowid AS id, n.rank AS score, d.uri, d.name, d.title, d.mime, d.modified FROM names n JOIN docs d ON d.id = n.rowid ' +
                `WHERE names MATCH ? AND n.rank MATCH '${NAME_RANKING}' ${where.sql} ${keyset} ORDER BY n.rank, n.rowid LIMIT ?`,
            ).all(...params, page) as Row[]),
      );
      const doc = this.statement('SELECT uri, name, title, mime, modified FROM docs WHERE id = ?');
      for (const row of rows) {
        if (where.sql !== '') yield { ...row, blob: 0 };
        else {
          const found = doc.get(row.id) as Omit<Row, 'id' | 'score' | 'blob'> | undefined;
          if (found !== undefined) yield { ...row, ...found, blob: 0 };
        }
      }
      const last = rows[rows.length - 1];
      if (rows.length < page || last === undefined) return;
      position = [last.score, 0, last.id];
      page = nextPage(page);
    }
  }

  /**
   * Documents whose text matches and whose name and path do not, best first: each matching text
   * fanned out to the documents holding it, in document order. Without filters, FTS5 ranks the
   * texts alone (the fast path: no join before the sort) and each text's documents are looked up
   * when it is consumed; with filters, the join applies them in SQL.
   */
  private *textRows(match: string, where: { sql: string; params: unknown[] }, after: Position | undefined, want: number): Generator<Row> {
    // Asking FTS5 per row whether a document's name matches costs a pass over the name matches each
    // time (quadratic when most texts belong to named documents): the matching ids are read once, on
    // the first row that needs them.
    let named: ((id: number) => boolean) | undefined;
    const isNamed = (id: number): boolean => (named ??= this.namedIds(match))(id);
    const past = (row: Row): boolean => position === undefined || compare(row, { score: position[0], blob: position[1], id: position[2] }) > 0;
    let position = after;
    let page = want;
    for (;;) {
      let rows: Row[];
      let last: { score: number; blob: number; id: number } | undefined;
      let count: number;
      if (where.sql === '') {
        const keyset = position === undefined ? '' : 'AND (t.rank > ? OR (t.rank = ? AND t.rowid >= ?))';
        const params = [match, ...(position === undefined ? [] : [position[0], position[0], position[1]])];
        const texts = this.query(
          () =>
            this.statement(`SELECT t.rowid AS blob, t.rank AS score FROM texts t WHERE texts MATCH ? AND t.rank MATCH 'bm25()' ${keyset} ORDER BY t.rank, t.rowid LIMIT ?`).all(
              ...params,
              page,
            ) as { blob: number; score: number }[],
        );
        const holders = this.statement('SELECT id, uri, name, title, mime, modified FROM docs WHERE blob = ? ORDER BY id');
        count = texts.length;
        const tail = texts[texts.length - 1];
        // The next page resumes after the last text, all of whose documents this one yields.
        last = tail === undefined ? undefined : { score: tail.score, blob: tail.blob, id: Number.MAX_SAFE_INTEGER };
        rows = [];
        for (const text of texts) {
          for (const doc of holders.all(text.blob) as Omit<Row, 'score' | 'blob'>[]) rows.push({ ...doc, score: text.score, blob: text.blob });
        }
        for (const row of rows) if (past(row) && !isNamed(row.id)) yield row;
      } else {
        const keyset = position === undefined ? '' : 'AND (t.rank > ? OR (t.rank = ? AND (t.rowid > ? OR (t.rowid = ? AND d.id > ?))))';
        const params = [match, ...where.params, ...(position === undefined ? [] : [position[0], position[0], position[1], position[1], position[2]])];
        rows = this.query(
          () =>
            this.statement(
              'SELECT t.rowid AS blob, t.rank AS score, d.id, d.uri, d.name, d.title, d.mime, d.modified FROM texts t JOIN docs d ON d.blob = t.rowid ' +
                `WHERE texts MATCH ? AND t.rank MATCH 'bm25()' ${where.sql} ${keyset} ORDER BY t.rank, t.rowid, d.id LIMIT ?`,
            ).all(...params, page) as Row[],
        );
        count = rows.length;
        last = rows[rows.length - 1];
        for (const row of rows) if (!isNamed(row.id)) yield row;
      }
      if (count < page || last === undefined) return;
      position = [last.score, last.blob, last.id];
      page = nextPage(page);
    }
  }

  /** Whether a document's name or path matches `match`: its id looked up among all matching ids, read in one pass. */
  private namedIds(match: string): (id: number) => boolean {
    const ids = this.query(() => this.statement('SELECT rowid FROM names WHERE names MATCH ?').pluck().all(match) as number[]);
    for (let i = 1; i < ids.length; i += 1) {
      if (ids[i]! < ids[i - 1]!) {
        ids.sort((a, b) => a - b);
        break;
      }
    }
    return (id) => {
      let low = 0;
      let high = ids.length - 1;
      while (low <= high) {
        const mid = (low + high) >>> 1;
        const at = ids[mid]!;
        if (at === id) return true;
        if (at < id) low = mid + 1;
        else high = mid - 1;
      }
      return false;
    };
  }

  /** Runs one index query; a corrupt index found doing so is rebuilt (and the error thrown). */
  private query<T>(run: () => T): T {
    try {
      return run();
    } catch (error) {
      if (isBrokenIndex(error)) this.rebuild(error);
      throw error;
    }
  }

  /** A prepared statement of the current index file, compiled once. */
  private statement(sql: string): Database.Statement {
    let found = this.statements.get(sql);
    if (found === undefined) {
      if (this.statements.size >= 64) this.statements.clear();
      found = this.store.db.prepare(sql);
      this.statements.set(sql, found);
    }
    return found;
  }

  /** A corrupt index found mid-query: replaced by a fresh one (with one log line), rebuilt from the sources. */
  private rebuild(error: unknown, what = 'is corrupt'): void {
    this.logger.warn({ file: this.file, err: error }, `search index ${this.file} ${what}; rebuilding it`);
    this.feeder.close();
    this.store.close();
    this.statements.clear();
    Store.remove(this.file);
    this.store = Store.open(this.file, this.logger);
    this.fresh = true;
    this.feeder = this.newFeeder();
    this.ready = this.startFeeder();
  }

  /** Starts the feeder; a failure is logged (the index then answers from what it holds). */
  private startFeeder(): Promise<void> {
    return this.feeder.start().catch((error: unknown) => this.logger.warn({ err: error }, 'search index: the build failed'));
  }

  private async admitted(uri: string, ctx: CallContext): Promise<boolean> {
    try {
      return await this.registry.admits(ctx.principal, 'read', uri, ctx);
    } catch (error) {
      if (isReservoirError(error)) return false;
      throw error;
    }
  }

  /** The text a mount's `searchDocuments` gives for `uri`, if it gives one. */
  private async searchText(uri: string, ctx: CallContext): Promise<string | undefined> {
    const mount = this.mounts.find((m) => uri.startsWith(m.root));
    if (mount?.searchDocuments === undefined) return undefined;
    return (await mount.searchDocuments({ signal: ctx.signal })).find((doc) => doc.info.uri === uri)?.text;
  }

  private async hit(row: Row, parsed: ParsedQuery, ctx: CallContext): Promise<SearchHit> {
    let snippet = '';
    try {
      const result = await this.registry.read(row.uri, ctx);
      const first = result.contents[0];
      if (first !== undefined && 'text' in first && first.mimeType !== 'inode/directory') snippet = snippetOf(first.text, parsed.terms);
    } catch (error) {
      if (!isReservoirError(error)) throw error;
      // Unreadable as such (a templated named query needs its parameters) or gone since it was indexed.
    }
    // Where the match lies in the provider's own search text (a named query's description or SQL,
    // not its result), the snippet is cut from that text.
    if (!snippet.includes('**')) {
      const own = await this.searchText(row.uri, ctx);
      const marked = own === undefined ? '' : snippetOf(own, parsed.terms);
      if (marked.includes('**') || (snippet === '' && marked !== '')) snippet = marked;
    }
    const hit: SearchHit = { uri: row.uri, name: row.name, score: Number((-row.score).toPrecision(6)), snippet };
    if (row.title !== null) hit.title = row.title;
    if (row.mime !== null) hit.mimeType = row.mime;
    if (row.modified !== null) hit.lastModified = row.modified;
    return hit;
  }
}

function parseAfter(after: string): Position {
  try {
    const value = JSON.parse(after) as unknown;
    if (Array.isArray(value) && value.length === 3 && typeof value[0] === 'number' && Number.isFinite(value[0]) && Number.isSafeInteger(value[1]) && Number.isSafeInteger(value[2])) {
      return [value[0], value[1] as number, value[2] as number];
    }
  } catch {
    // fall through
  }
  throw new InvalidCursorError('unreadable cursor');
}
