/**
 * Change detection for one database, shared by every watch on it. While anything watches, either a
 * PostgreSQL LISTEN on the configured channel drives `updated` (payload: a table name, or empty /
 * unknown for "anything"), or a fingerprint poll at the configured interval compares each table's
 * fingerprint with the last one (on the kit's Poller: no overlap, backoff while the database is down). The table set is compared on every poll for `list_changed` (in
 * LISTEN mode the poll keeps running only while list listeners exist). When the last watcher and
 * listener leave, the timer and the LISTEN connection stop: nothing is left behind.
 *
 * Where the database keeps a change log the role may read (MySQL's binary log: mysql-binlog.ts) and
 * no LISTEN channel is set, each poll reads the log instead of fingerprinting rows: its tables'
 * watches are told, and a change it cannot pin to tables (DDL) tells every watch and reads the table
 * set again. Why the log is not read (log_bin off, no grant, an error reading it) is logged once,
 * and the fingerprint poll serves then.
 */
import type { Logger } from '../../core/log.js';
import { ProviderFailure } from '../utils/errors.js';
import { Poller } from '../utils/poller.js';
import type { ChangeLog, Dialect } from './dialect.js';

interface Watch {
  /** The table watched; undefined watches every table (the schema and query resources). */
  table: string | undefined;
  onChange: () => void;
}

export interface ChangeWatcherOptions {
  intervalMs: number;
  channel?: string | undefined;
  logger: Logger;
  /** Called whenever the table set may have changed, so cached schema is dropped. */
  onSchemaChange(): void;
}

export class ChangeWatcher {
  private readonly watches = new Set<Watch>();
  private readonly listListeners = new Set<() => void>();
  private last: Map<string, string> | undefined;
  /** The tables whose rows `last` fingerprinted (undefined: all). */
  private lastWatched: ReadonlySet<string> | undefined;
  private poller: Poller | undefined;
  private stopListen: Promise<(() => Promise<void>) | undefined> | undefined;
  private warned = false;
  private closed = false;
  /** The database's change log while it is read instead of row fingerprints (MySQL's binary log). */
  private log: ChangeLog | undefined;
  /** Why the change log is not read, as last logged (each reason is logged once). */
  private logReason: string | undefined;

  constructor(
    private readonly dialect: () => Dialect,
    private readonly options: ChangeWatcherOptions,
  ) {}

  /** Starts watching `table` (undefined: any table); resolves once a baseline is taken. */
  async watch(table: string | undefined, onChange: () => void): Promise<() => void> {
    const entry: Watch = { table, onChange };
    this.watches.add(entry);
    await this.started();
    // A table the last poll took no row fingerprint of gets its baseline now (others report as usual).
    const covered =
      this.log !== undefined ||
      this.lastWatched === undefined ||
      (table !== undefined && this.lastWatched.has(table));
    if (!covered && this.last !== undefined)
      await this.poll(true).catch((error: unknown) => this.warn(error));
    let stopped = false;
    return () => {
      if (stopped) return;
      stopped = true;
      this.watches.delete(entry);
      void this.settle();
    };
  }

  async onListChanged(listener: () => void): Promise<() => void> {
    const entry = (): void => listener();
    this.listListeners.add(entry);
    await this.started();
    return () => {
      if (!this.listListeners.delete(entry)) return;
      void this.settle();
    };
  }

