/**
 * The feeder's writes to a PostgreSQL index. Reads (signatures, stored texts) go through the pool;
 * writes go through the connection that holds this instance's source leases (leases.ts), one
 * transaction per batch: were that connection gone, its leases would be gone with it and the write
 * fails — an instance that lost a source can never write over its new holder's work.
 */
import type PgNs from 'pg';
import {
  containerSpan,
  type DocRange,
  type IndexWriter,
  type Stored,
  type StoredPage,
} from '../backend.js';
import type { NewDoc, StoreStats } from '../store.js';
import { vectorAndLexemes, vectorOf } from './lexemes.js';
import type { Tables } from './schema.js';
import { sizeLexemes } from './sizes.js';

/** SQLSTATE classes of a write that could not be kept: disk full, out of memory, too many connections, read-only. */
const WRITE_FAILURES = /^(53\d{3}|25006)$/;
/** SQLSTATE of a statement stopped by `statement_timeout`. */
const QUERY_CANCELED = '57014';

/** A statement of the feeder ran past its deadline (`statement_timeout`) and PostgreSQL stopped it. */
export class IndexStatementTimeout extends Error {
  constructor(what: string, timeoutMs: number, options: { cause: unknown }) {
    super(
      `search index: ${what} ran past its deadline of ${timeoutMs} ms and was stopped (is a lock held on the index's tables, or PostgreSQL overloaded?)`,
      options,
    );
    this.name = 'IndexStatementTimeout';
  }
}

export class PgWriter implements IndexWriter {
  readonly stats: StoreStats = { blobsWritten: 0, docsWritten: 0 };

  constructor(
    private readonly pool: PgNs.Pool,
    private readonly t: Tables,
    /** The connection holding the leases; throws when there is none. */
    private readonly connection: () => PgNs.ClientBase,
    /** Each statement's deadline (the connections' `statement_timeout`), for errors. */
    private readonly timeoutMs: number,
  ) {}

  async stored(uris: readonly string[]): Promise<(Stored | null)[]> {
    const { rows } = await this.timed('reading the signatures of stored documents', () =>
      this.pool.query<{ id: string; uri: string; sig: string }>(
        `SELECT id, uri, sig FROM ${this.t.docs} WHERE uri = ANY($1::text[])`,
        [uris],
      ),
    );
    const found = new Map(rows.map((r) => [r.uri, { id: Number(r.id), sig: r.sig }]));
    return uris.map((uri) => found.get(uri) ?? null);
  }

  /** The highest document id given so far (an identity column: none is given twice). */
  async lastDocId(): Promise<number> {
    const { rows } = await this.timed('reading the last document id', () =>
      this.pool.query<{ id: string }>(`SELECT coalesce(max(id), 0) AS id FROM ${this.t.docs}`),
    );
    return Number(rows[0]!.id);
  }

  async storedPage(
    range: DocRange,
    upTo: number,
    after: string | undefined,
    limit: number,
  ): Promise<StoredPage> {
    const params: unknown[] = [upTo, limit];
    let where: string;
    if ('mount' in range) {
      params.push(range.mount);
      where = 'mount = $3';
    } else {
      params.push(...containerSpan(range.under));
      where = 'uri >= $3 AND uri < $4';
    }
    if (after !== undefined) {
      params.push(after);
      where += ` AND uri > $${params.length}`;
    }
    const { rows } = await this.timed('reading the stored documents', () =>
      this.pool.query<{ id: string; uri: string }>(
        `SELECT id, uri FROM ${this.t.docs} WHERE ${where} AND id <= $1 ORDER BY uri LIMIT $2`,
        params,
      ),
    );
    const docs = rows.map((r) => ({ id: Number(r.id), uri: r.uri }));
    return docs.length < limit ? { docs } : { docs, last: docs[docs.length - 1]!.uri };
  }

