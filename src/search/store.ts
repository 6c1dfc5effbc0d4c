/**
 * The on-disk index: one SQLite file per set of sources. `docs` holds one row per resource — what a
 * hit shows and what change detection compares (the signature) — and points at the text it holds
 * in `blobs`. A text is stored once however many resources share it: a git blob listed at several
 * paths is keyed by its blob id (`ResourceInfo.contentId`) and counted (`refs`); any other text is
 * its resource's own, keyless (found through the document: its URI is stored, and indexed, once).
 * `mounts` lists the sources documents were written for; a source's documents are a range of the
 * URI index (they lie under its root), so they need no index of their own. Two contentless FTS5 tables (`content=''`, `contentless_delete=1`) index
 * them: `texts` (one row per blob) and `names` (name and path, one row per resource), so no text
 * is ever stored twice — snippets are cut from the source when a hit is shown. WAL mode: readers
 * never wait for the writer, and SQLite's own locks keep two processes sharing a state directory
 * from corrupting it.
 *
 * A file that is not a SQLite database, is corrupt, or was written by another schema version is
 * deleted and rebuilt with one log line, never a crash.
 */
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import { loadSqliteDriver } from '../core/sqlite-driver.js';
import type { Logger } from '../core/log.js';
import { containerSpan, type DocRange, type Stored, type StoredPage } from './backend.js';

/** Bumped whenever the schema or the tokenizer changes: an index of another version is rebuilt. */
export const SCHEMA_VERSION = '4';

/** Sorts after every string that starts with the same prefix (UTF-8 order: U+10FFFF's bytes). */
const AFTER_ALL = '\u{10ffff}';

export interface DocRow {
  id: number;
  uri: string;
  mount: string;
  name: string;
  title: string | null;
  mime: string | null;
  modified: string | null;
  sig: string;
}

/** The text a document holds. */
export interface DocText {
  /** `id:CONTENTID` for content-addressed text (shared, written once), `uri:URI` for a resource's own. */
  key: string;
  /** The text as the tokenizer should see it (CJK segmented); undefined when the key is known to be stored. */
  body?: string;
  /** Bytes of the original text. */
  bytes: number;
}

export interface NewDoc {
  uri: string;
  mount: string;
  name: string;
  title?: string | undefined;
  mime?: string | undefined;
  modified?: string | undefined;
  sig: string;
  /** Its text; absent when only the name and path are indexed. */
  text?: DocText;
  /** Name and path as the tokenizer should see them (CJK already segmented). */
  fields: { name: string; path: string };
}

