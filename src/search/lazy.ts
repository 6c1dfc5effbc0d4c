/**
 * The search index, opened on first use. Serving starts without SQLite: the index module (and
 * better-sqlite3 with it) is loaded, and the index opened and brought up to date, when the first
 * search arrives or `open()` is called — so the first answer of a server is never delayed by it.
 */
import type { Logger } from '../core/log.js';
import type { Registry } from '../core/registry.js';
import type { SearchService, SearchSettings } from './service.js';

export type { SearchHit, SearchPage, SearchRequest, SearchSettings } from './service.js';

export class LazySearch {
  private opened: Promise<SearchService> | undefined;
  private closed = false;

  constructor(
    private readonly registry: Registry,
    readonly settings: SearchSettings,
    private readonly logger: Logger,
  ) {}

  /** The service, opening the index (and starting its build) the first time. */
  open(): Promise<SearchService> {
    if (this.closed) return Promise.reject(new Error('the search index is closed'));
    this.opened ??= import('./service.js').then(
      ({ SearchService }) => new SearchService(this.registry, this.settings, this.logger),
    );
    return this.opened;
  }

  /** Whether the index has been opened. */
  get isOpen(): boolean {
    return this.opened !== undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
    const opened = this.opened;
    this.opened = undefined;
    if (opened !== undefined) await (await opened.catch(() => undefined))?.close();
  }
}