  async hasText(key: string): Promise<boolean> {
    const { rowCount } = await this.timed('looking up a stored text', () =>
      this.pool.query(`SELECT 1 FROM ${this.t.blobs} WHERE key = $1`, [key]),
    );
    return (rowCount ?? 0) > 0;
  }

  async under(uri: string): Promise<string[]> {
    const { rows } = await this.timed(`listing the documents under ${uri}`, () =>
      this.pool.query<{ uri: string }>(
        `SELECT uri FROM ${this.t.docs} WHERE uri = $1 OR (uri >= $2 AND uri < $3)`,
        [uri, ...containerSpan(uri)],
      ),
    );
    return rows.map((r) => r.uri);
  }

  async keepMounts(mounts: readonly string[]): Promise<void> {
    await this.transaction(
      'removing the documents of sources no longer indexed',
      async (client) => {
        const { rows } = await client.query<{ blob: number | null }>(
          `DELETE FROM ${this.t.docs} WHERE mount <> ALL($1::text[]) RETURNING blob`,
          [mounts],
        );
        await this.dropUnused(client, rows);
      },
    );
  }

  isWriteFailure(error: unknown): boolean {
    const code = (error as { code?: unknown } | null)?.code;
    return typeof code === 'string' && WRITE_FAILURES.test(code);
  }

  /**
   * Writes documents and removals in one transaction. A text whose last document goes is removed
   * at the end, so a document of the same batch may still take it up. A document whose stored text
   * went meanwhile (another source's holder dropped a text both shared) is written without it and
   * marked unread, to be read again by the next reconcile.
   */
  async write(docs: readonly NewDoc[], removals: readonly string[]): Promise<void> {
    // The last write of a URI in the batch wins, as one after another would.
    const latest = [...new Map(docs.map((doc) => [doc.uri, doc])).values()];
    const what = `writing ${latest.length} documents and ${removals.length} removals`;
    const bodies = new Map<string, { bytes: number; vector: string }>();
    const shortest = new Map<string, number>();
    for (const doc of latest) {
      if (doc.text?.body === undefined) continue;
      const { bytes } = doc.text;
      const { vector, lexemes } = vectorAndLexemes([{ text: doc.text.body, weight: 'D' }]);
      // With its size as lexemes, so a search finds where its matches begin (sizes.ts).
      bodies.set(doc.text.key, { bytes, vector: `${vector} ${sizeLexemes(bytes)}` });
      for (const lexeme of lexemes) {
        const known = shortest.get(lexeme);
        if (known === undefined || bytes < known) shortest.set(lexeme, bytes);
      }
    }
    // Before the texts, in a statement of its own: a search never sees a text shorter than its
    // words' bounds, and the bounds' rows are locked only while they are lowered.
    if (shortest.size > 0) await this.lowerBounds(shortest);
    await this.transaction(what, async (client) => {
      const gone = [...removals, ...latest.map((d) => d.uri)];
      const released =
        gone.length === 0
          ? []
          : (
              await client.query<{ blob: number | null }>(
                `DELETE FROM ${this.t.docs} WHERE uri = ANY($1::text[]) RETURNING blob`,
                [gone],
              )
            ).rows;
      if (bodies.size > 0) {
        // A shared text (id:) already stored is kept as it is; a resource's own (uri:) is rewritten.
        const written = await client.query(
          `INSERT INTO ${this.t.blobs} (key, bytes, body) SELECT * FROM unnest($1::text[], $2::int[], $3::tsvector[]) ` +
            `ON CONFLICT (key) DO UPDATE SET bytes = excluded.bytes, body = excluded.body WHERE ${this.t.blobs}.key LIKE 'uri:%' RETURNING id`,
          [
            [...bodies.keys()],
            [...bodies.values()].map((b) => b.bytes),
            [...bodies.values()].map((b) => b.vector),
          ],
        );
        this.stats.blobsWritten += written.rowCount ?? 0;
      }
      const keys = [...new Set(latest.flatMap((d) => (d.text === undefined ? [] : [d.text.key])))];
      const ids = new Map<string, number>();
      if (keys.length > 0)
        for (const row of (
          await client.query<{ id: number; key: string }>(
            `SELECT id, key FROM ${this.t.blobs} WHERE key = ANY($1::text[])`,
            [keys],
          )
        ).rows)
          ids.set(row.key, row.id);
      if (latest.length > 0) {
        const blob = (doc: NewDoc): number | null =>
          doc.text === undefined ? null : (ids.get(doc.text.key) ?? null);
        await client.query(
          `INSERT INTO ${this.t.docs} (uri, mount, name, title, mime, modified, sig, blob, names) ` +
            'SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[], $9::tsvector[])',
          [
            latest.map((d) => d.uri),
            latest.map((d) => d.mount),
            latest.map((d) => d.name),
            latest.map((d) => d.title ?? null),
            latest.map((d) => d.mime ?? null),
            latest.map((d) => d.modified ?? null),
            latest.map((d) => (d.text !== undefined && blob(d) === null ? 'unread' : d.sig)),
            latest.map(blob),
            latest.map((d) =>
              vectorOf([
                { text: d.fields.name, weight: 'A' },
                { text: d.fields.path, weight: 'B' },
              ]),
            ),
          ],
        );
      }
      await this.dropUnused(client, released);
    });
    this.stats.docsWritten += latest.length;
  }

