/**
 * A hit as the caller sees it: the row's document, and a snippet cut from what the resource reads
 * now (its text, or a document's rendition, whose part markers say where the match lies) — never
 * from the index, so both index engines show the same snippet for the same document.
 */
import { isReservoirError } from '../core/errors.js';
import type { Registry } from '../core/registry.js';
import type { CallContext, Provider } from '../core/types.js';
import { partAt, snippetOf, type Snippet } from './document.js';
import type { ParsedQuery } from './query.js';
import type { Row } from './rows.js';

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

/**
 * The hit of `row`, with its snippet for the words of `parsed`; undefined when its source no longer
 * serves it (deleted, or skipped since it was indexed — a secret once served, before the catch-up
 * removes it): the index may lag the source, a hit never shows what a read would not.
 */
export async function hitOf(
  registry: Registry,
  mounts: readonly Provider[],
  row: Row,
  parsed: ParsedQuery,
  ctx: CallContext,
): Promise<SearchHit | undefined> {
  let snippet: Snippet = { text: '', highlights: [] };
  let part: string | undefined;
  try {
    const result = await registry.read(row.uri, ctx);
    const first = result.contents[0];
    if (first !== undefined && 'text' in first && first.mimeType !== 'inode/directory') {
      snippet = snippetOf(first.text, parsed.terms);
      // A document's snippet is cut from its rendition, whose markers say where it lies.
      if (snippet.at !== undefined && registry.rendersAsText(row.mime ?? undefined, row.uri))
        part = partAt(first.text, snippet.at);
    }
  } catch (error) {
    if (!isReservoirError(error)) throw error;
    if (error.code === 'not_found') return undefined;
    // Unreadable as such (a templated named query needs its parameters, a document cannot be rendered).
  }
  // Where the match lies in the provider's own search text (a named query's description or SQL,
  // not its result), the snippet is cut from that text.
  if (snippet.highlights.length === 0) {
    const own = await searchText(mounts, row.uri, ctx);
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

/** The text a mount's `searchDocuments` gives for `uri`, if it gives one. */
async function searchText(
  mounts: readonly Provider[],
  uri: string,
  ctx: CallContext,
): Promise<string | undefined> {
  const mount = mounts.find((m) => uri.startsWith(m.root));
  if (mount?.searchDocuments === undefined) return undefined;
  return (await mount.searchDocuments({ signal: ctx.signal })).find((doc) => doc.info.uri === uri)
    ?.text;
}
