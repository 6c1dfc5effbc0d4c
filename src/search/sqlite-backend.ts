/**
 * The SQLite index of one instance: a file in the state directory (store.ts) written by the
 * feeder on the server's thread, queried by reader processes (reader.ts) within the search's
 * budget. A caller no access rule restricts is ranked by FTS5's BM25 over the whole index
 * (candidates.ts, ranked.ts); a restricted caller only inside the URI ranges its rules allow,
 * without the index's global statistics (visible.ts).
 */
import { existsSync } from 'node:fs';
import { InvalidArgumentError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import {
  IndexBroken,
  QueryTooBroad,
  type Matches,
  type Run,
  type SearchBackend,
  type Totals,
} from './backend.js';
import { candidateRows } from './candidates.js';
import { IndexReader, ReaderTimeout, type Statement } from './reader.js';
import type { Position, Row } from './rows.js';
import { scopeSql, type Scope } from './scope.js';
import {
  MAX_VISIBLE_MATCHES,
  parseRuns,
  rankVisible,
  runStatements,
  visibleStatements,
  type VisibleRow,
} from './visible.js';
import { WorkerWriter } from './store-client.js';
import { isBrokenIndex } from './sqlite-errors.js';
import { Store } from './store.js';

export class SqliteBackend implements SearchBackend {
  private store: Store;
  private reader: IndexReader;
  /** The writer, on a thread of its own; this thread's connection only reads. */
  writer: WorkerWriter;

  constructor(
    readonly file: string,
    private readonly logger: Logger,
  ) {
    this.store = Store.open(file, logger);
    this.reader = new IndexReader(file);
    this.writer = new WorkerWriter(file, logger);
  }

  get location(): string {
    return this.file;
  }

  /** Whether the index holds nothing (known at once: the file is open). */
  isEmptyNow(): boolean {
    return this.store.isEmpty();
  }

  isEmpty(): Promise<boolean> {
    return Promise.resolve(this.store.isEmpty());
  }

  totals(): Promise<Totals> {
    return Promise.resolve(this.store.totals());
  }

  lost(): string | undefined {
    // A file deleted under a running server would otherwise go on living unlinked.
    return existsSync(this.file) ? undefined : 'was deleted';
  }

  reset(): void {
    this.reader.stop();
    // Writes still queued for the old file go to it (unlinked below), never to the new one.
    void this.writer.close();
    this.store.close();
    Store.remove(this.file);
    this.store = Store.open(this.file, this.logger);
    this.writer = new WorkerWriter(this.file, this.logger);
  }

  async matches(
    run: Run,
    scope: Scope,
    after: Position | undefined,
    want: number,
    building: boolean,
  ): Promise<Matches> {
    if (scope.kind === 'ranges') {
      const visible = await this.visibleRows(run, scope, after, building);
      return { rows: fromArray(visible.rows), docs: visible.docs };
    }
    return { rows: candidateRows((statements) => this.query(run, statements), run, after, want) };
  }

  async close(): Promise<void> {
    this.reader.close();
    await this.writer.close();
    this.store.close();
  }

  /**
   * Runs index queries in a reader process, within what is left of the search's budget. A corrupt
   * index found doing so is reported for a rebuild; a query that outruns the budget is stopped.
   */
  private async query(run: Run, statements: readonly Statement[]): Promise<unknown[][]> {
    try {
      return await this.reader.run(statements, { deadline: run.deadline, signal: run.signal });
    } catch (error) {
      if (error instanceof ReaderTimeout) throw new QueryTooBroad();
      if (isBrokenIndex(error)) throw new IndexBroken(error);
      throw error;
    }
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
        sql: `SELECT count(*) FROM docs d WHERE 1 = 1 ${bounds.sql}`,
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
}

/** Rows already ranked, as the stream the service reads. */
async function* fromArray(rows: readonly Row[]): AsyncGenerator<Row> {
  for (const row of rows) yield await Promise.resolve(row);
}