  /**
   * Lowers each lexeme's shortest text (sizes.ts) to the sizes given where they are shorter. Only
   * rows lowered are written (and locked, in lexeme order, so writers of two sources never wait
   * on each other in a circle); a bound is never raised — a text removed leaves it low, which
   * costs a search a longer walk, never a hit.
   */
  private async lowerBounds(shortest: ReadonlyMap<string, number>): Promise<void> {
    const client = this.connection();
    await this.timed(`writing the shortest texts of ${shortest.size} lexemes`, () =>
      client.query(
        `INSERT INTO ${this.t.lexemes} AS x (lexeme, bytes) SELECT v.lexeme, v.bytes FROM unnest($1::text[], $2::int[]) v(lexeme, bytes) ` +
          `WHERE NOT EXISTS (SELECT 1 FROM ${this.t.lexemes} k WHERE k.lexeme = v.lexeme AND k.bytes <= v.bytes) ORDER BY v.lexeme ` +
          `ON CONFLICT (lexeme) DO UPDATE SET bytes = least(x.bytes, excluded.bytes)`,
        [[...shortest.keys()], [...shortest.values()]],
      ),
    );
  }

  /** Removes the texts among `released` that no document holds any more. */
  private async dropUnused(
    client: PgNs.ClientBase,
    released: readonly { blob: number | null }[],
  ): Promise<void> {
    const ids = [...new Set(released.flatMap((r) => (r.blob === null ? [] : [r.blob])))];
    if (ids.length === 0) return;
    await client.query(
      `DELETE FROM ${this.t.blobs} b WHERE b.id = ANY($1::bigint[]) AND NOT EXISTS (SELECT 1 FROM ${this.t.docs} d WHERE d.blob = b.id)`,
      [ids],
    );
  }

  private async transaction(
    what: string,
    work: (client: PgNs.ClientBase) => Promise<void>,
  ): Promise<void> {
    const client = this.connection();
    await this.timed(what, async () => {
      await client.query('BEGIN');
      try {
        await work(client);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
  }

  /** Runs `statements`, saying what ran past its deadline when PostgreSQL stopped it. */
  private async timed<T>(what: string, statements: () => Promise<T>): Promise<T> {
    try {
      return await statements();
    } catch (error) {
      if ((error as { code?: unknown } | null)?.code === QUERY_CANCELED)
        throw new IndexStatementTimeout(`${what} (${this.t.namespace})`, this.timeoutMs, {
          cause: error,
        });
      throw error;
    }
  }
}