  stats(): { watches: number; listListeners: number; polling: boolean; listening: boolean } {
    return {
      watches: this.watches.size,
      listListeners: this.listListeners.size,
      polling: this.poller !== undefined,
      listening: this.stopListen !== undefined,
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.watches.clear();
    this.listListeners.clear();
    await this.settle();
  }

  /** Takes a baseline and starts the poll or the LISTEN as needed. */
  private async started(): Promise<void> {
    if (this.last === undefined) {
      await this.openLog();
      await this.poll(false).catch((error: unknown) => this.warn(error));
    }
    if (
      this.options.channel !== undefined &&
      this.watches.size > 0 &&
      this.stopListen === undefined &&
      this.dialect().listen !== undefined
    ) {
      this.stopListen = this.dialect().listen!(
        this.options.channel,
        (payload) => this.notified(payload),
        (error) => this.warn(error),
      ).catch((error: unknown) => {
        this.warn(error);
        this.stopListen = undefined;
        this.schedule(); // fall back to polling until a later watch tries again
        return undefined;
      });
      await this.stopListen;
    }
    this.schedule();
  }

  /** Stops what no longer has anyone to serve. */
  private async settle(): Promise<void> {
    if (this.watches.size === 0 && this.stopListen !== undefined) {
      const stopping = this.stopListen;
      this.stopListen = undefined;
      await (
        await stopping
      )?.();
    }
    if (!this.needsPoll() && this.poller !== undefined) {
      this.poller.stop();
      this.poller = undefined;
    }
    if (this.watches.size === 0 && this.listListeners.size === 0) {
      this.last = undefined;
      this.log = undefined; // the next start reads the log from its end then
    }
  }

  /**
   * Opens the database's change log when it has one the role may read (not beside a LISTEN
   * channel); otherwise logs why once, and the fingerprint poll serves alone.
   */
  private async openLog(): Promise<void> {
    const dialect = this.dialect();
    if (this.options.channel !== undefined || dialect.changeLog === undefined) return;
    try {
      const opened = await dialect.changeLog();
      if ('unavailable' in opened) return this.logUnavailable(opened.unavailable);
      this.log = opened;
      if (this.logReason !== '') {
        this.logReason = '';
        this.options.logger.info(`sql: change events come from the ${opened.kind}`);
      }
    } catch (error) {
      this.logUnavailable(error instanceof Error ? error.message : String(error));
    }
  }

  private logUnavailable(reason: string): void {
    this.log = undefined;
    if (this.logReason === reason) return;
    this.logReason = reason;
    this.options.logger.info(
      { reason },
      'sql: change events are not read from the database log; polling table fingerprints instead',
    );
  }

  /** One read of the change log: reports its tables, and on `any` every watch and the table set. */
  private async pollLog(log: ChangeLog): Promise<void> {
    let changes;
    try {
      changes = await log.read();
    } catch (error) {
      if (error instanceof ProviderFailure && error.kind === 'unavailable') throw error;
      // The log cannot be read any more (log_bin turned off, a grant revoked): back to fingerprints,
      // with a fresh baseline, and every watch told (a change may have fallen between the two).
      this.logUnavailable(error instanceof Error ? error.message : String(error));
      await this.poll(false);
      for (const w of [...this.watches]) w.onChange();
      return;
    }
    if (this.warned) this.options.logger.info('sql: change detection reaches the database again');
    this.warned = false;
    if (!changes.any && changes.tables.size === 0) return;
    let listChanged = false;
    if (changes.any) {
      const previous = this.last ?? new Map<string, string>();
      const current = await this.dialect().fingerprint(new Set());
      this.last = current;
      listChanged =
        current.size !== previous.size || [...current.keys()].some((t) => !previous.has(t));
      // a table's print is its columns and creation time here: a change is DDL, cached schema goes
      if (listChanged || [...current].some(([t, print]) => previous.get(t) !== print))
        this.options.onSchemaChange();
    }
    for (const w of [...this.watches])
      if (changes.any || w.table === undefined || changes.tables.has(w.table)) w.onChange();
    if (listChanged) for (const listener of [...this.listListeners]) listener();
  }

  private needsPoll(): boolean {
    if (this.closed) return false;
    if (this.listListeners.size > 0) return true;
    return this.watches.size > 0 && this.stopListen === undefined;
  }

  private schedule(): void {
    if (this.poller !== undefined || !this.needsPoll()) return;
    // The kit's poller: one poll at a time, and a database that cannot answer is asked at a
    // doubling interval (up to 16 times the configured one) until it answers again. The interval
    // runs start to start, so a change waits at most one interval plus one poll for its `updated`.
    this.poller = new Poller({
      intervalMs: this.options.intervalMs,
      maxBackoff: 16,
      fromStart: true,
      check: () => this.poll(true),
      onError: (error) => this.warn(error),
    });
  }

  /** Takes the fingerprint and reports what changed since the last; throws when the database cannot answer. */
  private async poll(report: boolean): Promise<void> {
    if (report && this.log !== undefined && this.last !== undefined) return this.pollLog(this.log);
    const watched = this.watchedTables();
    const current = await this.dialect().fingerprint(watched);
    if (this.warned) this.options.logger.info('sql: change detection reaches the database again');
    this.warned = false;
    const previous = this.last;
    const previousWatched = this.lastWatched;
    this.last = current;
    this.lastWatched = watched;
    if (!report || previous === undefined) return;
    const changed = new Set<string>();
    // A table newly watched since the last poll has its first row fingerprint now: a baseline, not a change.
    const comparable = (table: string): boolean =>
      previousWatched === undefined || previousWatched.has(table) || !previous.has(table);
    for (const [table, print] of current)
      if (previous.get(table) !== print && comparable(table)) changed.add(table);
    for (const table of previous.keys()) if (!current.has(table)) changed.add(table);
    const listChanged =
      current.size !== previous.size || [...current.keys()].some((t) => !previous.has(t));
    if (listChanged) this.options.onSchemaChange();
    if (changed.size > 0 && this.stopListen === undefined) {
      for (const w of [...this.watches])
        if (w.table === undefined || changed.has(w.table)) w.onChange();
    }
    if (listChanged) for (const listener of [...this.listListeners]) listener();
  }

  /** The tables whose rows are watched; undefined when a watch covers every table. */
  private watchedTables(): ReadonlySet<string> | undefined {
    const tables = new Set<string>();
    if (this.log !== undefined) return tables; // the log says which rows changed
    for (const w of this.watches) {
      if (w.table === undefined) return undefined;
      tables.add(w.table);
    }
    return tables;
  }

  private notified(payload: string): void {
    const known = this.last?.has(payload) === true;
    for (const w of [...this.watches])
      if (!known || w.table === undefined || w.table === payload) w.onChange();
  }

  private warn(error: unknown): void {
    if (this.warned) return;
    this.warned = true;
    this.options.logger.warn(
      { err: error instanceof Error ? error.message : String(error) },
      'sql: change detection cannot reach the database; retrying',
    );
  }
}
