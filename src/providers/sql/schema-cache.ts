/**
 * The introspected tables of a sql source, reused for a few seconds (a watch that sees the schema
 * change, or a failure that may mean it did, drops them sooner), and the lookup of one table that
 * reads the schema again once before calling it missing.
 */
import { NotFoundError } from '../../core/errors.js';
import type { DatabaseCall } from './database-calls.js';
import type { Dialect, TableInfo } from './dialect.js';

/** How long introspected schema is reused before it is read again, ms. */
const SCHEMA_TTL_MS = 5000;

export class SchemaCache {
  private cached: { at: number; tables: TableInfo[] } | undefined;

  constructor(
    private readonly dialect: () => Dialect,
    private readonly call: DatabaseCall,
  ) {}

  /** The tables, read again when `fresh` or when the cached ones are older than the TTL. */
  async tables(uri: string, fresh = false): Promise<TableInfo[]> {
    const cached = this.cached;
    if (!fresh && cached !== undefined && Date.now() - cached.at < SCHEMA_TTL_MS)
      return cached.tables;
    const list = await this.call(uri, () => this.dialect().introspect());
    this.cached = { at: Date.now(), tables: list };
    return list;
  }

  /** The table `name`, re-reading the schema once before calling it missing (NotFoundError on `uri`). */
  async table(uri: string, name: string): Promise<TableInfo> {
    const found =
      (await this.tables(uri)).find((t) => t.name === name) ??
      (await this.tables(uri, true)).find((t) => t.name === name);
    if (found === undefined) throw new NotFoundError(uri);
    return found;
  }

  /** Forgets the tables: the next lookup reads the schema. */
  drop(): void {
    this.cached = undefined;
  }
}
