/**
 * The on-disk index: one SQLite file per set of sources. `docs` holds what a hit shows and what
 * change detection compares (the signature); `fts` is a contentless FTS5 table (`content=''`,
 * `contentless_delete=1`) over name, path and text, so the text itself is never stored twice —
 * snippets are cut from the source when a hit is shown. WAL mode: readers never wait for the
 * writer, and SQLite's own locks keep two processes sharing a state directory from corrupting it.
 *
 * A file that is not a SQLite database, is corrupt, or was written by another schema version is
 * deleted and rebuilt with one log line, never a crash.
 */
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { Logger } from '../core/log.js';

/** Bumped whenever the schema or the tokenizer changes: an index of another version is rebuilt. */
export const SCHEMA_VERSION = '1';

export interface DocRow {
  id: number;
  uri: string;
  mount: string;
  name: string;
  title: string | null;
  mime: string | null;
  modified: string | null;
  sig: string;
  bytes: number;
}

export interface NewDoc {
  uri: string;
  mount: string;
  name: string;
  title?: string;
  mime?: string;
  modified?: string;
  sig: string;
  /** Bytes of text indexed (0 when only the name and path are). */
  bytes: number;
  /** Name, path and text as the tokenizer should see them (CJK already segmented). */
  fields: { name: string; path: string; body: string };
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS docs (
  id INTEGER PRIMARY KEY,
  uri TEXT NOT NULL UNIQUE,
  mount TEXT NOT NULL,
  name TEXT NOT NULL,
  title TEXT,
  mime TEXT,
  modified TEXT,
  sig TEXT NOT NULL,
  bytes INTEGER NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
  name, path, body,
  content = '', contentless_delete = 1,
  tokenize = 'unicode61 remove_diacritics 2'
);`;

/** Whether an error means the file is not a usable index (rebuild it) rather than a passing failure. */
export function isBrokenIndex(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^SQLITE_(CORRUPT|NOTADB|FORMAT|SCHEMA)/.test(code);
}

export class Store {
  private constructor(
    readonly file: string,
    readonly db: Database.Database,
  ) {}

  /** Opens (creating or rebuilding as needed) the index at `file`. */
  static open(file: string, logger: Logger): Store {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    try {
      return Store.tryOpen(file);
    } catch (error) {
      logger.warn({ file, err: error }, `search index ${file} is unusable (${describe(error)}); rebuilding it`);
      Store.remove(file);
      return Store.tryOpen(file);
    }
  }

  /** Deletes an index file and its WAL companions. */
  static remove(file: string): void {
    for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${file}${suffix}`, { force: true });
  }

  private static tryOpen(file: string): Store {
    const db = new Database(file, { timeout: 10_000 });
    try {
      // The index holds the words of every file: readable by the owner only (SQLite gives its WAL
      // and shared-memory files the database file's permissions).
      chmodSync(file, 0o600);
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      const hasMeta = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get() !== undefined;
      if (hasMeta) {
        const version = (db.prepare("SELECT value FROM meta WHERE key = 'version'").get() as { value: string } | undefined)?.value;
        if (version !== SCHEMA_VERSION) throw Object.assign(new Error(`index schema version ${version ?? 'none'}, expected ${SCHEMA_VERSION}`), { code: 'SQLITE_SCHEMA_VERSION' });
        // A damaged file often opens fine; touching both tables finds most damage now, not mid-query.
        db.prepare('SELECT count(*) FROM docs').get();
        db.prepare("SELECT rowid FROM fts WHERE fts MATCH 'reservoir' LIMIT 1").all();
      } else {
        db.exec(SCHEMA);
        db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('version', ?)").run(SCHEMA_VERSION);
      }
      return new Store(file, db);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  /** Signatures of every document of one mount: uri → [id, sig]. */
  signatures(mount: string): Map<string, { id: number; sig: string }> {
    const map = new Map<string, { id: number; sig: string }>();
    for (const row of this.db.prepare('SELECT id, uri, sig FROM docs WHERE mount = ?').iterate(mount) as IterableIterator<{ id: number; uri: string; sig: string }>) {
      map.set(row.uri, { id: row.id, sig: row.sig });
    }
    return map;
  }

  /** Writes documents and removals in one transaction. */
  write(docs: readonly NewDoc[], removals: readonly string[]): void {
    const findId = this.db.prepare('SELECT id FROM docs WHERE uri = ?').pluck();
    const deleteDoc = this.db.prepare('DELETE FROM docs WHERE id = ?');
    const deleteFts = this.db.prepare('DELETE FROM fts WHERE rowid = ?');
    const insertDoc = this.db.prepare(
      'INSERT INTO docs (uri, mount, name, title, mime, modified, sig, bytes) VALUES (@uri, @mount, @name, @title, @mime, @modified, @sig, @bytes)',
    );
    const insertFts = this.db.prepare('INSERT INTO fts (rowid, name, path, body) VALUES (?, ?, ?, ?)');
    const remove = (uri: string): void => {
      const id = findId.get(uri) as number | undefined;
      if (id === undefined) return;
      deleteFts.run(id);
      deleteDoc.run(id);
    };
    this.db.transaction(() => {
      for (const uri of removals) remove(uri);
      for (const doc of docs) {
        remove(doc.uri);
        const { lastInsertRowid } = insertDoc.run({
          uri: doc.uri,
          mount: doc.mount,
          name: doc.name,
          title: doc.title ?? null,
          mime: doc.mime ?? null,
          modified: doc.modified ?? null,
          sig: doc.sig,
          bytes: doc.bytes,
        });
        insertFts.run(lastInsertRowid, doc.fields.name, doc.fields.path, doc.fields.body);
      }
    }).immediate();
  }

  /** The URIs of documents at `uri` or under `uri/` (a directory that went away). */
  under(uri: string): string[] {
    const prefix = uri.endsWith('/') ? uri : `${uri}/`;
    return this.db.prepare('SELECT uri FROM docs WHERE uri = ? OR (uri >= ? AND uri < ?)').pluck().all(uri, prefix, `${prefix.slice(0, -1)}0`) as string[];
  }

  /** Removes every document of mounts not in `mounts` (sources no longer served). */
  keepMounts(mounts: readonly string[]): void {
    const stale = (this.db.prepare('SELECT DISTINCT mount FROM docs').pluck().all() as string[]).filter((m) => !mounts.includes(m));
    for (const mount of stale) {
      const ids = this.db.prepare('SELECT id FROM docs WHERE mount = ?').pluck().all(mount) as number[];
      const deleteFts = this.db.prepare('DELETE FROM fts WHERE rowid = ?');
      this.db.transaction(() => {
        for (const id of ids) deleteFts.run(id);
        this.db.prepare('DELETE FROM docs WHERE mount = ?').run(mount);
      }).immediate();
    }
  }

  isEmpty(): boolean {
    return this.db.prepare('SELECT 1 FROM docs LIMIT 1').get() === undefined;
  }

  /** Documents and indexed text bytes. */
  totals(): { docs: number; bytes: number } {
    const row = this.db.prepare('SELECT count(*) AS docs, coalesce(sum(bytes), 0) AS bytes FROM docs').get() as { docs: number; bytes: number };
    return row;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