/** What the writer has done since the store was opened. */
export interface StoreStats {
  /** Texts written to the full-text index (a shared text counts once). */
  blobsWritten: number;
  /** Documents (resources) written. */
  docsWritten: number;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS blobs (
  id INTEGER PRIMARY KEY,
  key TEXT,
  bytes INTEGER NOT NULL,
  refs INTEGER NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS blobs_key ON blobs (key) WHERE key IS NOT NULL;
CREATE TABLE IF NOT EXISTS docs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  uri TEXT NOT NULL UNIQUE,
  mount TEXT NOT NULL,
  name TEXT NOT NULL,
  title TEXT,
  mime TEXT,
  modified TEXT,
  sig TEXT NOT NULL,
  blob INTEGER
);
CREATE INDEX IF NOT EXISTS docs_blob ON docs (blob, id) WHERE blob IS NOT NULL;
CREATE TABLE IF NOT EXISTS mounts (root TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE VIRTUAL TABLE IF NOT EXISTS texts USING fts5(
  body,
  content = '', contentless_delete = 1,
  tokenize = 'unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE IF NOT EXISTS names USING fts5(
  name, path,
  content = '', contentless_delete = 1,
  tokenize = 'unicode61 remove_diacritics 2'
);`;

export class Store {
  readonly stats: StoreStats = { blobsWritten: 0, docsWritten: 0 };
  private readonly statements = new Map<string, Database.Statement>();
  private mounts: Set<string> | undefined;

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
      logger.warn(
        { file, err: error },
        `search index ${file} is unusable (${describe(error)}); rebuilding it`,
      );
      Store.remove(file);
      return Store.tryOpen(file);
    }
  }

  /** Deletes an index file and its WAL companions. */
  static remove(file: string): void {
    for (const suffix of ['', '-wal', '-shm', '-journal'])
      rmSync(`${file}${suffix}`, { force: true });
  }

  private static tryOpen(file: string): Store {
    const Driver = loadSqliteDriver();
    const db = new Driver(file, { timeout: 10_000 });
    try {
      // The index holds the words of every file: readable by the owner only (SQLite gives its WAL
      // and shared-memory files the database file's permissions).
      chmodSync(file, 0o600);
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      const hasMeta =
        db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get() !==
        undefined;
      if (hasMeta) {
        const version = (
          db.prepare("SELECT value FROM meta WHERE key = 'version'").get() as
            { value: string } | undefined
        )?.value;
        if (version !== SCHEMA_VERSION)
          throw Object.assign(
            new Error(`index schema version ${version ?? 'none'}, expected ${SCHEMA_VERSION}`),
            { code: 'SQLITE_SCHEMA_VERSION' },
          );
        // A damaged file often opens fine; touching both tables finds most damage now, not mid-query.
        db.prepare('SELECT count(*) FROM docs').get();
        db.prepare('SELECT count(*) FROM blobs').get();
        db.prepare("SELECT rowid FROM texts WHERE texts MATCH 'reservoir' LIMIT 1").all();
        db.prepare("SELECT rowid FROM names WHERE names MATCH 'reservoir' LIMIT 1").all();
      } else {
        db.exec(SCHEMA);
        db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('version', ?)").run(
          SCHEMA_VERSION,
        );
      }
      return new Store(file, db);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  /** The id and signature stored for each of `uris`, in order (null where none is stored). */
  stored(uris: readonly string[]): (Stored | null)[] {
    const find = this.statement('SELECT id, sig FROM docs WHERE uri = ?');
    return uris.map((uri) => (find.get(uri) as Stored | undefined) ?? null);
  }

  /** The highest document id given so far (AUTOINCREMENT: none is given twice). */
  lastDocId(): number {
    return this.statement('SELECT coalesce(max(id), 0) FROM docs').pluck().get() as number;
  }

  /** Up to `limit` of the documents of `range` with ids up to `upTo`, in URI order after `after`. */
  storedPage(range: DocRange, upTo: number, after: string | undefined, limit: number): StoredPage {
    const [from, to] = uriRange(range);
    const mount = 'mount' in range ? [range.mount] : [];
    const rows = this.statement(
      `SELECT id, uri FROM docs WHERE uri ${after === undefined ? '>=' : '>'} ? AND uri < ?${mount.length > 0 ? ' AND mount = ?' : ''} AND id <= ? ORDER BY uri LIMIT ?`,
    ).all(after ?? from, to, ...mount, upTo, limit) as { id: number; uri: string }[];
    return rows.length < limit ? { docs: rows } : { docs: rows, last: rows[rows.length - 1]!.uri };
  }

  /** Whether a text is stored under `key` (a shared text need not be read again). */
  hasText(key: string): boolean {
    return this.findBlob(key) !== undefined;
  }

  /**
   * The stored text of `key`: a shared text by its key; a resource's own (`uri:URI`, keyless: its
   * URI is already stored, and indexed, in `docs`) through the document that holds it.
   */
  private findBlob(key: string): number | undefined {
    if (key.startsWith('uri:'))
      return this.statement(
        'SELECT b.id FROM docs d JOIN blobs b ON b.id = d.blob WHERE d.uri = ? AND b.key IS NULL',
      )
        .pluck()
        .get(key.slice(4)) as number | undefined;
    return this.statement('SELECT id FROM blobs WHERE key = ? AND key IS NOT NULL')
      .pluck()
      .get(key) as number | undefined;
  }

  /**
   * Writes documents and removals in one transaction. A text whose last document goes is removed
   * at the end, so a document of the same batch may still take it up. Each document costs one
   * lookup of its URI (what it replaces, and the text it held) and, in a fresh build, three
   * inserts: its text's row, the text, the document and its name.
   */
  write(docs: readonly NewDoc[], removals: readonly string[]): void {
    const findDoc = this.statement('SELECT id, blob FROM docs WHERE uri = ?');
    const ownBlob = this.statement('SELECT key IS NULL FROM blobs WHERE id = ?').pluck();
    const deleteDoc = this.statement('DELETE FROM docs WHERE id = ?');
    const deleteName = this.statement('DELETE FROM names WHERE rowid = ?');
    const insertBlob = this.statement('INSERT INTO blobs (key, bytes, refs) VALUES (?, ?, ?)');
    const updateBlob = this.statement('UPDATE blobs SET bytes = ? WHERE id = ?');
    const addRef = this.statement('UPDATE blobs SET refs = refs + ? WHERE id = ?');
    const deleteText = this.statement('DELETE FROM texts WHERE rowid = ?');
    const insertText = this.statement('INSERT INTO texts (rowid, body) VALUES (?, ?)');
    const insertDoc = this.statement(
      'INSERT INTO docs (uri, mount, name, title, mime, modified, sig, blob) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    );
    const insertName = this.statement('INSERT INTO names (rowid, name, path) VALUES (?, ?, ?)');
    const insertMount = this.statement('INSERT OR IGNORE INTO mounts (root) VALUES (?)');
    const mounts = this.knownMounts();
    const released = new Set<number>();
    type Found = { id: number; blob: number | null } | undefined;
    const drop = (found: Found): void => {
      if (found === undefined) return;
      deleteName.run(found.id);
      deleteDoc.run(found.id);
      if (found.blob !== null) {
        addRef.run(-1, found.blob);
        released.add(found.blob);
      }
    };
    /**
     * The blob holding `text` for the document replacing `found`, with the document's reference
     * counted: found (and, for a resource's own text, rewritten) or written.
     */
    const blobOf = (doc: NewDoc, text: DocText, found: Found): number => {
      const shared = !text.key.startsWith('uri:');
      // A resource's own text is the keyless blob its document holds: known from the lookup of
      // the document already made.
      const id =
        text.key !== `uri:${doc.uri}`
          ? this.findBlob(text.key)
          : found !== undefined && found.blob !== null && ownBlob.get(found.blob) === 1
            ? found.blob
            : undefined;
      if (id !== undefined && (shared || text.body === undefined)) {
        addRef.run(1, id);
        return id;
      }
      if (text.body === undefined) throw new Error(`search index: no stored text for ${text.key}`);
      let blob = id;
      if (blob === undefined)
        // Written with this document's reference already counted.
        blob = Number(insertBlob.run(shared ? text.key : null, text.bytes, 1).lastInsertRowid);
      else {
        deleteText.run(blob);
        updateBlob.run(text.bytes, blob);
        addRef.run(1, blob);
      }
      insertText.run(blob, text.body);
      this.stats.blobsWritten += 1;
      return blob;
    };
    this.db
      .transaction(() => {
        for (const uri of removals) drop(findDoc.get(uri) as Found);
        for (const doc of docs) {
          const found = findDoc.get(doc.uri) as Found;
          const blob = doc.text === undefined ? null : blobOf(doc, doc.text, found);
          drop(found);
          const { lastInsertRowid } = insertDoc.run(
            doc.uri,
            doc.mount,
            doc.name,
            doc.title ?? null,
            doc.mime ?? null,
            doc.modified ?? null,
            doc.sig,
            blob,
          );
          insertName.run(lastInsertRowid, doc.fields.name, doc.fields.path);
          if (!mounts.has(doc.mount)) {
            insertMount.run(doc.mount);
            mounts.add(doc.mount);
          }
          this.stats.docsWritten += 1;
        }
        this.dropUnused(released);
      })
      .immediate();
  }

  /** The URIs of documents at `uri` or under `uri/` (a directory that went away). */
  under(uri: string): string[] {
    const [from, to] = uriRange({ under: uri });
    return this.statement('SELECT uri FROM docs WHERE uri = ? OR (uri >= ? AND uri < ?)')
      .pluck()
      .all(uri, from, to) as string[];
  }

  /** Removes every document of mounts not in `mounts` (sources no longer served). */
  keepMounts(mounts: readonly string[]): void {
    const stale = [...this.knownMounts()].filter((m) => !mounts.includes(m));
    for (const mount of stale) {
      const [from, to] = uriRange({ mount });
      const uris = this.db
        .prepare('SELECT uri FROM docs WHERE uri >= ? AND uri < ? AND mount = ?')
        .pluck()
        .all(from, to, mount) as string[];
      this.write([], uris);
      this.db.prepare('DELETE FROM mounts WHERE root = ?').run(mount);
      this.mounts?.delete(mount);
    }
  }

  isEmpty(): boolean {
    return this.db.prepare('SELECT 1 FROM docs LIMIT 1').get() === undefined;
  }

  /** Documents, and bytes of text indexed (a shared text counted once). */
  totals(): { docs: number; bytes: number; blobs: number } {
    const docs = this.db.prepare('SELECT count(*) FROM docs').pluck().get() as number;
    const { blobs, bytes } = this.db
      .prepare('SELECT count(*) AS blobs, coalesce(sum(bytes), 0) AS bytes FROM blobs')
      .get() as { blobs: number; bytes: number };
    return { docs, bytes, blobs };
  }

  /** The mounts documents were written for (read once, then kept up to date). */
  private knownMounts(): Set<string> {
    this.mounts ??= new Set(this.db.prepare('SELECT root FROM mounts').pluck().all() as string[]);
    return this.mounts;
  }

  /** Removes the texts no document holds any more. */
  private dropUnused(candidates: ReadonlySet<number>): void {
    const refs = this.statement('SELECT refs FROM blobs WHERE id = ?').pluck();
    const deleteBlob = this.statement('DELETE FROM blobs WHERE id = ?');
    const deleteText = this.statement('DELETE FROM texts WHERE rowid = ?');
    for (const id of candidates) {
      const count = refs.get(id) as number | undefined;
      if (count === undefined || count > 0) continue;
      deleteText.run(id);
      deleteBlob.run(id);
    }
  }

  /** A prepared statement, compiled once per store. */
  private statement(sql: string): Database.Statement {
    let found = this.statements.get(sql);
    if (found === undefined) {
      found = this.db.prepare(sql);
      this.statements.set(sql, found);
    }
    return found;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

/**
 * The URIs `range` spans, [from, to): a mount's documents lie under its root, a container's under
 * `URI/` — a range of the URI index, so neither needs an index of its own.
 */
function uriRange(range: DocRange): [string, string] {
  return 'mount' in range
    ? [range.mount, `${range.mount}${AFTER_ALL}`]
    : containerSpan(range.under);
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
